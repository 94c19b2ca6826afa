/**
 * Applied and recalled memories, provenance and conversation evidence over HTTP, with a scripted
 * model: the SSE `applied` event and the JSON document list both kinds; `GET /api/memories/{id}`
 * says where a memory came from (a conversation, the user's words, by hand, imported, a confirmed
 * answer) and its supersessions; `GET /api/conversations/{id}` returns each turn's SQL and
 * memories. Another user's ids are 404 without their text.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, revenueSql, startTestServer, type TestServer } from './support/server-app.js';

const INDIA = 'Always show me customers from India';
const CHILE = 'Always show me customers from Chile';
const LOYAL = 'Loyal customer means a customer who came back after a complaint';

let s: TestServer;
let alice: string;
let bob: string;

const call = async (t: string, path: string, method = 'GET', body?: unknown, accept = 'application/json') => {
  const res = await s.app.request(path, {
    method,
    headers: { authorization: `Bearer ${t}`, 'content-type': 'application/json', accept },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  // biome-ignore lint/suspicious/noExplicitAny: JSON documents of the API under test, read field by field
  let json: any = null;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
};

beforeAll(async () => {
  s = await startTestServer('users');
  alice = await s.users.add('alice');
  bob = await s.users.add('bob');
});
afterAll(async () => {
  await s?.close();
});

describe('applied and recalled memories, provenance and evidence over HTTP', () => {
  let indiaId: string;
  let loyalId: string;

  it('SSE and JSON answers list applied and recalled memories apart', async () => {
    const taught = await call(alice, '/api/ask', 'POST', { question: INDIA, conversationId: 'conv-a' });
    expect(taught.status).toBe(200);
    indiaId = taught.json.remembered[0].id;
    const added = await call(alice, '/api/memories', 'POST', { kind: 'term', text: LOYAL });
    loyalId = added.json.changes[0].id;

    const sse = await call(
      alice,
      '/api/ask',
      'POST',
      { question: 'revenue per customer for loyal customers', conversationId: 'conv-a' },
      'text/event-stream',
    );
    const events = parseSse(sse.text);
    const applied = events.find((e) => e.event === 'applied')?.data as {
      memories: { id: string }[];
      recalled: { id: string; kind: string; text: string }[];
    };
    expect(applied.memories.map((m) => m.id)).toEqual([indiaId]);
    expect(applied.recalled).toEqual([{ id: loyalId, kind: 'term', text: LOYAL }]);
    const done = events.find((e) => e.event === 'done')?.data as { recalledMemories: unknown[] };
    expect(done.recalledMemories).toEqual([{ id: loyalId, kind: 'term', text: LOYAL }]);

    const json = await call(alice, '/api/ask', 'POST', { question: 'revenue per loyal customer' });
    expect(json.json.sql).toBe(revenueSql(true));
    expect(json.json.appliedMemories.map((m: { id: string }) => m.id)).toEqual([indiaId]);
    expect(json.json.recalledMemories).toEqual([{ id: loyalId, kind: 'term', text: LOYAL }]);
  });

  it('GET /api/memories/{id}: taught in which conversation, when, in which words; or by hand', async () => {
    const india = await call(alice, `/api/memories/${indiaId}`);
    expect(india.status).toBe(200);
    expect(india.json.origin).toMatchObject({
      how: 'chat',
      words: INDIA,
      conversation: { id: 'conv-a', exists: true, title: 'revenue per customer for loyal customers' },
    });
    expect(india.json.origin.summary).toMatch(/^taught in a conversation \("revenue per customer/);
    expect(india.json.origin.at).toBe(india.json.memory.createdAt);
    expect(Date.parse(india.json.lastAppliedAt)).toBeGreaterThan(Date.parse(india.json.memory.createdAt));
    expect(india.json.history.map((h: { action: string }) => h.action)).toEqual(['ADD']);

    const loyal = await call(alice, `/api/memories/${loyalId}`);
    expect(loyal.json.origin).toMatchObject({ how: 'hand', words: null, conversation: null });
    expect(loyal.json.origin.summary).toMatch(/^added by hand on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    expect(loyal.json.lastAppliedAt).toBeNull(); // recalled, never applied

    // The memory bank's list carries the last applied time too.
    const list = (await call(alice, '/api/memories')).json.memories as {
      id: string;
      lastAppliedAt: string | null;
    }[];
    expect(list.find((m) => m.id === indiaId)?.lastAppliedAt).toBe(india.json.lastAppliedAt);
    expect(list.find((m) => m.id === loyalId)?.lastAppliedAt).toBeNull();
  });

  it('supersessions carry the same detail both ways', async () => {
    const taught = await call(alice, '/api/ask', 'POST', { question: CHILE, conversationId: 'conv-b' });
    const chileId = taught.json.remembered[0].id as string;
    expect(taught.json.remembered[0].replaced?.id).toBe(indiaId);
    const chile = await call(alice, `/api/memories/${chileId}`);
    expect(chile.json.replaced).toEqual([
      expect.objectContaining({
        id: indiaId,
        text: INDIA,
        status: 'superseded',
        origin: expect.objectContaining({ how: 'chat', words: INDIA }),
      }),
    ]);
    const india = await call(alice, `/api/memories/${indiaId}`);
    expect(india.json.replacedBy).toMatchObject({
      id: chileId,
      text: CHILE,
      origin: { how: 'chat', words: CHILE, conversation: { id: 'conv-b' } },
    });
  });

  it('a confirmed answer and an import say so', async () => {
    const fb = await call(alice, '/api/feedback', 'POST', {
      rating: 'up',
      question: 'how many orders are there?',
      sql: 'SELECT count(*) FROM orders',
    });
    const confirmed = await call(alice, `/api/memories/${fb.json.stored.id}`);
    expect(confirmed.json.origin).toMatchObject({ how: 'confirmed', words: 'how many orders are there?' });
    expect(confirmed.json.origin.summary).toMatch(/^a confirmed answer on /);

    const doc = {
      format: 'sqlrecall-memory',
      version: 1,
      memories: [
        { id: '00000000-0000-4000-8000-000000000007', kind: 'context', text: 'Amounts are in euros' },
      ],
    };
    const imported = await call(alice, '/api/memories/import', 'POST', doc);
    expect(imported.status).toBe(200);
    const listed = (await call(alice, '/api/memories')).json.memories as { id: string; text: string }[];
    const id = listed.find((m) => m.text === 'Amounts are in euros')!.id;
    expect((await call(alice, `/api/memories/${id}`)).json.origin).toMatchObject({ how: 'import' });
  });

  it('GET /api/conversations/{id} returns each turn with its SQL and memories', async () => {
    const conv = await call(alice, '/api/conversations/conv-a');
    expect(conv.status).toBe(200);
    const turn = conv.json.turns.find(
      (t: { question: string }) => t.question === 'revenue per customer for loyal customers',
    );
    expect(turn.sql).toBe(revenueSql(true));
    expect(turn.appliedMemories).toEqual([{ id: indiaId, kind: 'preference', text: INDIA }]);
    expect(turn.recalledMemories).toEqual([{ id: loyalId, kind: 'term', text: LOYAL }]);
  });

  it("another user's memory and conversation ids are 404 and never show their text", async () => {
    for (const path of [
      `/api/memories/${indiaId}`,
      `/api/memories/${loyalId}`,
      '/api/conversations/conv-a',
    ]) {
      const r = await call(bob, path);
      expect(r.status, path).toBe(404);
      expect(r.json.error.code).toBe('not_found');
      for (const secret of [INDIA, LOYAL, 'loyal', 'conv-a'].filter((t) => !path.includes(t)))
        expect(r.text).not.toContain(secret);
    }
    // Bob's own answer lists nothing of alice's.
    const asked = await call(bob, '/api/ask', 'POST', { question: 'revenue per loyal customer' });
    expect(asked.json.appliedMemories).toEqual([]);
    expect(asked.json.recalledMemories).toEqual([]);
    // A malformed id is refused as such.
    expect((await call(alice, '/api/memories/not-an-id')).status).toBe(400);
  });
});
