/**
 * A reply is complete only when the server says so, on both backends and for every server family:
 * a stream cut before its completion signal, an error event in any of the forms local servers use,
 * or a stream that goes silent fails the call (exit 5) with the server's own message; nothing of
 * such a reply comes back as text. Scripted transcripts over the real `openai` and `ollama` clients.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateText } from '../src/core/chat.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { ChatModel } from '../src/core/ports.js';
import { withFirstTokenTimeout } from '../src/models/first-token-timeout.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createOpenAiChatModel } from '../src/models/openai/chat-model.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import {
  ndjsonReply,
  type OpenAiFamily,
  sseData,
  sseErrorEvent,
  sseReply,
} from './support/scripted/transcripts.js';

const FAMILIES: OpenAiFamily[] = ['llama.cpp', 'vllm', 'lmstudio', 'localai', 'ollama-v1'];
const CUT = ['SELECT count(*) ', 'FROM orders ', "WHERE status = 'pending'"];
const WHOLE = [...CUT, ' AND total_amount > 5000'];
const ask = { messages: [{ role: 'user' as const, content: 'how many pending orders over 5000' }] };

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

async function failure(chat: ChatModel): Promise<SqlrecallError> {
  const error = await generateText(chat, ask).then(
    (result) => new Error(`expected a failure, got a reply: ${JSON.stringify(result.text)}`),
    (e: unknown) => e,
  );
  if (!(error instanceof SqlrecallError)) throw error;
  return error;
}

describe.each(FAMILIES)('OpenAI-compatible stream endings: %s', (family) => {
  it('a whole reply with finish_reason and [DONE] is the answer', async () => {
    server.enqueue({ raw: sseReply(family, { content: WHOLE }) });
    const result = await generateText(openAi(), ask);
    expect(result.text).toBe(WHOLE.join(''));
    expect(result.finishReason).toBe('stop');
  });

  it('a stream closed after part of the SQL, with no finish_reason and no [DONE], is a model failure', async () => {
    server.enqueue({ raw: sseReply(family, { content: CUT, complete: false }) });
    const error = await failure(openAi());
    expect(error.code).toBe('model_output');
    expect(error.exitCode).toBe(5);
    expect(error.message).toMatch(/before it was complete/);
    expect(error.message).not.toContain("'pending'");
  });

  it('a dropped connection mid-reply is a model failure', async () => {
    server.enqueue({ raw: sseReply(family, { content: CUT, complete: false, after: 'destroy' }) });
    const error = await failure(openAi());
    expect(['model_output', 'model_unreachable']).toContain(error.code);
    expect(error.exitCode).toBe(5);
  });

  it("an error event mid-reply fails with the server's own message", async () => {
    server.enqueue({
      raw: sseReply(family, {
        content: CUT,
        complete: false,
        tail: [sseErrorEvent(family, 'CUDA error: out of memory')],
      }),
    });
    const error = await failure(openAi());
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('CUDA error: out of memory');
    expect(error.message).toContain('discarded');
  });

  it('[DONE] ends the reply at once even when the server keeps the connection open', async () => {
    server.enqueue({ raw: { ...sseReply(family, { content: WHOLE }), after: 'open' } });
    const started = performance.now();
    const result = await generateText(openAi(), ask);
    expect(result.text).toBe(WHOLE.join(''));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a stream that goes silent after its first tokens fails within the idle deadline, naming the setting', async () => {
    server.enqueue({ raw: sseReply(family, { content: CUT, complete: false, after: 'open' }) });
    const started = performance.now();
    const error = await failure(withFirstTokenTimeout(openAi(), 5_000, 300));
    expect(error.code).toBe('model_timeout');
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('SQLRECALL_MODEL_IDLE_TIMEOUT_MS');
    expect(performance.now() - started).toBeLessThan(3_000);
  });

  it('reasoning tokens count as life: a long think before the content is not a first-token timeout', async () => {
    const thoughts = Array.from({ length: 8 }, (_, i) => `step ${i}. `);
    server.enqueue({ raw: sseReply(family, { reasoning: thoughts, content: WHOLE, delayMs: 100 }) });
    const thinking: string[] = [];
    const result = await generateText(withFirstTokenTimeout(openAi(), 400, 5_000), ask, {
      onThinking: (t) => thinking.push(t),
    });
    expect(result.text).toBe(WHOLE.join(''));
    expect(result.thinking).toBe(thoughts.join(''));
    expect(thinking.join('')).toBe(thoughts.join(''));
  });
});

describe('OpenAI-compatible error body shapes', () => {
  it('a data line with a bare {"error": …} object also ends the reply as a failure', async () => {
    server.enqueue({
      raw: {
        parts: [
          sseData({ choices: [{ index: 0, delta: { content: 'SELECT 1' } }] }),
          sseData({ error: 'runner crashed' }),
        ],
      },
    });
    const error = await failure(openAi());
    expect(error.message).toContain('runner crashed');
  });
});

describe('Ollama native stream endings', () => {
  it('a whole reply ends with done: true', async () => {
    server.enqueue({ raw: ndjsonReply({ content: WHOLE }) });
    expect((await generateText(ollama(), ask)).text).toBe(WHOLE.join(''));
  });

  it('a stream without done: true is a model failure', async () => {
    server.enqueue({ raw: ndjsonReply({ content: CUT, complete: false }) });
    const error = await failure(ollama());
    expect(error.code).toBe('model_output');
    expect(error.exitCode).toBe(5);
    expect(error.message).toContain('discarded');
  });

  it("an error line mid-reply fails with the server's own message", async () => {
    server.enqueue({
      raw: ndjsonReply({
        content: CUT,
        complete: false,
        tail: [{ error: 'llama runner process has terminated' }],
      }),
    });
    const error = await failure(ollama());
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('llama runner process has terminated');
  });

  it('done: true ends the reply at once even when the connection stays open', async () => {
    server.enqueue({ raw: ndjsonReply({ content: WHOLE, after: 'open' }) });
    const started = performance.now();
    expect((await generateText(ollama(), ask)).text).toBe(WHOLE.join(''));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a silent stream fails within the idle deadline; thinking counts as life and stays apart', async () => {
    server.enqueue({ raw: ndjsonReply({ content: CUT, complete: false, after: 'open' }) });
    const error = await failure(withFirstTokenTimeout(ollama(), 5_000, 300));
    expect(error.code).toBe('model_timeout');
    expect(error.message).toContain('SQLRECALL_MODEL_IDLE_TIMEOUT_MS');

    const thoughts = Array.from({ length: 6 }, (_, i) => `hmm ${i} `);
    server.enqueue({ raw: ndjsonReply({ thinking: thoughts, content: WHOLE, delayMs: 100 }) });
    const result = await generateText(withFirstTokenTimeout(ollama(), 350, 5_000), ask);
    expect(result.text).toBe(WHOLE.join(''));
    expect(result.thinking).toBe(thoughts.join(''));
  });

  it('the first-token deadline names its setting', async () => {
    server.enqueue({ text: 'SELECT 1', delayMs: 1_000 });
    const error = await failure(withFirstTokenTimeout(ollama(), 200, 5_000));
    expect(error.code).toBe('model_timeout');
    expect(error.message).toContain('SQLRECALL_MODEL_TIMEOUT_MS');
  });
});
