/**
 * HTTP routes the web app needs (issue 16): `POST /api/sql` (edit and run, same guard and limits),
 * conversation rename/delete scoped to the caller, and the refreshable schema catalog.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Assistant } from '../src/agent/assistant.js';
import type { Schema } from '../src/core/schema.js';
import { startTestServer, type TestServer } from './support/server-app.js';

let s: TestServer;
let alice: string;
let bob: string;

const call = async (path: string, init: { method?: string; body?: unknown; token?: string } = {}) => {
  const res = await s.app.request(path, {
    method: init.method ?? 'GET',
    headers: {
      ...(init.token !== '' ? { authorization: `Bearer ${init.token ?? alice}` } : {}),
      'content-type': 'application/json',
      accept: 'application/json',
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });
  const text = await res.text();
  let json: Record<string, unknown> & { error?: { code: string; message: string } } = {};
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json };
};

beforeAll(async () => {
  s = await startTestServer('users');
  alice = await s.users.add('alice');
  bob = await s.users.add('bob');
});
afterAll(async () => {
  await s?.close();
});

describe('POST /api/sql', () => {
  it('runs edited SQL through the guard and returns rows by the value contract', async () => {
    const r = await call('/api/sql', {
      method: 'POST',
      body: {
        sql: "SELECT 9007199254740993::int8 AS big, NULL::text AS nothing, '' AS empty, 1.50::numeric AS n",
      },
    });
    expect(r.status).toBe(200);
    // The one SQL document of every front end: names, then their types side by side.
    expect(r.json.columns).toEqual(['big', 'nothing', 'empty', 'n']);
    expect(r.json.columnTypes).toEqual(['int8', 'text', 'text', 'numeric']);
    expect(r.json.rows).toEqual([['9007199254740993', null, '', '1.50']]);
    expect(r.json.truncated).toBe(false);
    expect(r.json.chart).toBeNull();
  });

  it('charts a result like an answer does', async () => {
    const r = await call('/api/sql', {
      method: 'POST',
      body: {
        sql: 'SELECT c.name, sum(o.total_amount) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY 1 ORDER BY 1',
      },
    });
    expect(r.status).toBe(200);
    expect(r.json.chart).toEqual({ type: 'bar', x: 'name', series: ['revenue'] });
  });

  it('refuses writes, several statements and dangerous functions with guard_refused (422)', async () => {
    for (const sql of [
      'DELETE FROM orders',
      'SELECT 1; DROP TABLE orders',
      'SELECT pg_sleep(10)',
      "COPY orders TO '/tmp/x'",
    ]) {
      const r = await call('/api/sql', { method: 'POST', body: { sql } });
      expect(r.status, sql).toBe(422);
      expect(r.json.error?.code, sql).toBe('guard_refused');
    }
    const count = await call('/api/sql', {
      method: 'POST',
      body: { sql: 'SELECT count(*) AS n FROM orders' },
    });
    expect(Number((count.json.rows as string[][])[0]![0])).toBeGreaterThan(0);
  });

  it('applies the row cap and says so', async () => {
    const r = await call('/api/sql', {
      method: 'POST',
      body: { sql: 'SELECT g FROM generate_series(1, 5000) g' },
    });
    expect(r.status).toBe(200);
    expect((r.json.rows as unknown[]).length).toBe(1000);
    expect(r.json.truncated).toBe(true);
    expect(r.json.truncatedReason).toBe('max_rows');
  });

  it('rejects empty SQL (400 usage), unknown relations (422 db_query) and anonymous callers (401)', async () => {
    const empty = await call('/api/sql', { method: 'POST', body: { sql: '   ' } });
    expect(empty.status).toBe(400);
    expect(empty.json.error?.code).toBe('usage');
    const unknown = await call('/api/sql', { method: 'POST', body: { sql: 'SELECT * FROM no_such_table' } });
    expect(unknown.json.error?.code).toMatch(/^db_/);
    const anon = await call('/api/sql', { method: 'POST', body: { sql: 'SELECT 1' }, token: '' });
    expect(anon.status).toBe(401);
  });

  it('is in the OpenAPI document with the conversation PATCH/DELETE', async () => {
    const doc = (await (await s.app.request('/openapi.json')).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    expect(Object.keys(doc.paths['/api/sql'] ?? {})).toContain('post');
    expect(Object.keys(doc.paths['/api/conversations/{id}'] ?? {})).toEqual(
      expect.arrayContaining(['get', 'patch', 'delete']),
    );
  });
});

describe('conversation rename and delete', () => {
  it('renames and deletes only the caller’s conversation; another user gets 404', async () => {
    for (const question of ['revenue per customer', 'and again please'])
      await call('/api/ask', { method: 'POST', body: { question, conversationId: 'web-1' } });
    let list = await call('/api/conversations');
    const mine = (
      list.json.conversations as { id: string; firstQuestion: string; title: string | null }[]
    ).find((c) => c.id === 'web-1');
    expect(mine).toMatchObject({ firstQuestion: 'revenue per customer', title: null, turnCount: 2 });

    // bob cannot see, rename or delete it
    expect((await call('/api/conversations/web-1', { token: bob })).status).toBe(404);
    const bobRename = await call('/api/conversations/web-1', {
      method: 'PATCH',
      body: { title: 'mine' },
      token: bob,
    });
    expect(bobRename.status).toBe(404);
    expect((await call('/api/conversations/web-1', { method: 'DELETE', token: bob })).status).toBe(404);

    const renamed = await call('/api/conversations/web-1', {
      method: 'PATCH',
      body: { title: '  Revenue review ' },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.json.conversation).toMatchObject({ id: 'web-1', title: 'Revenue review' });
    const blank = await call('/api/conversations/web-1', { method: 'PATCH', body: { title: '  ' } });
    expect(blank.status).toBe(400);
    list = await call('/api/conversations');
    expect(
      (list.json.conversations as { id: string; title: string }[]).find((c) => c.id === 'web-1')?.title,
    ).toBe('Revenue review');

    expect((await call('/api/conversations/web-1', { method: 'DELETE' })).json).toEqual({ deleted: true });
    expect((await call('/api/conversations/web-1')).status).toBe(404);
    expect((await call('/api/conversations/web-1', { method: 'DELETE' })).status).toBe(404);
    list = await call('/api/conversations');
    expect((list.json.conversations as { id: string }[]).map((c) => c.id)).not.toContain('web-1');
  });
});

describe('schema refresh', () => {
  it('GET /api/schema?refresh=true reads the catalog again', async () => {
    const r = await call('/api/schema?refresh=true');
    expect(r.status).toBe(200);
    expect((r.json.tables as { name: string }[]).map((t) => t.name)).toContain('orders');
    expect((await call('/api/schema?refresh=maybe')).status).toBe(400);
  });

  it('Assistant.refreshSchema drops the cached catalog', async () => {
    let loads = 0;
    const assistant = new Assistant({
      chat: undefined as never,
      db: undefined as never,
      loadSchema: async () => ({ tables: [], loads: ++loads }) as unknown as Schema,
    });
    await assistant.schema();
    await assistant.schema();
    expect(loads).toBe(1);
    await assistant.refreshSchema();
    expect(loads).toBe(2);
  });
});

describe('memory SQL in the history', () => {
  it('history records the SQL condition an ADD set and an edit changed; bad SQL is reported', async () => {
    const added = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'metric', text: 'a large order is over 10000', sql: 'orders.total_amount > 10000' },
    });
    expect(added.status).toBe(200);
    const id = (added.json.changes as { action: string; id: string }[])[0]!.id;
    expect((added.json.changes as { action: string }[])[0]!.action).toBe('ADD');
    const edited = await call(`/api/memories/${id}`, {
      method: 'PATCH',
      body: { sql: 'orders.total_amount > 20000' },
    });
    expect(edited.json.memory).toMatchObject({ sql: 'orders.total_amount > 20000' });
    const history = await call(`/api/memories/${id}/history`);
    const entries = history.json.history as {
      action: string;
      oldSql: string | null;
      newSql: string | null;
    }[];
    expect(entries.map((h) => [h.action, h.oldSql, h.newSql])).toEqual([
      ['ADD', null, 'orders.total_amount > 10000'],
      ['UPDATE', 'orders.total_amount > 10000', 'orders.total_amount > 20000'],
    ]);
    const bad = await call(`/api/memories/${id}`, {
      method: 'PATCH',
      body: { sql: 'orders.no_such_column > 1' },
    });
    expect((bad.json.problems as string[]).join(' ')).toMatch(/no_such_column/);
  });
});
