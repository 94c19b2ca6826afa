/**
 * A chat model streams its reply as parts, on both backends (real `ollama` and `openai` clients
 * over scripted transcripts): text, reasoning and tool-call deltas in the order the server sent
 * them, then exactly one `finish`, last. Stopping the iteration early cancels the request; the
 * deadlines count only the server's silence, not the time the caller holds a part.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { collectReply, generateText } from '../src/core/chat.js';
import type { ChatModel, ChatPart } from '../src/core/ports.js';
import { withFirstTokenTimeout } from '../src/models/first-token-timeout.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createOpenAiChatModel } from '../src/models/openai/chat-model.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { ndjsonReply, sseReply } from './support/scripted/transcripts.js';

const ask = { messages: [{ role: 'user' as const, content: 'how many orders' }] };

let server: ScriptedOllama;
beforeAll(async () => {
  server = await startScriptedOllama();
});
afterAll(() => server.close());
beforeEach(() => server.reset());

const openAi = (): ChatModel =>
  createOpenAiChatModel({ baseUrl: `${server.url}/v1`, model: 'qwen2.5-coder:7b' });
const ollama = (): ChatModel =>
  createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 });
const backends = { openai: openAi, ollama } as const;

async function partsOf(chat: ChatModel): Promise<ChatPart[]> {
  const parts: ChatPart[] = [];
  for await (const part of chat.stream(ask)) parts.push(part);
  return parts;
}

/** Waits until `check` holds (the server notices a closed connection a moment later). */
async function until(check: () => boolean, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('the parts of a reply', () => {
  it('openai: reasoning, then text, then one finish with the usage the server counted', async () => {
    server.enqueue({
      raw: sseReply('llama.cpp', { reasoning: ['think ', 'hard'], content: ['SELECT ', 'count(*)'] }),
    });
    expect(await partsOf(openAi())).toEqual([
      { type: 'reasoning-delta', text: 'think ' },
      { type: 'reasoning-delta', text: 'hard' },
      { type: 'text-delta', text: 'SELECT ' },
      { type: 'text-delta', text: 'count(*)' },
      { type: 'finish', finishReason: 'stop', usage: { promptTokens: 50, completionTokens: 10 } },
    ]);
  });

  it('ollama: thinking, then text, then one finish with the counts of the done line', async () => {
    server.enqueue({ raw: ndjsonReply({ thinking: ['hmm'], content: ['SELECT ', '1'] }) });
    expect(await partsOf(ollama())).toEqual([
      { type: 'reasoning-delta', text: 'hmm' },
      { type: 'text-delta', text: 'SELECT ' },
      { type: 'text-delta', text: '1' },
      { type: 'finish', finishReason: 'stop', usage: { promptTokens: 50, completionTokens: 10 } },
    ]);
  });

  it('openai: structured tool-call deltas arrive as pieces and join per index', async () => {
    server.enqueue({
      raw: sseReply('vllm', {
        toolCalls: [
          { index: 0, id: 'call_1', type: 'function', function: { name: 'run_sql', arguments: '' } },
          { index: 0, function: { arguments: '{"query": "SELECT ' } },
          { index: 0, function: { arguments: '1"}' } },
        ],
        finish: 'tool_calls',
      }),
    });
    const parts = await partsOf(openAi());
    expect(parts.filter((p) => p.type === 'tool-call-delta')).toEqual([
      { type: 'tool-call-delta', index: 0, name: 'run_sql', arguments: '' },
      { type: 'tool-call-delta', index: 0, name: '', arguments: '{"query": "SELECT ' },
      { type: 'tool-call-delta', index: 0, name: '', arguments: '1"}' },
    ]);
    const whole = await collectReply(
      (async function* () {
        yield* parts;
      })(),
    );
    expect(whole.toolCalls).toEqual([{ name: 'run_sql', arguments: '{"query": "SELECT 1"}' }]);
    expect(whole.finishReason).toBe('other');
  });

  it('a stream that ends without its finish part is not a reply', async () => {
    const cut = (async function* (): AsyncGenerator<ChatPart> {
      yield { type: 'text-delta', text: 'SELECT count(*) FROM orders WHERE' };
    })();
    await expect(collectReply(cut)).rejects.toMatchObject({ code: 'model_output' });
  });
});

describe.each(Object.keys(backends) as Array<keyof typeof backends>)('%s: stopping early', (name) => {
  it('cancels the request on the server', async () => {
    server.enqueue({ text: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), chunkDelayMs: 30 });
    const seen: string[] = [];
    for await (const part of backends[name]().stream(ask)) {
      if (part.type === 'text-delta') seen.push(part.text);
      if (seen.length === 2) break;
    }
    expect(seen).toHaveLength(2);
    const request = server.requests.find((r) => r.chat)!;
    await until(() => request.aborted);
    expect(request.aborted).toBe(true);
  });
});

describe.each(Object.keys(backends) as Array<keyof typeof backends>)('%s: deadlines', (name) => {
  it('time the caller holds a part is not the server going silent', async () => {
    server.enqueue({ text: 'SELECT count(*) FROM orders' });
    const chat = withFirstTokenTimeout(backends[name](), 2_000, 100);
    let text = '';
    for await (const part of chat.stream(ask)) {
      if (part.type !== 'text-delta') continue;
      text += part.text;
      await new Promise((resolve) => setTimeout(resolve, 250)); // a slow reader, 2.5× the idle deadline
    }
    expect(text).toBe('SELECT count(*) FROM orders');
  });

  it('a server that goes silent after the first token still fails at the idle deadline', async () => {
    server.enqueue({
      raw:
        name === 'openai'
          ? sseReply('llama.cpp', { content: ['SELECT '], complete: false, after: 'open' })
          : ndjsonReply({ content: ['SELECT '], complete: false, after: 'open' }),
    });
    const started = Date.now();
    await expect(
      generateText(withFirstTokenTimeout(backends[name](), 2_000, 200), ask),
    ).rejects.toMatchObject({
      code: 'model_timeout',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
