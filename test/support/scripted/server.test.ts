import { createHook } from 'node:async_hooks';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOllamaClient } from '../../../src/models/ollama/client.js';
import { NO_REPLY_ERROR, type ScriptedOllama, startScriptedOllama } from './server.js';

describe('scripted Ollama server protocol (real ollama client)', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama({
      chat: (req) =>
        req.purpose === 'answer' ? `answer to: ${req.lastUserMessage}` : `handler ${req.endpoint}`,
    });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const client = () => createOllamaClient({ host: server.url });

  it('answers non-streaming chat (stream: false) with one complete object', async () => {
    server.enqueue({ text: 'SELECT 1', doneReason: 'length' });
    const response = await client().chat({
      model: 'qwen2.5-coder:7b',
      messages: [{ role: 'user', content: 'one' }],
      stream: false,
      options: { num_predict: 7 },
    });
    expect(response.message).toEqual({ role: 'assistant', content: 'SELECT 1' });
    expect(response.done).toBe(true);
    expect(response.done_reason).toBe('length');
    expect(response.eval_count).toBe(7);
    expect(response.prompt_eval_count).toBeGreaterThan(0);
    for (const field of [
      'total_duration',
      'load_duration',
      'prompt_eval_duration',
      'eval_duration',
    ] as const) {
      expect(response[field]).toBeGreaterThan(0);
    }
    expect(server.chatRequests()[0]!.stream).toBe(false);
  });

  it('answers non-streaming generate with response and context', async () => {
    const response = await client().generate({
      model: 'qwen2.5-coder:7b',
      prompt: 'hi',
      system: 'purpose: answer',
      stream: false,
    });
    expect(response.response).toBe('answer to: hi');
    expect(response.done_reason).toBe('stop');
    expect(Array.isArray(response.context)).toBe(true);
    const seen = server.chatRequests()[0]!;
    expect(seen).toMatchObject({
      endpoint: 'generate',
      prompt: 'hi',
      system: 'purpose: answer',
      purpose: 'answer',
    });
    expect(seen.messages).toEqual([
      { role: 'system', content: 'purpose: answer' },
      { role: 'user', content: 'hi' },
    ]);
  });

  it('streams generate in several chunks ending with done', async () => {
    server.enqueue('one two three four');
    const stream = await client().generate({ model: 'qwen2.5-coder:7b', prompt: 'count', stream: true });
    const parts = [];
    for await (const part of stream) parts.push(part);
    expect(parts.length).toBeGreaterThanOrEqual(5);
    expect(parts.map((p) => p.response).join('')).toBe('one two three four');
    expect(parts.slice(0, -1).every((p) => p.done === false)).toBe(true);
    expect(parts.at(-1)).toMatchObject({ done: true, done_reason: 'stop', response: '' });
  });

  it('streams NDJSON by default when stream is absent', async () => {
    server.enqueue('a b');
    const res = await fetch(`${server.url}/api/chat`, {
      method: 'POST',
      body: JSON.stringify({ model: 'qwen2.5-coder:7b', messages: [{ role: 'user', content: 'x' }] }),
    });
    expect(res.headers.get('content-type')).toBe('application/x-ndjson');
    const lines = (await res.text())
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.message.content)).toEqual(['a ', 'b', '']);
    expect(lines.at(-1)).toMatchObject({ model: 'qwen2.5-coder:7b', done: true, done_reason: 'stop' });
    expect(typeof lines[0].created_at).toBe('string');
  });

  it('uses the queue first, then the handler; recognises purpose from the system prompt', async () => {
    server.enqueue('queued');
    const ask = async (system: string) => {
      const r = await client().chat({
        model: 'qwen2.5-coder:7b',
        messages: [
          { role: 'system', content: system },
          { role: 'user', content: 'q' },
        ],
      });
      return r.message.content;
    };
    expect(server.pendingReplies).toBe(1);
    expect(await ask('You answer.\nPurpose: ANSWER\nBe brief.')).toBe('queued');
    expect(server.pendingReplies).toBe(0);
    expect(await ask('<!-- purpose: answer -->')).toBe('answer to: q');
    expect(await ask('no marker here, purpose is not stated')).toBe('handler chat');
    expect(server.chatRequests().map((r) => r.purpose)).toEqual(['answer', 'answer', undefined]);
  });

  it('answers HTTP 500 "no reply programmed" when nothing is programmed', async () => {
    const bare = await startScriptedOllama();
    try {
      const res = await fetch(`${bare.url}/api/chat`, {
        method: 'POST',
        body: JSON.stringify({ model: 'qwen2.5-coder:7b', messages: [] }),
      });
      expect(res.status).toBe(500);
      expect(await res.json()).toEqual({ error: NO_REPLY_ERROR });
    } finally {
      await bare.close();
    }
  });

  it('answers 404 exactly like Ollama for unknown models on every model endpoint', async () => {
    for (const [path, body] of [
      ['/api/chat', { model: 'x', messages: [] }],
      ['/api/generate', { model: 'x', prompt: '' }],
      ['/api/embed', { model: 'x', input: 'a' }],
      ['/api/show', { model: 'x' }],
    ] as const) {
      const res = await fetch(`${server.url}${path}`, { method: 'POST', body: JSON.stringify(body) });
      expect(res.status).toBe(404);
      expect(await res.text()).toBe('{"error":"model \\"x\\" not found, try pulling it first"}');
    }
  });

  it('refuses chat with an embedding-only model, bad JSON, bad embed input and unknown paths', async () => {
    const post = (path: string, body: string) => fetch(`${server.url}${path}`, { method: 'POST', body });
    const chatEmbed = await post('/api/chat', JSON.stringify({ model: 'all-minilm', messages: [] }));
    expect(chatEmbed.status).toBe(400);
    expect(((await chatEmbed.json()) as { error: string }).error).toContain('does not support chat');
    expect((await post('/api/chat', '{"model": ')).status).toBe(400);
    expect((await post('/api/embed', JSON.stringify({ model: 'all-minilm', input: [1, 2] }))).status).toBe(
      400,
    );
    const unknown = await fetch(`${server.url}/api/nothing`);
    expect(unknown.status).toBe(404);
    expect(await unknown.text()).toBe('404 page not found');
    expect(await (await fetch(server.url)).text()).toBe('Ollama is running');
  });

  it('embeds a single string or a batch; lists and shows models like Ollama', async () => {
    const one = await client().embed({ model: 'all-minilm', input: 'hello' });
    expect(one.embeddings).toHaveLength(1);
    expect(one.embeddings[0]).toHaveLength(384);
    const many = await client().embed({ model: 'all-minilm:latest', input: ['a', 'b', 'c'] });
    expect(many.model).toBe('all-minilm:latest');
    expect(many.embeddings).toHaveLength(3);
    // a chat model embeds too, with its hidden size (as Ollama does)
    expect((await client().embed({ model: 'qwen2.5-coder:7b', input: 'x' })).embeddings[0]).toHaveLength(
      3584,
    );

    const tags = await client().list();
    expect(tags.models.map((m) => m.name)).toEqual(['qwen2.5-coder:7b', 'all-minilm:latest']);
    expect(tags.models[0]).toMatchObject({
      model: 'qwen2.5-coder:7b',
      details: { family: 'qwen2', format: 'gguf' },
    });
    expect(tags.models[0]!.size).toBeGreaterThan(0);
    expect(tags.models[0]!.digest).toMatch(/^[0-9a-f]{64}$/);

    const show = await client().show({ model: 'all-minilm' });
    expect(show.capabilities).toEqual(['embedding']);
    expect(show.model_info).toMatchObject({ 'bert.context_length': 512, 'bert.embedding_length': 384 });
    const chatShow = await client().show({ model: 'qwen2.5-coder:7b' });
    expect(chatShow.capabilities).toContain('completion');
    expect(chatShow.model_info).toMatchObject({
      'general.architecture': 'qwen2',
      'qwen2.context_length': 32768,
    });
    expect((await client().version()).version).toBe('0.12.6');
  });

  it('pulls non-streaming too, and setModels replaces the installed list', async () => {
    expect(await client().pull({ model: 'llama3.2:3b', stream: false })).toEqual({ status: 'success' });
    expect(server.models()).toContain('llama3.2:3b');
    server.setModels(['tiny']);
    expect((await client().list()).models.map((m) => m.name)).toEqual(['tiny:latest']);
    server.setModels(['qwen2.5-coder:7b', 'all-minilm']);
  });

  it('injects failures with failNext and records every request', async () => {
    server.failNext('tags', { status: 502, error: 'bad gateway', count: 2 });
    await expect(client().list()).rejects.toMatchObject({ status_code: 502, error: 'bad gateway' });
    await expect(client().list()).rejects.toMatchObject({ status_code: 502 });
    expect((await client().list()).models.length).toBe(2);
    expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      'GET /api/tags',
      'GET /api/tags',
      'GET /api/tags',
    ]);
    expect(server.requests[0]!.time).toBeLessThanOrEqual(Date.now());
  });

  it('reports a throwing reply handler as HTTP 500 with its message', async () => {
    const broken = await startScriptedOllama({
      chat: () => {
        throw new Error('handler bug');
      },
    });
    try {
      await expect(
        createOllamaClient({ host: broken.url }).chat({ model: 'qwen2.5-coder:7b', messages: [] }),
      ).rejects.toMatchObject({ status_code: 500, error: expect.stringContaining('handler bug') });
    } finally {
      await broken.close();
    }
  });

  it('closes promptly even with a stream in flight, and close is idempotent', async () => {
    const slow = await startScriptedOllama({ chat: () => ({ text: 'a b c d e f', chunkDelayMs: 10_000 }) });
    const stream = await createOllamaClient({ host: slow.url }).chat({
      model: 'qwen2.5-coder:7b',
      messages: [],
      stream: true,
    });
    const reading = (async () => {
      for await (const _ of stream) {
        // keep reading until the server goes away
      }
    })();
    const started = Date.now();
    await Promise.all([slow.close(), slow.close()]);
    expect(Date.now() - started).toBeLessThan(2_000);
    await expect(reading).rejects.toThrow();
  });

  it('reports each response end with its arrival and end times (onResponseEnd)', async () => {
    const ended: { endpoint: string; ms: number }[] = [];
    const timed = await startScriptedOllama({
      chat: () => ({ text: 'SELECT 1', delayMs: 120 }),
      onResponseEnd: (record, arrivedAt, endedAt) =>
        ended.push({ endpoint: record.endpoint, ms: endedAt - arrivedAt }),
    });
    try {
      await createOllamaClient({ host: timed.url }).chat({ model: 'qwen2.5-coder:7b', messages: [] });
      await createOllamaClient({ host: timed.url }).embed({ model: 'all-minilm', input: 'x' });
      await new Promise((r) => setTimeout(r, 20));
      expect(ended.map((e) => e.endpoint)).toEqual(['chat', 'embed']);
      expect(ended[0]!.ms).toBeGreaterThanOrEqual(115);
      expect(ended[1]!.ms).toBeLessThan(ended[0]!.ms);
    } finally {
      await timed.close();
    }
  });

  it('keeps connections open for reuse with keepAliveTimeoutMs 0 (as Ollama), not with the default', async () => {
    const connects = async (options: { keepAliveTimeoutMs?: number }) => {
      const server = await startScriptedOllama(options);
      let count = 0;
      const agent = new Agent({ keepAliveTimeout: 4_000 });
      const hook = createHook({
        init(_id, type) {
          if (type === 'TCPCONNECTWRAP') count += 1;
        },
      }).enable();
      try {
        for (let i = 0; i < 6; i += 1) {
          const res = await undiciFetch(`${server.url}/api/version`, { dispatcher: agent });
          await res.json();
        }
        return count;
      } finally {
        hook.disable();
        await agent.close();
        await server.close();
      }
    };
    expect(await connects({})).toBe(6);
    // undici may open a second connection while the first is being handed back to its pool.
    expect(await connects({ keepAliveTimeoutMs: 0 })).toBeLessThanOrEqual(2);
  });
});
