/**
 * What real model servers report and how they fail, per family (scripted transcripts over the real
 * `openai` client): the context window the server runs with beats the trained size and
 * SQLRECALL_CONTEXT_LENGTH beats both; a context-exceeded error names the assumed size and the
 * setting; a strict server that forbids `stream_options` gets one retry without it; HTTP 500 on
 * `response_format` falls back to the schema in the prompt; the server's message is shown from
 * every common error body shape.
 */

import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { generateText } from '../src/core/chat.js';
import { SqlrecallError } from '../src/core/errors.js';
import { createOpenAiChatModel } from '../src/models/openai/chat-model.js';
import { createOpenAiClient, listOpenAiModels } from '../src/models/openai/client.js';
import { estimateTokens } from '../src/models/tokens.js';
import { modelProviderFor } from '../src/runtime/models.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { freshPgliteDataDir } from './support/pglite-template.js';
import type { ScriptedChatRequest } from './support/scripted/server.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { jsonError, sseReply } from './support/scripted/transcripts.js';
import { tempDir } from './support/temp-dir.js';

const ask = { messages: [{ role: 'user' as const, content: 'x' }] };
const configFor = (baseUrl: string, env: Record<string, string> = {}) =>
  loadConfig({
    env: { SQLRECALL_PROVIDER: 'openai', SQLRECALL_BASE_URL: baseUrl, ...env },
    cwd: tempDir('sqlrecall-models-cfg-'),
  });

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (!(error instanceof SqlrecallError)) throw error;
  return error;
}

describe('context window: the running size, not the trained size', () => {
  let llama: ScriptedOllama;
  let vllm: ScriptedOllama;
  let props: ScriptedOllama;
  beforeAll(async () => {
    llama = await startScriptedOllama({
      v1ModelEntry: (model, entry) =>
        model.kind === 'chat'
          ? {
              id: entry.id,
              object: 'model',
              owned_by: 'llamacpp',
              meta: { n_ctx: 4096, n_ctx_train: 32768, n_vocab: 151936 },
            }
          : entry,
    });
    vllm = await startScriptedOllama({
      v1ModelEntry: (model, entry) => (model.kind === 'chat' ? { ...entry, max_model_len: 8192 } : entry),
      reportContextLength: false,
    });
    props = await startScriptedOllama({
      reportContextLength: false,
      routes: {
        'GET /props': () => ({ body: { default_generation_settings: { n_ctx: 2048 }, total_slots: 1 } }),
      },
    });
  });
  afterAll(() => Promise.all([llama.close(), vllm.close(), props.close()]));

  it('llama-server: meta.n_ctx (4096), not n_ctx_train (32768)', async () => {
    const models = await listOpenAiModels(
      createOpenAiClient({ baseUrl: `${llama.url}/v1` }),
      `${llama.url}/v1`,
    );
    expect(models[0]).toEqual({ id: 'qwen2.5-coder:7b', contextLength: 4096, contextSource: 'meta.n_ctx' });
    expect(await modelProviderFor(configFor(`${llama.url}/v1`)).contextLength('qwen2.5-coder:7b')).toBe(4096);
  });

  it('vLLM: max_model_len; llama-server without it in /v1/models: /props n_ctx', async () => {
    expect(await modelProviderFor(configFor(`${vllm.url}/v1`)).contextLength('qwen2.5-coder:7b')).toBe(8192);
    expect(await modelProviderFor(configFor(`${props.url}/v1`)).contextLength('qwen2.5-coder:7b')).toBe(2048);
  });

  it('SQLRECALL_CONTEXT_LENGTH always wins over what the server lists', async () => {
    const config = configFor(`${llama.url}/v1`, { SQLRECALL_CONTEXT_LENGTH: '16384' });
    expect(await modelProviderFor(config).contextLength('qwen2.5-coder:7b')).toBe(16384);
  });

  it('a context-exceeded error says which size was assumed and names the setting', async () => {
    const config = configFor(`${llama.url}/v1`);
    await modelProviderFor(config).contextLength('qwen2.5-coder:7b');
    llama.enqueue({
      raw: jsonError(400, {
        error: {
          code: 400,
          message: 'the request exceeds the available context size, try increasing it',
          type: 'exceed_context_size_error',
          n_prompt_tokens: 5210,
          n_ctx: 4096,
        },
      }),
    });
    const error = await failure(generateText(modelProviderFor(config).chatModel(), ask));
    expect(error.message).toContain('exceeds the available context size');
    expect(error.message).toContain('4096 tokens (from meta.n_ctx of /v1/models)');
    expect(error.message).toContain('SQLRECALL_CONTEXT_LENGTH');
  });
});

describe('the server message from every common error body shape', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  it.each([
    [
      'OpenAI',
      { error: { message: 'Invalid value for temperature', type: 'invalid_request_error' } },
      'Invalid value for temperature',
    ],
    [
      'vLLM',
      {
        object: 'error',
        message: "This model's maximum context length is 4096 tokens",
        type: 'BadRequestError',
        code: 400,
      },
      "This model's maximum context length is 4096 tokens",
    ],
    [
      'llama.cpp',
      {
        error: {
          code: 400,
          message: 'the request exceeds the available context size',
          type: 'exceed_context_size_error',
        },
      },
      'exceeds the available context size (exceed_context_size_error)',
    ],
    ['LM Studio', { error: 'Model is unloaded.' }, 'Model is unloaded.'],
    [
      'Ollama /v1',
      { error: { message: 'model requires more system memory', type: 'api_error' } },
      'model requires more system memory',
    ],
    [
      'FastAPI',
      {
        detail: [
          { loc: ['body', 'logit_bias'], msg: 'Extra inputs are not permitted', type: 'extra_forbidden' },
        ],
      },
      'logit_bias: Extra inputs are not permitted',
    ],
  ])('%s', async (_family, body, expected) => {
    server.enqueue({ raw: jsonError(400, body) });
    const chat = createOpenAiChatModel({ baseUrl: `${server.url}/v1`, model: 'qwen2.5-coder:7b' });
    const error = await failure(generateText(chat, ask));
    expect(error.message).toContain(expected);
    expect(error.message).not.toContain('no body');
  });
});

