/**
 * Isolation over HTTP: two users with tokens. Every memory and conversation route is tried with
 * the other user's ids (and bodies naming the other user); nothing leaks or changes, and tokens
 * never reach the access log.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSse, revenueSql, startTestServer, type TestServer } from './support/server-app.js';

let s: TestServer;
let alice: string;
let bob: string;
let aliceMemory: string;
let aliceExample: string;

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

/** Everything alice has, as the store sees it. */
const aliceState = async () => {
  const doc = (await call(alice, '/api/memories/export')).json;
  const conversations = (await call(alice, '/api/conversations')).json.conversations;
  const turns = (await call(alice, '/api/conversations/alice-conv')).json;
  return JSON.stringify({ memories: doc.memories, history: doc.history, conversations, turns });
};

beforeAll(async () => {
  s = await startTestServer('users');
  alice = await s.users.add('alice');
  bob = await s.users.add('bob');
  await call(alice, '/api/ask', 'POST', { question: 'Always show me customers from India' });
  const asked = await call(alice, '/api/ask', 'POST', {
    question: 'revenue per customer',
    conversationId: 'alice-conv',
  });
  expect(asked.json.sql).toBe(revenueSql(true));
  aliceMemory = asked.json.appliedMemories[0].id;
  const fb = await call(alice, '/api/feedback', 'POST', {
    rating: 'up',
    question: 'secret alice question',
    sql: 'SELECT count(*) FROM orders',
  });
  aliceExample = fb.json.stored.id;
});
afterAll(async () => {
  await s?.close();
});

