/**
 * One model provider, chosen once from the configuration: with `--provider openai`, `/api/health`,
 * `schema context`, `doctor` and `demo` consult the OpenAI-compatible server (never Ollama's API,
 * here at a closed port); `doctor` reports the context window and where it was read, and whether
 * the server holds replies to a JSON schema; behind Ollama's `/v1` the loaded model's running
 * window (`/api/ps` `context_length`) beats the trained size, and SQLRECALL_CONTEXT_LENGTH beats both.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { modelProviderFor } from '../src/runtime/models.js';
import { Runtime } from '../src/runtime/runtime.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

let down: string;
const home = tempDir('sqlrecall-provider-');

beforeAll(async () => {
  const stopped = await startScriptedOllama();
  down = stopped.url;
  await stopped.close();
});

/** Environment of the OpenAI-compatible backend at `url`, with Ollama's own API unreachable. */
const openai = (url: string, extra: Record<string, string> = {}) => ({
  SQLRECALL_HOME: home,
  SQLRECALL_PROVIDER: 'openai',
  SQLRECALL_BASE_URL: `${url}/v1`,
  OLLAMA_HOST: down,
  ...extra,
});

/** Requests that reached Ollama's own API (`/api/…`) rather than `/v1`. */
const ollamaApiCalls = (server: ScriptedOllama) =>
  server.requests.filter((r) => r.path.startsWith('/api/')).map((r) => r.path);

/** Ollama's `/api/ps` listing `model` loaded with `contextLength` tokens of context. */
const ollamaPs = (model: string, contextLength: number) => ({
  'GET /api/ps': () => ({
    body: {
      models: [
        {
          name: model,
          model,
          size: 5_000_000_000,
          digest: 'a'.repeat(64),
          expires_at: '2099-01-01T00:00:00Z',
          size_vram: 5_000_000_000,
          context_length: contextLength,
        },
      ],
    },
  }),
});

describe('GET /api/health with --provider openai', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterAll(() => server.close());

  const health = async (env: Record<string, string>) => {
    const config = loadConfig({ env: { ...env, SQLRECALL_LOG_LEVEL: 'silent' }, cwd: home });
    const runtime = new Runtime(config);
    const client = memoryClient(config);
    try {
      return await depsFromRuntime(runtime, { auth: { mode: 'local', user: 'me' }, client }).health();
    } finally {
      await runtime.close();
      await client.close().catch(() => undefined);
    }
  };

  it('asks the OpenAI-compatible server about the chat model, not Ollama', async () => {
    // The health probe gives the model server 3 s; the first call in a process also loads the
    // client library, which on a loaded 2-core machine can take longer than that. That start-up
    // cost is not what this test is about, so it is paid once before the call that is checked.
    await health(openai(server.url, { SQLRECALL_MEMORY: 'off' }));
    server.reset();
    const result = await health(openai(server.url, { SQLRECALL_MEMORY: 'off' }));
    expect(result.model, JSON.stringify(result.model)).toEqual({ ok: true });
    expect(server.requests.some((r) => r.path === '/v1/models')).toBe(true);
    expect(ollamaApiCalls(server)).toEqual([]);
  });

  it('a chat model the server does not list is reported as not served', async () => {
    const result = await health(
      openai(server.url, { SQLRECALL_MEMORY: 'off', SQLRECALL_MODEL: 'llama3.1:70b' }),
    );
    expect(result.model.ok).toBe(false);
    expect(result.model.message).toBe('The chat model llama3.1:70b is not served.');
  });
});

describe('schema context with --provider openai', () => {
  let server: ScriptedOllama;
  let shop: string;
  beforeAll(async () => {
    // Ollama's /v1: /v1/models carries no window; /api/ps has the model loaded with 2048 tokens.
    server = await startScriptedOllama({
      reportContextLength: false,
      routes: ollamaPs('qwen2.5-coder:7b', 2048),
    });
    shop = (await pgliteShop()).url;
  }, 60_000);
  afterAll(async () => {
    await server.close();
    if (shop) rmSync(shop.slice('pglite:'.length), { recursive: true, force: true });
  });

  it('sizes the budget from the server in use (its running window), asking nothing of Ollama /api/show', async () => {
    server.reset();
    const run = await runCliInProcess(['schema', 'context', 'orders per country', '--db', shop, '--json'], {
      env: openai(server.url, { SQLRECALL_MEMORY: 'off' }),
    });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { budget: { contextTokens: number } };
    expect(doc.budget.contextTokens).toBe(2048);
    expect(server.requests.some((r) => r.path === '/v1/models')).toBe(true);
    expect(ollamaApiCalls(server)).toEqual(['/api/ps']);
  });

  it('SQLRECALL_CONTEXT_LENGTH wins over the running window', async () => {
    const run = await runCliInProcess(['schema', 'context', 'orders per country', '--db', shop, '--json'], {
      env: openai(server.url, { SQLRECALL_MEMORY: 'off', SQLRECALL_CONTEXT_LENGTH: '3072' }),
    });
    expect(run.code, run.stderr).toBe(0);
    expect((JSON.parse(run.stdout) as { budget: { contextTokens: number } }).budget.contextTokens).toBe(3072);
  });
});

