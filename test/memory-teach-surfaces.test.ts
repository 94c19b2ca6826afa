/**
 * The teaching path on every surface, as users meet it: `memory add` (CLI), `POST /api/memories`
 * (HTTP), MCP `remember` (the SDK's client over stdio) — a wrong SQL is refused with the closest
 * real names and stores nothing, a credential is refused and stores nothing; `memory audit` (CLI
 * and HTTP) finds credentials stored before and removes them; `--until` is a day in the user's
 * time zone (clock injected); and the demo shop case: a preference added with `memory add`
 * (no `--sql`) is compiled, stored and applied by the next `ask` in another process.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { BIN, ROOT, runSqlrecall } from './support/cli.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { compileFor, extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { startTestServer, type TestServer } from './support/server-app.js';

const INDIA = "customers.country = 'India'";
const SECRET_URL = 'postgres://report:S3cretPw@db.internal/prod';
const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

describe('teaching on every surface (demo shop, scripted model)', () => {
  let model: ScriptedOllama;
  let env: Record<string, string>;
  const sqlPrompts: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-teach-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    model = await startScriptedOllama({
      chat: (request) => {
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
        if (request.purpose === 'memory-compile') return compileFor(request.lastUserMessage);
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          // A model that obeys the memories it is shown: the India predicate goes into the WHERE.
          const prompt = request.messages.map((m) => m.content).join('\n');
          sqlPrompts.push(prompt);
          return prompt.includes(INDIA)
            ? fence(
                "SELECT name, country FROM customers WHERE customers.country = 'India' ORDER BY name LIMIT 20",
              )
            : fence('SELECT name, country FROM customers ORDER BY name LIMIT 20');
        }
        return 'Here is the answer.';
      },
    });
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: model.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
    };
  }, 180_000);
  afterAll(async () => {
    await model?.close();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const cli = (args: string[], extra: Record<string, string> = {}) =>
    runSqlrecall(args, { env: { ...env, ...extra }, timeoutMs: 90_000 });
  const inProcess = (args: string[], extra: Record<string, string> = {}) =>
    runCliInProcess(args, { env: { ...env, ...extra } });

  it('demo shop: memory add without --sql is compiled, and the next ask in another process applies it', async () => {
    const added = await cli([
      'memory',
      'add',
      '--json',
      '--user',
      'priya',
      'Always show me customers from India',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const doc = JSON.parse(added.stdout);
    expect(doc.sqlSource).toBe('compiled');
    const listed = JSON.parse((await cli(['memory', 'list', '--json', '--user', 'priya'])).stdout);
    expect(listed.memories).toMatchObject([{ text: 'Always show me customers from India', sql: INDIA }]);
    const id: string = listed.memories[0].id;

    const asked = await cli(['ask', '--json', '--user', 'priya', 'Which customers do we have?']);
    expect(asked.code, asked.stderr).toBe(0);
    const answer = JSON.parse(asked.stdout);
    expect(sqlPrompts.at(-1)).toContain(INDIA); // the predicate reached the SQL prompt …
    expect(answer.sql).toContain("customers.country = 'India'"); // … and the SQL
    expect(answer.appliedMemories.map((m: { id: string }) => m.id)).toContain(id); // listed as applied
    expect(answer.rows.every((row: string[]) => row[1] === 'India')).toBe(true);
  }, 120_000);

  it('memory add: a wrong --sql exits 2 naming the closest column; a credential exits 2; nothing stored', async () => {
    const wrong = await inProcess([
      'memory',
      'add',
      '--user',
      'ravi',
      '--sql',
      "customers.countri = 'India'",
      'only customers from India',
    ]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toMatch(/customers\.countri does not exist; did you mean customers\.country\?/);
    const secret = await inProcess([
      'memory',
      'add',
      '--user',
      'ravi',
      '--kind',
      'context',
      `the reporting database is ${SECRET_URL}`,
    ]);
    expect(secret.code).toBe(2);
    expect(secret.stderr).toMatch(/password in a connection URL \(postgres:\/\/report:\*\*\*@\).*nothing/);
    expect(secret.stderr + secret.stdout).not.toContain('S3cretPw');
    const list = JSON.parse((await inProcess(['memory', 'list', '--json', '--user', 'ravi'])).stdout);
    expect(list.memories).toEqual([]);
  }, 60_000);

  it('--until DAY lasts through DAY in the user zone: Los Angeles in the evening, Kolkata', async () => {
    // 19:30 on Tuesday 1 December 2026 in Los Angeles = 03:30 UTC on Wednesday 2 December.
    vi.useFakeTimers({ now: new Date('2026-12-02T03:30:00Z'), toFake: ['Date'] });
    const la = { SQLRECALL_TZ: 'America/Los_Angeles' };
    const added = await inProcess(
      [
        'memory',
        'add',
        '--json',
        '--user',
        'tz',
        '--kind',
        'context',
        '--until',
        '2026-12-01',
        'the audit week',
      ],
      la,
    );
    expect(added.code, added.stderr).toBe(0);
    const far = await inProcess(
      ['memory', 'add', '--user', 'tz', '--kind', 'context', '--until', '2099-12-31', 'the far future'],
      la,
    );
    expect(far.code, far.stderr).toBe(0);
    const listed = await inProcess(['memory', 'list', '--user', 'tz'], la);
    expect(listed.stdout).toMatch(/the audit week.*\(until 2026-12-01\)/);
    expect(listed.stdout).toMatch(/the far future.*\(until 2099-12-31\)/);
    const doc = JSON.parse((await inProcess(['memory', 'list', '--json', '--user', 'tz'], la)).stdout);
    const week = doc.memories.find((m: { text: string }) => m.text === 'the audit week');
    expect(week.expiresAt).toBe('2026-12-02T08:00:00.000Z');

    const east = await inProcess(
      [
        'memory',
        'add',
        '--json',
        '--user',
        'tz-east',
        '--kind',
        'context',
        '--until',
        '2026-12-31',
        'year end',
      ],
      { SQLRECALL_TZ: 'Asia/Kolkata' },
    );
    expect(east.code, east.stderr).toBe(0);
    const eastDoc = JSON.parse(
      (await inProcess(['memory', 'list', '--json', '--user', 'tz-east'], { SQLRECALL_TZ: 'Asia/Kolkata' }))
        .stdout,
    );
    expect(eastDoc.memories[0].expiresAt).toBe('2026-12-31T18:30:00.000Z');
  }, 60_000);

  it('MCP remember (SDK client): a wrong sql and a credential are tool errors; nothing stored', async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--user', 'mia'],
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sqlrecall-test', version: '1.0.0' });
    await client.connect(transport);
    const call = async (name: string, args: Record<string, unknown>) =>
      (await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult;
    const text = (r: CallToolResult) => (r.content[0]?.type === 'text' ? r.content[0].text : '');
    try {
      const wrong = await call('remember', {
        text: 'only customers from India',
        sql: "customers.countri = 'India'",
      });
      expect(wrong.isError).toBe(true);
      expect(JSON.parse(text(wrong)).error).toMatchObject({ code: 'invalid_memory_sql' });
      expect(text(wrong)).toMatch(/did you mean customers\.country\?/);
      const secret = await call('remember', {
        text: 'my api key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e',
        kind: 'context',
      });
      expect(secret.isError).toBe(true);
      expect(JSON.parse(text(secret)).error).toMatchObject({ code: 'credential_refused' });
      expect(text(secret)).not.toContain('4f9a8b7c6d5e');
      const compiled = await call('remember', { text: 'Always show me customers from India' });
      expect(compiled.isError, text(compiled)).toBeFalsy();
      expect(JSON.parse(text(compiled)).sqlSource).toBe('compiled');
      const recalled = JSON.parse(text(await call('recall', {})));
      expect(recalled.memories.map((m: { text: string }) => m.text)).toEqual([
        'Always show me customers from India',
      ]);
    } finally {
      await client.close();
    }
  }, 120_000);
});

describe('teaching over HTTP', () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer('local');
  }, 120_000);
  afterAll(async () => {
    await s?.close();
  });
  const call = async (
    path: string,
    init: { method?: string; body?: unknown; headers?: Record<string, string> } = {},
  ) => {
    const res = await s.app.request(path, {
      method: init.method ?? 'GET',
      headers: { 'content-type': 'application/json', ...init.headers },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };
  const texts = async () =>
    (await call('/api/memories?status=all')).json.memories.map((m: { text: string }) => m.text);

  it('POST /api/memories: 422 with the closest name for a wrong sql, 422 for a credential, nothing stored', async () => {
    const wrong = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'preference', text: 'only customers from India', sql: "customers.countri = 'India'" },
    });
    expect(wrong.status).toBe(422);
    expect(wrong.json.error.code).toBe('invalid_memory_sql');
    expect(wrong.json.error.message).toMatch(/did you mean customers\.country\?/);
    const secret = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'context', text: 'use Authorization: Bearer abcdefghijklmnopqrstuvwxyz012345' },
    });
    expect(secret.status).toBe(422);
    expect(secret.json.error.code).toBe('credential_refused');
    expect(JSON.stringify(secret.json)).not.toContain('abcdefghijklmnop');
    expect(await texts()).toEqual([]);
  });

  it('POST /api/memories: 422 for a day already over and for an unknown zone header, nothing stored', async () => {
    const past = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'context', text: 'launch week pricing', until: '2020-01-01' },
      headers: { 'x-sqlrecall-time-zone': 'Europe/Berlin' },
    });
    expect(past.status).toBe(422);
    expect(past.json.error.code).toBe('invalid_date');
    expect(past.json.error.message).toMatch(/2020-01-01 is already over/);
    const zone = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'context', text: 'launch week pricing', until: '2099-12-31' },
      headers: { 'x-sqlrecall-time-zone': 'Mars/Base' },
    });
    expect(zone.status).toBe(422);
    expect(zone.json.error.message).toMatch(/Europe\/Berlin/);
    expect(await texts()).toEqual([]);
    const typed = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'context', text: 'launch week pricing', until: '2099-12-31' },
      headers: { 'x-sqlrecall-time-zone': 'America/Los_Angeles' },
    });
    expect(typed.status).toBe(200);
    const listed = await call('/api/memories', { headers: { 'x-sqlrecall-time-zone': 'Asia/Tokyo' } });
    expect(listed.json.memories).toEqual([
      expect.objectContaining({ text: 'launch week pricing', expiresOn: '2099-12-31' }),
    ]);
    const id = listed.json.memories[0].id as string;
    const same = await call(`/api/memories/${id}`, { method: 'PATCH', body: {} });
    expect(same.status).toBe(200);
    expect(same.json.changed).toBe(false);
    await call(`/api/memories/${id}`, { method: 'DELETE' });
  });

  it('POST /api/memories: a preference without sql is compiled; until is a day in the browser zone', async () => {
    const added = await call('/api/memories', {
      method: 'POST',
      headers: { 'x-sqlrecall-time-zone': 'Asia/Tokyo' },
      body: { kind: 'preference', text: 'Always show me customers from India', until: '2099-12-31' },
    });
    expect(added.status, JSON.stringify(added.json)).toBe(200);
    const [memory] = (await call('/api/memories')).json.memories;
    expect(memory).toMatchObject({ sql: INDIA, expiresAt: '2099-12-31T15:00:00.000Z' });
  });

  it('audit finds a credential stored before (by a path that did not screen) and deletes it for good', async () => {
    const memory = await s.runtime.memory();
    const [embedding] = await memory.embedder.embed(['x']);
    await memory.store.write({ user: 'me' }, [
      {
        op: 'add',
        memory: { kind: 'context', text: `the reporting database is ${SECRET_URL}` },
        embedding: embedding!,
        reason: 'stored before the screen existed',
      },
    ]);
    const audit = await call('/api/memories/audit');
    expect(audit.status).toBe(200);
    expect(audit.json.found).toHaveLength(1);
    expect(JSON.stringify(audit.json)).not.toContain('S3cretPw');
    expect(audit.json.found[0].found[0].masked).toBe('postgres://report:***@');
    const removed = await call('/api/memories/audit/delete', { method: 'POST' });
    expect(removed.json.removed).toEqual({ memories: 1, history: 1, pending: 0 });
    expect((await texts()).join(' ')).not.toContain('S3cretPw');
    expect(JSON.stringify(await memory.store.history({ user: 'me' }))).not.toContain('S3cretPw');
  });

  it('a credential in a question is masked before it reaches the conversation history', async () => {
    const asked = await call('/api/ask', {
      method: 'POST',
      headers: { accept: 'application/json' },
      body: { question: 'revenue per customer, my token is ghp_0123456789abcdefghijABCDEFGHIJ012345' },
    });
    expect(asked.status, JSON.stringify(asked.json)).toBe(200);
    const { store } = await s.runtime.memory();
    const [conversation] = await store.listConversations({ user: 'me' });
    const turns = await store.recentTurns({ user: 'me' }, conversation!.id);
    expect(turns.map((t) => t.question).join(' ')).toContain('ghp_***');
    expect(JSON.stringify(turns)).not.toContain('0123456789abcdefghij');
    expect(JSON.stringify(s.model.chatRequests())).not.toContain('0123456789abcdefghij');
  });
});

describe('memory audit (CLI)', () => {
  it('lists stored credentials masked (exit 1), --delete removes them for good (exit 0)', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-audit-'));
    const model = await startScriptedOllama({ chat: () => '{}' });
    try {
      const env = { SQLRECALL_HOME: home, OLLAMA_HOST: model.url };
      const { Runtime } = await import('../src/runtime/runtime.js');
      const { loadConfig } = await import('../src/config/config.js');
      const runtime = new Runtime(
        loadConfig({ env: {}, cwd: home, flags: { home, ollamaHost: model.url, user: 'kai' } }),
      );
      const memory = await runtime.memory();
      const [embedding] = await memory.embedder.embed(['x']);
      await memory.store.write({ user: 'kai' }, [
        {
          op: 'add',
          memory: { kind: 'context', text: 'deploy key ghp_0123456789abcdefghijABCDEFGHIJ012345' },
          embedding: embedding!,
          reason: 'old',
        },
        {
          op: 'add',
          memory: { kind: 'context', text: 'orders ship on Mondays' },
          embedding: embedding!,
          reason: 'old',
        },
      ]);
      await runtime.close();
      const found = await runCliInProcess(['memory', 'audit', '--user', 'kai'], { env });
      expect(found.code).toBe(1);
      expect(found.stdout).toMatch(/a GitHub token \(ghp_\*\*\*\)/);
      expect(found.stdout).toMatch(/memory audit --delete/);
      expect(found.stdout).not.toContain('0123456789abcdef');
      const deleted = await runCliInProcess(['memory', 'audit', '--delete', '--user', 'kai'], { env });
      expect(deleted.code, deleted.stderr).toBe(0);
      const list = JSON.parse(
        (await runCliInProcess(['memory', 'list', '--all', '--json', '--user', 'kai'], { env })).stdout,
      );
      expect(list.memories.map((m: { text: string }) => m.text)).toEqual(['orders ship on Mondays']);
      expect((await runCliInProcess(['memory', 'audit', '--user', 'kai'], { env })).code).toBe(0);
    } finally {
      await model.close();
    }
  }, 60_000);
});