describe('two users over HTTP', () => {
  it("bob sees none of alice's memories or conversations", async () => {
    const before = await aliceState();
    const list = await call(bob, '/api/memories?status=all');
    expect(list.json.scope).toEqual({ user: 'bob' });
    expect(list.json.memories).toEqual([]);
    expect((await call(bob, '/api/memories/search?q=customers%20from%20India')).json.results).toEqual([]);
    expect((await call(bob, '/api/memories/history')).json.history).toEqual([]);
    const exported = (await call(bob, '/api/memories/export')).json;
    expect(exported.memories).toEqual([]);
    expect(JSON.stringify(exported)).not.toContain('India');
    expect((await call(bob, '/api/conversations')).json.conversations).toEqual([]);
    for (const id of [aliceMemory, aliceExample]) {
      expect((await call(bob, `/api/memories/${id}/history`)).status).toBe(404);
      expect((await call(bob, `/api/memories/${id}`, 'PATCH', { text: 'bob was here' })).status).toBe(404);
      expect((await call(bob, `/api/memories/${id}`, 'DELETE')).status).toBe(404);
      expect((await call(bob, `/api/memories/${id}/restore`, 'POST')).status).toBe(404);
      expect((await call(bob, `/api/memories/${id}/history?scope=team`)).status).toBe(403);
    }
    const conv = await call(bob, '/api/conversations/alice-conv');
    expect(conv.status).toBe(404);
    expect(conv.text).not.toContain('revenue');
    expect(await aliceState()).toBe(before);
  });

  it("bob's writes never land in alice's scope, whatever the body says", async () => {
    const before = await aliceState();
    // Extra body fields naming alice are ignored: the user comes from the token.
    const added = await call(bob, '/api/memories', 'POST', {
      kind: 'preference',
      text: 'only pending orders',
      user: 'alice',
      scope: { user: 'alice' },
    });
    expect(added.json.scope).toEqual({ user: 'bob' });
    await call(bob, '/api/memories/enabled', 'PUT', { enabled: false, user: 'alice' });
    expect((await call(alice, '/api/memories/enabled')).json.enabled).toBe(true);
    await call(bob, '/api/memories/enabled', 'PUT', { enabled: true });
    // Importing alice's export is only possible with her token; bob's import goes to bob.
    const aliceDoc = (await call(alice, '/api/memories/export')).json;
    const imported = await call(bob, '/api/memories/import', 'POST', aliceDoc);
    expect(imported.json.scope).toEqual({ user: 'bob' });
    await call(bob, '/api/feedback', 'POST', {
      rating: 'up',
      question: 'bob q',
      sql: 'SELECT 1',
      user: 'alice',
    });
    expect(await aliceState()).toBe(before);
    // Clean bob's copy so the next test sees an empty bank for him again.
    for (const m of (await call(bob, '/api/memories')).json.memories)
      await call(bob, `/api/memories/${m.id}`, 'DELETE');
  });

  it("bob's questions never see alice's memories or turns, even with her ids", async () => {
    const before = await aliceState();
    const prompts = s.sqlPrompts.length;
    const answer = await call(bob, '/api/ask', 'POST', {
      question: 'revenue per customer',
      conversationId: 'alice-conv',
      without: [aliceMemory],
      user: 'alice',
    });
    expect(answer.json.sql).toBe(revenueSql(false));
    expect(answer.json.appliedMemories).toEqual([]);
    const prompt = s.sqlPrompts.slice(prompts).join('\n');
    expect(prompt).not.toContain('India');
    expect(prompt).not.toContain('secret alice question');
    // Bob's "alice-conv" is his own conversation with one turn.
    expect((await call(bob, '/api/conversations/alice-conv')).json.conversation.turnCount).toBe(1);
    const streamed = parseSse(
      (await call(bob, '/api/ask', 'POST', { question: 'revenue per customer' }, 'text/event-stream')).text,
    );
    expect(streamed.some((e) => e.event === 'recalled')).toBe(false);
    expect(JSON.stringify(streamed)).not.toContain('India');
    expect(await aliceState()).toBe(before);
    // Alice still gets her preference.
    expect((await call(alice, '/api/ask', 'POST', { question: 'revenue per customer' })).json.sql).toBe(
      revenueSql(true),
    );
  });

  it("with memory off, the same conversation id never carries one user's turns to another, on any route", async () => {
    // Both users turn memory off: their turns are kept in the server process only.
    for (const t of [alice, bob]) await call(t, '/api/memories/enabled', 'PUT', { enabled: false });
    const secret = 'alice-secret-4711';
    s.sqlReply = (prompt) =>
      prompt.includes('secret question of alice')
        ? `\`\`\`sql\nSELECT '${secret}' AS token\n\`\`\``
        : `\`\`\`sql\n${revenueSql(false)}\n\`\`\``;
    try {
      const first = await call(alice, '/api/ask', 'POST', {
        question: 'secret question of alice',
        conversationId: 'shared-conv',
      });
      expect(first.json.sql).toContain(secret);
      // Alice's own follow-up sees her previous turn (the fallback works at all).
      let mark = s.sqlPrompts.length;
      await call(alice, '/api/ask', 'POST', { question: 'and per country?', conversationId: 'shared-conv' });
      expect(s.sqlPrompts.slice(mark).join('\n')).toContain(secret);
      // Bob, same id, JSON and SSE: nothing of alice's conversation reaches his prompt or his answer.
      mark = s.sqlPrompts.length;
      const json = await call(bob, '/api/ask', 'POST', {
        question: 'revenue please',
        conversationId: 'shared-conv',
      });
      const sse = await call(
        bob,
        '/api/ask',
        'POST',
        { question: 'and again', conversationId: 'shared-conv' },
        'text/event-stream',
      );
      const bobPrompts = s.sqlPrompts.slice(mark).join('\n');
      expect(bobPrompts).not.toContain(secret);
      expect(bobPrompts).not.toContain('secret question of alice');
      expect(bobPrompts).toContain('revenue please');
      expect(json.text + sse.text).not.toContain(secret);
      // Bob's second question sees his first (his own conversation under the same id).
      expect(bobPrompts).toMatch(/Previous question: revenue please/);
      for (const path of ['/api/conversations', '/api/conversations/shared-conv', '/api/memories/export']) {
        const res = await call(bob, path);
        expect(res.text).not.toContain(secret);
        expect(res.text).not.toContain('secret question of alice');
      }
      expect((await call(bob, '/api/conversations/shared-conv')).status).toBe(404);
    } finally {
      s.sqlReply = undefined;
      for (const t of [alice, bob]) await call(t, '/api/memories/enabled', 'PUT', { enabled: true });
    }
  });

  it('tokens never appear in the access log', () => {
    expect(s.logs.length).toBeGreaterThan(20);
    const logged = JSON.stringify(s.logs);
    for (const t of [alice, bob]) {
      expect(logged).not.toContain(t);
      expect(logged).not.toContain(t.slice(4, 20));
    }
    expect(new Set(s.logs.map((l) => l.user))).toEqual(new Set(['alice', 'bob']));
  });
});
