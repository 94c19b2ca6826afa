/**
 * A long-running server whose model server was down when it opened its memory store, in process
 * (the real Runtime wiring of `serve`, a fresh embedded store: embedding dimension not yet known):
 * - `POST /api/memories` queues the fact (202 with the pending id and a message) instead of failing;
 * - after the model server comes back on the same port, nothing is probed before the back-off
 *   (30 s) has passed; the first request after it re-probes, sets the store up with the model's
 *   dimension and applies the queue, each fact in its own user's scope;
 * - later additions are taught at once (200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { UserDirectory } from '../src/app/users.js';
import { loadConfig } from '../src/config/config.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import type { AppEnv } from '../src/server/context.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

describe('serve opened while the model server was down', () => {
  let fixture: Fixture;
  let home: string;
  let port: number;
  let model: ScriptedOllama | undefined;
  let runtime: Runtime;
  let client: ReturnType<typeof memoryClient>;
  let app: OpenAPIHono<AppEnv>;
  let alice: string;
  let bob: string;

  beforeAll(async () => {
    fixture = await pgliteShop();
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-recovery-'));
    // A port that refuses connections: a model server was there and is stopped.
    const probe = await startScriptedOllama({});
    port = Number(new URL(probe.url).port);
    await probe.close();
    const config = loadConfig({
      env: {},
      cwd: home,
      flags: {
        databaseUrl: fixture.url,
        ollamaHost: `http://127.0.0.1:${port}`,
        home,
        user: 'me',
        logLevel: 'silent',
      },
    });
    client = memoryClient(config);
    runtime = new Runtime(config);
    const users = new UserDirectory(client);
    app = createApp(depsFromRuntime(runtime, { auth: { mode: 'users', users }, client }));
    alice = await users.add('alice');
    bob = await users.add('bob');
  }, 120_000);
  afterAll(async () => {
    vi.useRealTimers();
    await runtime?.close();
    await client?.close().catch(() => undefined);
    await model?.close();
    await fixture?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const call = async (token: string, path: string, method = 'GET', body?: unknown) => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: JSON documents of the API under test, read field by field
    return { status: res.status, json: (await res.json()) as any };
  };
  const texts = async (token: string) =>
    ((await call(token, '/api/memories')).json.memories as { text: string }[]).map((m) => m.text).sort();

  it('POST /api/memories on a fresh store with the model down queues the fact: 202, pending id, message', async () => {
    const added = await call(alice, '/api/memories', 'POST', {
      kind: 'context',
      text: 'The fiscal year starts in April',
    });
    expect(added.status).toBe(202);
    expect(added.json.pending.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(added.json.message).toMatch(/applied when the model server is reachable/);
    expect(added.json.changes).toEqual([]);
    const other = await call(bob, '/api/memories', 'POST', { kind: 'context', text: 'Amounts are in euros' });
    expect(other.status).toBe(202);
    expect(await texts(alice)).toEqual([]);
    const memory = await runtime.memory();
    expect(memory.canEmbed).toBe(false);
    expect(await memory.store.embeddingInfo()).toBeNull();
    expect((await memory.store.listPending({ user: 'alice' })).map((p) => p.id)).toEqual([
      added.json.pending.id,
    ]);
  }, 60_000);

  it('after the model server is back: no probe within the back-off, then the queue is applied', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: Date.now() });
    model = await startScriptedOllama({ port, chat: () => JSON.stringify({ sql: null }) });
    // Within the back-off: still queued, and the model server was not asked anything.
    const early = await call(alice, '/api/memories', 'POST', {
      kind: 'context',
      text: 'Weeks start on Monday',
    });
    expect(early.status).toBe(202);
    expect(model.requests).toEqual([]);

    vi.setSystemTime(Date.now() + 31_000);
    expect(await texts(alice)).toEqual([]); // this request starts the re-probe (in the background)
    const memory = await runtime.memory();
    expect(await memory.recoverEmbedding()).toBe(true);
    expect(await memory.queueApplied()).toEqual({ applied: 3, failed: 0 });
    expect(memory.canEmbed).toBe(true);
    expect((await memory.store.embeddingInfo())?.dimensions).toBeGreaterThan(0);

    expect(await texts(alice)).toEqual(['The fiscal year starts in April', 'Weeks start on Monday']);
    expect(await texts(bob)).toEqual(['Amounts are in euros']);
    expect(await memory.store.listPending({ user: 'alice' })).toEqual([]);
    expect(await memory.store.listPending({ user: 'bob' })).toEqual([]);

    const now = await call(alice, '/api/memories', 'POST', { kind: 'context', text: 'Prices include VAT' });
    expect(now.status).toBe(200);
    expect(now.json.changes).toMatchObject([{ action: 'ADD', text: 'Prices include VAT' }]);
  }, 60_000);
});