describe("Ollama's /v1: the loaded model's running window", () => {
  let loaded: ScriptedOllama;
  let idle: ScriptedOllama;
  beforeAll(async () => {
    // /v1/models lists the trained size (context_length 32768, the scripted default for chat models).
    loaded = await startScriptedOllama({ routes: ollamaPs('qwen2.5-coder:7b', 8192) });
    idle = await startScriptedOllama({ routes: { 'GET /api/ps': () => ({ body: { models: [] } }) } });
  });
  afterAll(() => Promise.all([loaded.close(), idle.close()]));

  const configFor = (server: ScriptedOllama, extra: Record<string, string> = {}) =>
    loadConfig({ env: openai(server.url, extra), cwd: home });

  it('/api/ps context_length beats the trained size /v1/models lists', async () => {
    const trained = (await modelProviderFor(configFor(idle)).contextWindow('qwen2.5-coder:7b'))!;
    expect(trained.source).toBe('context_length of /v1/models');
    expect(trained.tokens).toBeGreaterThan(8192);
    expect(await modelProviderFor(configFor(loaded)).contextWindow('qwen2.5-coder:7b')).toEqual({
      tokens: 8192,
      source: 'context_length of the loaded model (Ollama /api/ps)',
    });
  });

  it('the name matches with or without the implicit :latest tag', async () => {
    const server = await startScriptedOllama({
      models: ['sqlcoder', 'all-minilm'],
      routes: ollamaPs('sqlcoder:latest', 6144),
    });
    try {
      expect(await modelProviderFor(configFor(server)).contextLength('sqlcoder')).toBe(6144);
    } finally {
      await server.close();
    }
  });

  it('SQLRECALL_CONTEXT_LENGTH always wins', async () => {
    expect(
      await modelProviderFor(configFor(loaded, { SQLRECALL_CONTEXT_LENGTH: '2048' })).contextWindow(
        'qwen2.5-coder:7b',
      ),
    ).toEqual({ tokens: 2048, source: 'SQLRECALL_CONTEXT_LENGTH' });
  });
});

