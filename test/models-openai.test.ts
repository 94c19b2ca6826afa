/**
 * Issue 17: the OpenAI-compatible backend, with the real `openai` client against the scripted
 * server's `/v1` routes.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateText } from '../src/core/chat.js';
import { SqlrecallError } from '../src/core/errors.js';
import {
  buildClassifyMessages,
  buildExtractMessages,
  buildReconcileMessages,
} from '../src/memory/prompts.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createOpenAiChatModel } from '../src/models/openai/chat-model.js';
import { createOpenAiClient, listOpenAiModels } from '../src/models/openai/client.js';
import { createOpenAiEmbeddingModel } from '../src/models/openai/embedding-model.js';
import { PURPOSE_HEADER } from '../src/models/purpose.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

let server: ScriptedOllama;
let baseUrl: string;

beforeAll(async () => {
  server = await startScriptedOllama();
  baseUrl = `${server.url}/v1`;
});
afterAll(() => server.close());
beforeEach(() => {
  server.reset();
  server.setRejectResponseFormat(false);
});

const schema = { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] };

describe('OpenAI-compatible chat model', () => {
  it('streams tokens, reports finish reason and usage, sends purpose as a header only', async () => {
    server.enqueue('SELECT count(*) FROM customers');
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    const tokens: string[] = [];
    const result = await generateText(
      chat,
      {
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: 'How many?' },
        ],
        purpose: 'sql',
        maxTokens: 77,
      },
      { onToken: (t) => tokens.push(t) },
    );
    expect(result.text).toBe('SELECT count(*) FROM customers');
    expect(tokens.length).toBeGreaterThan(1);
    expect(tokens.join('')).toBe(result.text);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.completionTokens).toBeGreaterThan(0);
    expect(result.usage.promptTokens).toBeGreaterThan(0);
    const [recorded] = server.requests.filter((r) => r.endpoint === 'v1-chat');
    expect(recorded!.headers[PURPOSE_HEADER]).toBe('sql');
    expect(recorded!.chat!.purpose).toBe('sql');
    const body = recorded!.body as Record<string, unknown>;
    expect(JSON.stringify(body.messages)).not.toMatch(/purpose/i);
    expect(body).toMatchObject({ stream: true, max_tokens: 77, temperature: 0, seed: 42 });
    expect(body.stream_options).toEqual({ include_usage: true });
    expect(body).not.toHaveProperty('response_format');
  });

  it('maps finish_reason length', async () => {
    server.enqueue({ text: 'SELECT a, b', doneReason: 'length' });
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    const result = await generateText(chat, { messages: [{ role: 'user', content: 'x' }], maxTokens: 5 });
    expect(result.finishReason).toBe('length');
    expect(result.usage.completionTokens).toBe(5);
  });

  it('sends a JSON schema as response_format', async () => {
    server.enqueue('{"kind":"question"}');
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    const result = await generateText(chat, { messages: [{ role: 'user', content: 'x' }], format: schema });
    expect(result.text).toBe('{"kind":"question"}');
    const request = server.chatRequests()[0]!;
    expect(request.responseFormat).toEqual({ type: 'json_schema', json_schema: { name: 'reply', schema } });
    expect(request.format).toEqual(schema);
  });

  it('falls back to the schema in the prompt when the server rejects response_format, and remembers it', async () => {
    server.setRejectResponseFormat(true);
    server.enqueue('{"kind":"question"}', '{"kind":"neither"}');
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    const messages = [
      { role: 'system' as const, content: 'Classify.' },
      { role: 'user' as const, content: 'hi' },
    ];
    expect((await generateText(chat, { messages, format: schema })).text).toBe('{"kind":"question"}');
    expect((await generateText(chat, { messages, format: schema })).text).toBe('{"kind":"neither"}');
    const v1 = server.requests.filter((r) => r.endpoint === 'v1-chat');
    // first call: rejected with response_format, retried without; second call: never sent again
    expect(v1.map((r) => 'response_format' in (r.body as object))).toEqual([true, false, false]);
    const fallback = server.chatRequests()[0]!;
    expect(fallback.messages[0]!.content).toContain('Classify.');
    expect(fallback.messages[0]!.content).toContain('"required":["kind"]');
  });

  it('maps a missing model, an unreachable server and an abort', async () => {
    const missing = createOpenAiChatModel({ baseUrl, model: 'nope:1b' });
    await expect(generateText(missing, { messages: [{ role: 'user', content: 'x' }] })).rejects.toMatchObject(
      {
        code: 'model_missing',
      },
    );
    const stopped = await startScriptedOllama();
    await stopped.close();
    const down = createOpenAiChatModel({ baseUrl: `${stopped.url}/v1`, model: 'm' });
    const error = await generateText(down, { messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(error).toBeInstanceOf(SqlrecallError);
    expect(error.code).toBe('model_unreachable');
    expect(error.message).toContain('connection refused');
    expect(error.message).toContain('SQLRECALL_BASE_URL');

    server.enqueue({ text: 'a b c d e f g h', chunkDelayMs: 200 });
    const controller = new AbortController();
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    const pending = generateText(
      chat,
      { messages: [{ role: 'user', content: 'x' }] },
      { signal: controller.signal, onToken: () => controller.abort(new Error('stop now')) },
    );
    await expect(pending).rejects.toThrow('stop now');
  });

  it('maps an HTTP 500 to model_output and never prints the API key', async () => {
    server.failNext('v1-chat', { status: 500, error: 'boom' });
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b', apiKey: 'sk-secret-123456' });
    const error = await generateText(chat, { messages: [{ role: 'user', content: 'x' }] }).catch((e) => e);
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('HTTP 500');
    expect(JSON.stringify({ m: error.message, d: error.details })).not.toContain('sk-secret');
    const recorded = server.requests.find((r) => r.endpoint === 'v1-chat')!;
    expect(recorded.headers.authorization).toBe('Bearer sk-secret-123456');
  });
});

describe('OpenAI-compatible embeddings and model list', () => {
  it('embeds (base64 transport) exactly like /api/embed and probes the dimension', async () => {
    const embedder = createOpenAiEmbeddingModel({ baseUrl, model: 'all-minilm', batchSize: 2 });
    const vectors = await embedder.embed(['one', 'two', 'three']);
    expect(vectors).toHaveLength(3);
    const expected = hashEmbedding('two', 384);
    for (const [i, x] of vectors[1]!.entries()) expect(x).toBeCloseTo(expected[i]!, 5);
    expect(await embedder.dimensions()).toBe(384);
    expect(server.requests.filter((r) => r.endpoint === 'v1-embeddings')).toHaveLength(2);
  });

  it('lists models with the context length when reported', async () => {
    const models = await listOpenAiModels(createOpenAiClient({ baseUrl }), baseUrl);
    expect(models).toEqual([
      { id: 'qwen2.5-coder:7b', contextLength: 32768, contextSource: 'context_length' },
      { id: 'all-minilm:latest' },
    ]);
  });
});

describe('purpose travels as a header, never in the prompt', () => {
  it('the Ollama backend sends X-Sqlrecall-Purpose and the scripted server routes by it', async () => {
    server.enqueue('{"kind":"question"}');
    const chat = createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 });
    await generateText(chat, { messages: buildClassifyMessages('hello'), purpose: 'memory-classify' });
    const recorded = server.requests.find((r) => r.endpoint === 'chat')!;
    expect(recorded.headers[PURPOSE_HEADER]).toBe('memory-classify');
    expect(recorded.chat!.purpose).toBe('memory-classify');
    expect(JSON.stringify(recorded.body)).not.toMatch(/purpose/i);
  });

  it('memory prompts carry no purpose line', () => {
    const all = [
      ...buildClassifyMessages('always show prices in euros'),
      ...buildExtractMessages({ message: 'x', schemaText: '', maxFacts: 2 }),
      ...buildReconcileMessages({ kind: 'term', text: 't', sql: null }, []),
    ];
    for (const message of all) expect(message.content).not.toMatch(/purpose/i);
  });

  it('without the header the scripted server still recognises purpose from content', async () => {
    server.enqueue('ok');
    const chat = createOpenAiChatModel({ baseUrl, model: 'qwen2.5-coder:7b' });
    await generateText(chat, {
      messages: [
        { role: 'system', content: 'purpose: legacy' },
        { role: 'user', content: 'x' },
      ],
    });
    expect(server.chatRequests()[0]!.purpose).toBe('legacy');
  });
});