describe('strict and odd servers', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());
  const chat = () => createOpenAiChatModel({ baseUrl: `${server.url}/v1`, model: 'qwen2.5-coder:7b' });
  const bodies = () =>
    server.requests.filter((r) => r.endpoint === 'v1-chat').map((r) => r.body as Record<string, unknown>);

  it('HTTP 422 naming stream_options: one retry without it, remembered', async () => {
    server.enqueue(
      {
        raw: jsonError(422, {
          detail: [
            {
              loc: ['body', 'stream_options'],
              msg: 'Extra inputs are not permitted',
              type: 'extra_forbidden',
            },
          ],
        }),
      },
      'SELECT 1',
      'SELECT 2',
    );
    const model = chat();
    expect((await generateText(model, ask)).text).toBe('SELECT 1');
    expect((await generateText(model, ask)).text).toBe('SELECT 2');
    expect(bodies().map((b) => 'stream_options' in b)).toEqual([true, false, false]);
  });

  it('HTTP 400 that does not name stream_options is not retried', async () => {
    server.enqueue({ raw: jsonError(400, { error: { message: 'bad temperature' } }) });
    await failure(generateText(chat(), ask));
    expect(bodies()).toHaveLength(1);
  });

  it('HTTP 500 on a request with response_format: retried once with the schema in the prompt', async () => {
    const schema = { type: 'object', properties: { kind: { type: 'string' } }, required: ['kind'] };
    server.enqueue(
      { raw: jsonError(500, { error: { message: 'Internal Server Error' } }) },
      '{"kind":"question"}',
    );
    const result = await generateText(chat(), { ...ask, format: schema });
    expect(result.text).toBe('{"kind":"question"}');
    expect(bodies().map((b) => 'response_format' in b)).toEqual([true, false]);
    expect((bodies()[1]!.messages as Array<{ content: string }>)[0]!.content).toContain(
      '"required":["kind"]',
    );
  });

  it('every family: a whole stream is read the same way', async () => {
    for (const family of ['llama.cpp', 'vllm', 'lmstudio', 'localai', 'ollama-v1'] as const) {
      server.enqueue({ raw: sseReply(family, { content: ['SELECT ', '42'] }) });
      expect((await generateText(chat(), ask)).text).toBe('SELECT 42');
    }
  });
});

describe('a schema too wide for a 4096-token window is answered within it', () => {
  let server: ScriptedOllama;
  let dataDir: string;
  const prompts: number[] = [];

  beforeAll(async () => {
    dataDir = freshPgliteDataDir('sqlrecall-models-wide-');
    const db = new PGlite(dataDir);
    const statements: string[] = [];
    // Every table looks relevant to the question (orders with a status and a total), so only the
    // prompt budget decides how many go in: all of them need far more than 4096 tokens.
    for (let t = 0; t < 60; t += 1) {
      const columns = Array.from({ length: 10 }, (_, c) => `pending_order_note_${c}_region_${t} text`);
      statements.push(
        `CREATE TABLE pending_orders_region_${t} (id int PRIMARY KEY, status text, total_amount numeric, ${columns.join(', ')});`,
      );
      statements.push(
        `COMMENT ON TABLE pending_orders_region_${t} IS 'Pending orders of sales region ${t} with their status and total amount';`,
      );
    }
    statements.push('CREATE TABLE orders (id int PRIMARY KEY, status text, total_amount numeric);');
    statements.push(
      "INSERT INTO orders VALUES (1, 'pending', 6000), (2, 'pending', 100), (3, 'paid', 9000);",
    );
    await db.exec(statements.join('\n'));
    await db.close();
    server = await startScriptedOllama({
      v1ModelEntry: (model, entry) =>
        model.kind === 'chat'
          ? { id: entry.id, object: 'model', meta: { n_ctx: 4096, n_ctx_train: 32768 } }
          : entry,
      chat: (request: ScriptedChatRequest) => {
        const tokens = request.messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
        const predict = Number(request.options?.num_predict ?? 0);
        if (request.purpose === 'sql') prompts.push(tokens + predict);
        if (tokens + predict > 4096)
          return {
            raw: jsonError(400, {
              error: {
                code: 400,
                message: 'the request exceeds the available context size, try increasing it',
                type: 'exceed_context_size_error',
                n_ctx: 4096,
              },
            }),
          };
        if (request.purpose === 'sql')
          return "SELECT count(*) AS pending_big FROM orders WHERE status = 'pending' AND total_amount > 5000";
        return 'One pending order is over 5000.';
      },
    });
  }, 180_000);
  afterAll(() => server?.close());

  it('the prompt shrinks to fit meta.n_ctx', async () => {
    const run = await runCliInProcess(
      ['ask', '--no-memory', '--json', 'how many pending orders over 5000?'],
      {
        env: {
          SQLRECALL_HOME: tempDir('sqlrecall-models-wide-home-'),
          DATABASE_URL: `pglite:${dataDir}`,
          SQLRECALL_PROVIDER: 'openai',
          SQLRECALL_BASE_URL: `${server.url}/v1`,
        },
      },
    );
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).rows).toEqual([['1']]);
    expect(Math.max(...prompts)).toBeLessThanOrEqual(4096);
  });
});