describe('doctor: the context window and JSON-schema support it found', () => {
  type Doc = { ok: boolean; checks: Array<{ name: string; level: string; message: string; fix?: string }> };
  const doctor = async (env: Record<string, string>) => {
    const run = await runCliInProcess(['doctor', '--json'], { env: { ...env, SQLRECALL_MEMORY: 'off' } });
    return { code: run.code, doc: JSON.parse(run.stdout) as Doc };
  };
  const check = (doc: Doc, name: string) => {
    const found = doc.checks.find((c) => c.name === name);
    if (!found) throw new Error(`no ${name} check in ${JSON.stringify(doc.checks)}`);
    return found;
  };

  it('llama-server: meta.n_ctx and a server that takes response_format', async () => {
    const server = await startScriptedOllama({
      chat: () => '{"ok": true}',
      v1ModelEntry: (model, entry) =>
        model.kind === 'chat'
          ? { id: entry.id, object: 'model', owned_by: 'llamacpp', meta: { n_ctx: 4096, n_ctx_train: 32768 } }
          : entry,
    });
    try {
      const { code, doc } = await doctor(openai(server.url));
      expect(code).toBe(0);
      expect(check(doc, 'context window')).toMatchObject({
        level: 'ok',
        message: 'context window of qwen2.5-coder:7b: 4096 tokens (from meta.n_ctx of /v1/models)',
      });
      expect(check(doc, 'structured output').level).toBe('ok');
      expect(check(doc, 'structured output').message).toMatch(/: supported \(the server accepted/);
      const probe = server.chatRequests().find((r) => r.purpose === 'probe')!;
      expect(probe.responseFormat).toMatchObject({ type: 'json_schema' });
      expect(ollamaApiCalls(server)).toEqual([]);
    } finally {
      await server.close();
    }
  });

  it('a server that refuses response_format (HTTP 400 naming it): not supported, a warning, exit 0', async () => {
    const server = await startScriptedOllama({ chat: () => '{"ok": true}', rejectResponseFormat: true });
    try {
      const { code, doc } = await doctor(openai(server.url));
      expect(code).toBe(0);
      const found = check(doc, 'structured output');
      expect(found.level).toBe('warn');
      expect(found.message).toContain('not supported');
      expect(found.message).toContain("'response_format' is not supported by this server");
      expect(found.message).toContain('writes the JSON schema into the prompt');
    } finally {
      await server.close();
    }
  });

  it('a server that fails with HTTP 500 only on response_format: not supported', async () => {
    const server = await startScriptedOllama({
      chat: (request) =>
        request.responseFormat ? { status: 500, error: 'failed to compile grammar' } : '{"ok": true}',
    });
    try {
      const found = check((await doctor(openai(server.url))).doc, 'structured output');
      expect(found.level).toBe('warn');
      expect(found.message).toMatch(/not supported \(the server failed \(HTTP 500\) on response_format/);
      expect(server.chatRequests().map((r) => Boolean(r.responseFormat))).toEqual([true, false]);
    } finally {
      await server.close();
    }
  });

  it("a chat model that does not answer at all: unknown, with the server's message", async () => {
    const server = await startScriptedOllama({ chat: () => ({ status: 503, error: 'model is loading' }) });
    try {
      const found = check((await doctor(openai(server.url))).doc, 'structured output');
      expect(found.level).toBe('warn');
      expect(found.message).toContain('unknown');
      expect(found.message).toContain('model is loading');
    } finally {
      await server.close();
    }
  });

  it('a server that reports no window: a warning naming SQLRECALL_CONTEXT_LENGTH and the size assumed', async () => {
    const server = await startScriptedOllama({ chat: () => '{"ok": true}', reportContextLength: false });
    try {
      const found = check((await doctor(openai(server.url))).doc, 'context window');
      expect(found.level).toBe('warn');
      expect(found.message).toBe(
        'The server reports no context window for qwen2.5-coder:7b; prompts are sized for 4096 tokens.',
      );
      expect(found.fix).toContain('SQLRECALL_CONTEXT_LENGTH');
    } finally {
      await server.close();
    }
  });

  it('Ollama: the version says whether `format` takes a JSON schema; the window is /api/show', async () => {
    const current = await startScriptedOllama();
    const old = await startScriptedOllama({ version: '0.4.7' });
    try {
      const now = (await doctor({ SQLRECALL_HOME: home, OLLAMA_HOST: current.url })).doc;
      expect(check(now, 'structured output')).toMatchObject({ level: 'ok' });
      expect(check(now, 'structured output').message).toContain('Ollama 0.12.6 takes a JSON schema');
      expect(check(now, 'context window').message).toMatch(
        /context window of qwen2\.5-coder:7b: \d+ tokens \(from the model's context_length \(\/api\/show\)\)/,
      );
      const before = (await doctor({ SQLRECALL_HOME: home, OLLAMA_HOST: old.url })).doc;
      expect(check(before, 'structured output').level).toBe('warn');
      expect(check(before, 'structured output').message).toContain('upgrade Ollama to 0.5.0 or later');
      expect(old.chatRequests()).toEqual([]); // decided from the version, no model call
    } finally {
      await Promise.all([current.close(), old.close()]);
    }
  });
});

describe('demo with --provider openai', () => {
  it('no server at the base URL: exit 5, the message and fix name that server, not Ollama', async () => {
    const run = await runCliInProcess(['demo', '--no-chat'], {
      env: openai(down, { SQLRECALL_HOME: join(home, 'demo-down') }),
    });
    expect(run.code).toBe(5);
    expect(run.stderr).toContain(`No model server answers at ${down}/v1`);
    expect(run.stderr).toContain('Start your OpenAI-compatible model server');
    expect(run.stderr).not.toMatch(/ollama serve|ollama pull/);
  });

  it('a model the server does not serve: exit 5 with how to load it (it cannot be pulled)', async () => {
    const server = await startScriptedOllama({ models: ['all-minilm'] });
    try {
      const run = await runCliInProcess(['demo', '--no-chat', '--yes'], {
        env: openai(server.url, { SQLRECALL_HOME: join(home, 'demo-missing') }),
      });
      expect(run.code).toBe(5);
      expect(run.stderr).toContain(`The model qwen2.5-coder:7b is not listed by ${server.url}/v1/models`);
      expect(run.stderr).toContain('set SQLRECALL_MODEL to one of the listed names');
      expect(server.requests.filter((r) => r.path === '/api/pull')).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
