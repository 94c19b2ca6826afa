/**
 * The HTTP API in-process (`app.request()`): every route, validation errors, the error shape
 * `{error: {code, message}}` with the status of ERROR_TABLE, the SSE steps in order, teams.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_TABLE } from '../src/core/errors.js';
import { parseSse, revenueSql, startTestServer, type TestServer } from './support/server-app.js';

let s: TestServer;
let token: string;
let memberToken: string;
let adminToken: string;

const auth = (t: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${t}`,
  'content-type': 'application/json',
  ...extra,
});
const call = async (
  path: string,
  init: { method?: string; body?: unknown; token?: string; headers?: Record<string, string> } = {},
) => {
  const res = await s.app.request(path, {
    method: init.method ?? 'GET',
    headers: auth(init.token ?? token, init.headers),
    ...(init.body !== undefined
      ? { body: typeof init.body === 'string' ? init.body : JSON.stringify(init.body) }
      : {}),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: JSON documents of the API under test, read field by field
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = null;
  }
  return { status: res.status, json, text, headers: res.headers };
};
// biome-ignore lint/suspicious/noExplicitAny: see above
const expectError = (r: { status: number; json: any }, code: keyof typeof ERROR_TABLE) => {
  expect(r.json).toMatchObject({ error: { code, message: expect.any(String) } });
  expect(Object.keys(r.json)).toEqual(['error']);
  expect(r.status).toBe(ERROR_TABLE[code].httpStatus);
};

beforeAll(async () => {
  s = await startTestServer('users');
  token = await s.users.add('alice');
  memberToken = await s.users.add('mia', { team: 'sales' });
  adminToken = await s.users.add('ada', { team: 'sales', teamRole: 'admin' });
});
afterAll(async () => {
  await s?.close();
});

describe('system routes', () => {
  it('health needs no token and reports each component', async () => {
    const res = await s.app.request('/api/health');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      ok: true,
      model: { ok: true },
      database: { ok: true },
      memory: { ok: true },
    });
  });

  it('refuses requests without or with a wrong token (401, error shape)', async () => {
    const none = await s.app.request('/api/me');
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'unauthorized' } });
    expectError(await call('/api/me', { token: `sqr_${'x'.repeat(43)}` }), 'unauthorized');
    expectError(await call('/api/me', { token: 'not-a-token' }), 'unauthorized');
    const basic = await s.app.request('/api/me', { headers: { authorization: `Basic ${token}` } });
    expect(basic.status).toBe(401);
  });

  it('me and settings come from the token and the config', async () => {
    expect((await call('/api/me')).json).toEqual({ user: 'alice', mode: 'users' });
    expect((await call('/api/me', { token: adminToken })).json).toEqual({
      user: 'ada',
      team: 'sales',
      teamRole: 'admin',
      mode: 'users',
    });
    const settings = await call('/api/settings');
    expect(settings.json).toMatchObject({
      model: 'qwen2.5-coder:7b',
      embedModel: 'all-minilm',
      memoryEnabled: true,
    });
    expect(settings.json.database).toMatch(/^pglite:/);
    expect(settings.json.provider).toBe('ollama');
    expect(settings.json.providerUrl).toBe(s.model.url.replace(/\/$/, ''));
  });

  it('unknown routes are 404 JSON; openapi.json describes every route', async () => {
    expectError(await call('/api/nope'), 'not_found');
    expectError(await call('/nope'), 'not_found');
    const doc = await s.app.request('/openapi.json');
    const paths = Object.keys(((await doc.json()) as { paths: Record<string, unknown> }).paths);
    for (const p of [
      '/api/health',
      '/api/me',
      '/api/settings',
      '/api/ask',
      '/api/feedback',
      '/api/memories',
      '/api/memories/search',
      '/api/memories/{id}',
      '/api/memories/{id}/restore',
      '/api/memories/{id}/history',
      '/api/memories/history',
      '/api/memories/export',
      '/api/memories/import',
      '/api/memories/enabled',
      '/api/conversations',
      '/api/conversations/{id}',
      '/api/schema',
      '/api/schema/context',
    ])
      expect(paths).toContain(p);
  });

  it('validation errors are 400 usage with the field named', async () => {
    const empty = await call('/api/ask', { method: 'POST', body: { question: '   ' } });
    expectError(empty, 'usage');
    expect(empty.json.error.message).toContain('question');
    expectError(await call('/api/ask', { method: 'POST', body: '{"question": ' }), 'usage');
    expectError(await call('/api/ask', { method: 'POST', body: { question: 1 } }), 'usage');
    expectError(await call('/api/ask', { method: 'POST', body: { question: 'x', without: 'abc' } }), 'usage');
    // A body that is not JSON is 415 on every JSON route, not a validation error.
    for (const path of ['/api/ask', '/api/sql', '/api/memories', '/api/schema/context'])
      expectError(
        await call(path, { method: 'POST', body: 'question=x', headers: { 'content-type': 'text/plain' } }),
        'unsupported_media_type',
      );
    expectError(await call('/api/memories?kind=bogus'), 'usage');
    expectError(
      await call('/api/memories', { method: 'POST', body: { kind: 'preference', text: '' } }),
      'usage',
    );
    expectError(await call('/api/memories/not-a-uuid', { method: 'DELETE' }), 'usage');
    expectError(await call('/api/memories/search?q=x&topK=0'), 'usage');
    expectError(
      await call('/api/feedback', { method: 'POST', body: { rating: 'meh', question: 'q' } }),
      'usage',
    );
  });

  it('a body over 1 MiB is 413 too_large', async () => {
    expectError(
      await call('/api/ask', { method: 'POST', body: { question: 'x'.repeat(1_100_000) } }),
      'too_large',
    );
  });
});

describe('ask', () => {
  it('streams the steps of a question as SSE, in order', async () => {
    const res = await s.app.request('/api/ask', {
      method: 'POST',
      headers: auth(token),
      body: JSON.stringify({ question: 'revenue per customer' }),
    });
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const names = parseSse(await res.text()).map((e) => e.event);
    const order = [
      'classified',
      'schema',
      'sql',
      'rows',
      'answer_token',
      'answer',
      'applied',
      'chart',
      'done',
    ];
    const firsts = order.map((n) => names.indexOf(n));
    expect(firsts.every((i) => i >= 0)).toBe(true);
    expect([...firsts].sort((a, b) => a - b)).toEqual(firsts);
    expect(names.at(-1)).toBe('done');
  });

  it('teaches a preference, then recalls and applies it (recalled before sql, applied chip, chart)', async () => {
    const taught = parseSse(
      (await call('/api/ask', { method: 'POST', body: { question: 'Always show me customers from India' } }))
        .text,
    );
    expect(taught.map((e) => e.event)).toEqual(['classified', 'remembered', 'reply', 'done']);
    const events = parseSse(
      (await call('/api/ask', { method: 'POST', body: { question: 'revenue per customer' } })).text,
    );
    const names = events.map((e) => e.event);
    expect(names.indexOf('recalled')).toBeGreaterThan(-1);
    expect(names.indexOf('recalled')).toBeLessThan(names.indexOf('sql'));
    const sql = events.find((e) => e.event === 'sql')!.data as { sql: string };
    expect(sql.sql).toBe(revenueSql(true));
    const applied = events.find((e) => e.event === 'applied')!.data as {
      memories: { id: string; text: string }[];
    };
    expect(applied.memories.map((m) => m.text)).toEqual(['Always show me customers from India']);
    expect(events.find((e) => e.event === 'chart')!.data).toEqual({
      type: 'bar',
      x: 'name',
      series: ['revenue'],
    });
    const rows = events.find((e) => e.event === 'rows')!.data as { rows: string[][] };
    expect(rows.rows).toEqual([
      ['Asha', '12050.50'],
      ['Dev', '15000.00'],
    ]);

    // The chip: the same question without that memory.
    const json = await call('/api/ask', {
      method: 'POST',
      body: { question: 'revenue per customer', without: [applied.memories[0]!.id] },
      headers: { accept: 'application/json' },
    });
    expect(json.status).toBe(200);
    expect(json.json.sql).toBe(revenueSql(false));
    expect(json.json.appliedMemories).toEqual([]);
    expect(json.json.rows.length).toBe(3);
    expect(json.json.chart).toEqual({ type: 'bar', x: 'name', series: ['revenue'] });
  });

  it('a refused statement ends the stream with an error event, and is 422 as JSON', async () => {
    s.sqlReply = () => 'DELETE FROM customers';
    try {
      const events = parseSse(
        (await call('/api/ask', { method: 'POST', body: { question: 'wipe it' } })).text,
      );
      const last = events.at(-1)!;
      expect(last.event).toBe('error');
      expect(last.data).toMatchObject({ error: { code: 'guard_refused' } });
      expect(events.some((e) => e.event === 'refused')).toBe(true);
      // As JSON: the failure document every front end gives (the SQL tried, the attempts, the error).
      const json = await call('/api/ask', {
        method: 'POST',
        body: { question: 'wipe it' },
        headers: { accept: 'application/json' },
      });
      expect(json.status).toBe(422);
      expect(json.json).toMatchObject({ question: 'wipe it', sql: 'DELETE FROM customers' });
      expect(json.json.error).toMatchObject({
        code: 'guard_refused',
        message: expect.stringMatching(/^Refused: /),
      });
      expect(json.json.attempts).toEqual([{ sql: 'DELETE FROM customers', error: json.json.error.message }]);
    } finally {
      s.sqlReply = undefined;
    }
  });
});

describe('memories', () => {
  it('add, list, search, edit, history, delete, restore, export, import, on/off', async () => {
    const added = await call('/api/memories', {
      method: 'POST',
      body: {
        kind: 'term',
        text: 'big order means total amount over 10000',
        sql: 'orders.total_amount > 10000',
      },
    });
    expect(added.status).toBe(200);
    const id = added.json.changes[0].id as string;
    expect(added.json.changes[0]).toMatchObject({ action: 'ADD', kind: 'term' });
    const dup = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'term', text: 'big order means total amount over 10000' },
    });
    expect(dup.json.changes[0].action).toBe('NOOP');

    const list = await call('/api/memories');
    expect(list.json.enabled).toBe(true);
    expect(list.json.memories.map((m: { id: string }) => m.id)).toContain(id);
    expect(
      (await call('/api/memories?kind=term')).json.memories.map((m: { kind: string }) => m.kind),
    ).toEqual(['term']);

    const found = await call(`/api/memories/search?q=${encodeURIComponent('big order')}&topK=3`);
    expect(found.json.results[0].id).toBe(id);
    expect(found.json.results[0].similarity).toBeGreaterThan(0);

    const edited = await call(`/api/memories/${id}`, {
      method: 'PATCH',
      body: { text: 'big order means total amount over 20000', sql: 'orders.total_amount > 20000' },
    });
    expect(edited.json.memory).toMatchObject({ id, text: 'big order means total amount over 20000' });
    expect(edited.json.memory.sql).toContain('20000');

    const history = await call(`/api/memories/${id}/history`);
    expect(history.json.history.map((h: { action: string }) => h.action)).toEqual(['ADD', 'NOOP', 'UPDATE']);
    expect((await call('/api/memories/history')).json.history.length).toBeGreaterThanOrEqual(2);

    expect((await call(`/api/memories/${id}`, { method: 'DELETE' })).json.memory.status).toBe('deleted');
    expect((await call('/api/memories')).json.memories.map((m: { id: string }) => m.id)).not.toContain(id);
    expect((await call('/api/memories?status=all')).json.memories.map((m: { id: string }) => m.id)).toContain(
      id,
    );
    expectError(await call(`/api/memories/${id}`, { method: 'PATCH', body: { text: 'x y z' } }), 'not_found');
    expect((await call(`/api/memories/${id}/restore`, { method: 'POST' })).json.memory.status).toBe('active');

    const exported = await call('/api/memories/export');
    expect(exported.headers.get('content-disposition')).toContain('attachment');
    expect(exported.json.format).toBe('sqlrecall-memory');
    expect(exported.json.memories.map((m: { id: string }) => m.id)).toContain(id);
    // Import into the team (admin) scope: re-embedded, new ids.
    const imported = await call('/api/memories/import?scope=team', {
      method: 'POST',
      body: exported.json,
      token: adminToken,
    });
    expect(imported.json.imported).toBe(exported.json.memories.length);
    expectError(await call('/api/memories/import', { method: 'POST', body: { format: 'nope' } }), 'usage');

    expect(
      (await call('/api/memories/enabled', { method: 'PUT', body: { enabled: false } })).json.enabled,
    ).toBe(false);
    expect((await call('/api/memories/enabled')).json.enabled).toBe(false);
    await call('/api/memories/enabled', { method: 'PUT', body: { enabled: true } });
    expect((await call('/api/memories')).json.enabled).toBe(true);
  });

  it('unknown ids are 404 not_found', async () => {
    const ghost = '00000000-0000-4000-8000-000000000000';
    expectError(await call(`/api/memories/${ghost}`, { method: 'DELETE' }), 'not_found');
    expectError(await call(`/api/memories/${ghost}/restore`, { method: 'POST' }), 'not_found');
    expectError(await call(`/api/memories/${ghost}/history`), 'not_found');
    expectError(
      await call(`/api/memories/${ghost}`, { method: 'PATCH', body: { text: 'hello there' } }),
      'not_found',
    );
  });

  it('team memories: members read, only team admins change; non-members get 403', async () => {
    const add = await call('/api/memories?scope=team', {
      method: 'POST',
      body: { kind: 'metric', text: 'revenue is the sum of total amount' },
      token: adminToken,
    });
    expect(add.status).toBe(200);
    const id = add.json.changes[0].id as string;
    const read = await call('/api/memories?scope=team', { token: memberToken });
    expect(read.json.scope).toEqual({ team: 'sales' });
    expect(read.json.memories.map((m: { id: string }) => m.id)).toContain(id);
    expectError(
      await call('/api/memories?scope=team', {
        method: 'POST',
        body: { text: 'no way' },
        token: memberToken,
      }),
      'forbidden',
    );
    expectError(
      await call(`/api/memories/${id}?scope=team`, { method: 'DELETE', token: memberToken }),
      'forbidden',
    );
    expectError(
      await call('/api/memories/enabled?scope=team', {
        method: 'PUT',
        body: { enabled: false },
        token: memberToken,
      }),
      'forbidden',
    );
    expectError(await call('/api/memories?scope=team'), 'forbidden'); // alice has no team
    // The team memory is not in the member's own scope, and own-scope ids do not reach it.
    expectError(await call(`/api/memories/${id}`, { method: 'DELETE', token: adminToken }), 'not_found');
    expect(
      (await call(`/api/memories/${id}?scope=team`, { method: 'DELETE', token: adminToken })).status,
    ).toBe(200);
  });
});

describe('conversations, schema, feedback', () => {
  it('lists conversations and resumes one', async () => {
    const first = await call('/api/ask', {
      method: 'POST',
      body: { question: 'revenue per customer', conversationId: 'conv-1' },
      headers: { accept: 'application/json' },
    });
    expect(first.json.conversationId).toBe('conv-1');
    await call('/api/ask', {
      method: 'POST',
      body: { question: 'and again please', conversationId: 'conv-1' },
      headers: { accept: 'application/json' },
    });
    const list = await call('/api/conversations');
    expect(list.json.conversations.map((c: { id: string }) => c.id)).toContain('conv-1');
    const one = await call('/api/conversations/conv-1');
    expect(one.json.conversation.turnCount).toBe(2);
    expect(one.json.turns.map((t: { question: string }) => t.question)).toEqual([
      'revenue per customer',
      'and again please',
    ]);
    // The follow-up's prompt saw the first turn.
    expect(s.sqlPrompts.at(-1)).toContain('revenue per customer');
    expectError(await call('/api/conversations/unknown'), 'not_found');
    expectError(await call(`/api/conversations/${'x'.repeat(201)}`), 'usage');
  });

  it('schema catalog and context for a question', async () => {
    const catalog = await call('/api/schema');
    const orders = catalog.json.tables.find((t: { name: string }) => t.name === 'orders');
    expect(orders.columns.map((c: { name: string }) => c.name)).toContain('total_amount');
    expect(orders.foreignKeys[0].references.table).toBe('customers');
    const context = await call('/api/schema/context', {
      method: 'POST',
      body: { question: 'orders per customer' },
    });
    // Planned by the pipeline's schema linking (it once returned the whole schema unplanned).
    expect(context.json.question).toBe('orders per customer');
    expect(context.json.tables.map((t: { table: string }) => t.table)).toContain('public.orders');
    expect(context.json.tables.every((t: { reasons: string[] }) => t.reasons.length > 0)).toBe(true);
    expect(context.json.schemaText).toContain('orders');
    expect(context.json.estimatedTokens).toBeGreaterThan(0);
    expect(context.json.budget.contextTokens).toBeGreaterThan(0);
    expect(context.json.catalogTables).toBe(catalog.json.tables.length);
    expectError(await call('/api/schema/context', { method: 'POST', body: {} }), 'usage');
  });

  it('thumbs up stores an example; thumbs down with a correction replaces its SQL', async () => {
    const question = 'how many orders were delivered';
    const up = await call('/api/feedback', {
      method: 'POST',
      body: { rating: 'up', question, sql: "SELECT count(*) FROM orders WHERE status = 'delivered'" },
    });
    expect(up.json.stored).toMatchObject({ action: 'ADD', kind: 'example' });
    const down = await call('/api/feedback', {
      method: 'POST',
      body: {
        rating: 'down',
        question,
        sql: 'SELECT 1',
        correctedSql: "SELECT count(*) AS delivered FROM orders WHERE status = 'delivered'",
      },
    });
    expect(down.json.stored).toMatchObject({ action: 'UPDATE', id: up.json.stored.id });
    const examples = (await call('/api/memories?kind=example')).json.memories;
    expect(examples).toHaveLength(1);
    expect(examples[0].sql).toContain('AS delivered');
    expect(
      (await call('/api/feedback', { method: 'POST', body: { rating: 'down', question } })).json.stored,
    ).toBeNull();
    expectError(await call('/api/feedback', { method: 'POST', body: { rating: 'up', question } }), 'usage');
    expectError(
      await call('/api/feedback', {
        method: 'POST',
        body: { rating: 'up', question, sql: 'DROP TABLE orders' },
      }),
      'guard_refused',
    );
  });
});

describe('local mode', () => {
  it('signs every request in as the configured user, only for loopback Host names', async () => {
    const local = s.appFor({ mode: 'local', user: 'me' });
    const ok = await local.request('http://localhost/api/me');
    expect(await ok.json()).toEqual({ user: 'me', mode: 'local' });
    expect((await local.request('http://127.0.0.1:8484/api/me')).status).toBe(200);
    const rebound = await local.request('http://evil.example/api/me');
    expect(rebound.status).toBe(403);
    expect(await rebound.json()).toMatchObject({ error: { code: 'forbidden' } });
  });
});
