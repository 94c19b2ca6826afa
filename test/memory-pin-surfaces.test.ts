/**
 * Issue 12 (pinning; import through reconciliation) through the CLI in process and through the
 * HTTP API with a scripted model: `memory pin/unpin`, `add --pin`, `(pinned)` in `memory list`,
 * import replacing a conflicting preference and saying so, `pinned` in the HTTP memory schema
 * (POST and PATCH), a pinned memory reaching the SQL prompt of an unrelated question, and the
 * memory bank's add form body (web/src/memory-bank.tsx) going through the supersede rule.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { startTestServer, type TestServer } from './support/server-app.js';

const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

describe('pinning and import through the CLI', () => {
  let server: ScriptedOllama;
  let fixture: Fixture;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    fixture = await pgliteShop();
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-pin-'));
    server = await startScriptedOllama({ chat: () => fence('SELECT count(*) AS n FROM orders') });
    env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: server.url, DATABASE_URL: fixture.url };
  });
  afterAll(async () => {
    await server?.close();
    await fixture?.close();
  });

  const run = async (...args: string[]) => {
    const result = await runCliInProcess(args, { env });
    expect(result.code, result.stderr).toBe(0);
    return result.stdout;
  };

  it('add --pin, list shows (pinned), unpin and pin by id prefix, history records it', async () => {
    const added = await run(
      'memory',
      'add',
      '--user',
      'p1',
      '--kind',
      'context',
      '--pin',
      'Amounts are in euros',
    );
    expect(added).toMatch(/^Remembered \[([0-9a-f]{8})\]: Amounts are in euros \(pinned\)$/m);
    const id = /\[([0-9a-f]{8})\]/.exec(added)?.[1] as string;
    await run('memory', 'add', '--user', 'p1', '--kind', 'context', 'Fiscal year starts in April');
    let list = await run('memory', 'list', '--user', 'p1');
    expect(list).toMatch(/Amounts are in euros \(pinned\)/);
    expect(list).not.toMatch(/April \(pinned\)/);
    expect(await run('memory', 'unpin', '--user', 'p1', id)).toBe(`Unpinned [${id}]: Amounts are in euros\n`);
    list = await run('memory', 'list', '--user', 'p1');
    expect(list).not.toContain('(pinned)');
    expect(await run('memory', 'pin', '--user', 'p1', id)).toContain(`Pinned [${id}]: Amounts are in euros`);
    const json = JSON.parse(await run('memory', 'list', '--user', 'p1', '--json'));
    expect(json.memories.map((m: { text: string; pinned: boolean }) => [m.text, m.pinned])).toEqual([
      ['Amounts are in euros', true],
      ['Fiscal year starts in April', false],
    ]);
    const history = await run('memory', 'history', '--user', 'p1', id);
    expect(history).toMatch(/UPDATE .*\(user unpinned\)/);
    expect(history).toMatch(/UPDATE .*\(user pinned\)/);
    // Another user cannot pin it.
    const other = await runCliInProcess(['memory', 'pin', '--user', 'p2', id], { env });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toMatch(/No memory with id/);
  });

  it('import of a conflicting preference replaces the active one and the summary says so', async () => {
    await run(
      'memory',
      'add',
      '--user',
      'src',
      '--sql',
      "customers.country = 'Peru'",
      'Only show customers from Peru',
    );
    const file = join(dir, 'peru.json');
    writeFileSync(file, await run('memory', 'export', '--user', 'src'));
    const chile = await run(
      'memory',
      'add',
      '--user',
      'dst',
      '--sql',
      "customers.country = 'Chile'",
      'Only show customers from Chile',
    );
    const chileId = /\[([0-9a-f]{8})\]/.exec(chile)?.[1] as string;
    const out = await run('memory', 'import', '--user', 'dst', file);
    expect(out).toContain('Imported 1 memories into user dst (0 duplicates skipped).');
    expect(out).toMatch(
      new RegExp(`^Replaced \\[${chileId}\\] Only show customers from Chile \\(by imported`, 'm'),
    );
    const list = await run('memory', 'list', '--user', 'dst');
    expect(list).toContain('Only show customers from Peru');
    expect(list).not.toContain('Chile');
    // Undo: the replaced memory can be restored.
    expect(await run('memory', 'restore', '--user', 'dst', chileId)).toContain('Restored');
  });
});

describe('pinning and import through the HTTP API', () => {
  let s: TestServer;
  const call = async (path: string, body?: unknown, method = body === undefined ? 'GET' : 'POST') => {
    const res = await s.app.request(path, {
      method,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, json: JSON.parse(await res.text()) };
  };

  beforeAll(async () => {
    s = await startTestServer('local');
    s.sqlReply = () => fence('SELECT count(*) AS n FROM orders');
  });
  afterAll(async () => {
    await s?.close();
  });

  it('POST with pinned, PATCH pins and unpins without touching the text; a pinned memory reaches any question', async () => {
    const added = await call('/api/memories', {
      kind: 'context',
      text: 'Zebra quarterly ledger uses euros',
      pinned: true,
    });
    expect(added.status).toBe(200);
    expect(added.json.changes).toEqual([expect.objectContaining({ action: 'ADD', pinned: true })]);
    const id = added.json.changes[0].id as string;
    const listed = (await call('/api/memories')).json.memories as { id: string; pinned: boolean }[];
    expect(listed.find((m) => m.id === id)?.pinned).toBe(true);

    const before = s.sqlPrompts.length;
    expect((await call('/api/ask', { question: 'how many orders are there?' })).status).toBe(200);
    expect(s.sqlPrompts.slice(before).join('\n')).toContain('Zebra quarterly ledger uses euros');

    const unpinned = await call(`/api/memories/${id}`, { pinned: false }, 'PATCH');
    expect(unpinned.status).toBe(200);
    expect(unpinned.json.memory).toMatchObject({
      id,
      pinned: false,
      text: 'Zebra quarterly ledger uses euros',
    });
    const history = (await call(`/api/memories/${id}/history`)).json.history as {
      action: string;
      pinned?: boolean;
    }[];
    expect(history.map((h) => [h.action, h.pinned ?? null])).toEqual([
      ['ADD', null],
      ['UPDATE', true],
      ['UPDATE', false],
    ]);
    const unpinnedAt = s.sqlPrompts.length;
    expect((await call('/api/ask', { question: 'how many orders are there?' })).status).toBe(200);
    expect(s.sqlPrompts.slice(unpinnedAt).join('\n')).not.toContain('Zebra quarterly ledger uses euros');
    const pinned = await call(`/api/memories/${id}`, { pinned: true }, 'PATCH');
    expect(pinned.json.memory.pinned).toBe(true);
    const bad = await call(`/api/memories/${id}`, { pinned: 'yes' }, 'PATCH');
    expect(bad.status).toBe(400);
  });

  it('POST /api/memories/import supersedes a conflicting preference and lists it', async () => {
    const chile = await call('/api/memories', {
      kind: 'preference',
      text: 'Only show customers from Chile',
      sql: "customers.country = 'Chile'",
    });
    const chileId = chile.json.changes[0].id as string;
    const doc = {
      format: 'sqlrecall-memory',
      version: 1,
      memories: [
        {
          id: '00000000-0000-4000-8000-000000000001',
          kind: 'preference',
          text: 'Only show customers from Peru',
          sql: "customers.country = 'Peru'",
          tables: ['public.customers'],
          columns: ['public.customers.country'],
          status: 'active',
          pinned: true,
        },
      ],
    };
    const r = await call('/api/memories/import', doc);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({
      imported: 1,
      duplicates: 0,
      superseded: [{ id: chileId, text: 'Only show customers from Chile', by: expect.any(String) }],
    });
    const active = (await call('/api/memories')).json.memories as { text: string; pinned: boolean }[];
    expect(active.filter((m) => /customers from/.test(m.text))).toEqual([
      expect.objectContaining({ text: 'Only show customers from Peru', pinned: true }),
    ]);
  });

  it('the memory bank form body (kind, text, sql) goes through the supersede rule', async () => {
    // The exact body web/src/memory-bank.tsx posts to /api/memories.
    await call('/api/memories', {
      kind: 'preference',
      text: 'Only show cancelled orders',
      sql: "orders.status = 'cancelled'",
    });
    const r = await call('/api/memories', {
      kind: 'preference',
      text: 'Only show shipped orders',
      sql: "orders.status = 'shipped'",
    });
    expect(r.json.changes).toEqual([
      expect.objectContaining({
        action: 'SUPERSEDE',
        replaced: expect.objectContaining({ text: 'Only show cancelled orders' }),
      }),
    ]);
  });
});
