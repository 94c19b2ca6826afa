/**
 * Concurrency over HTTP (the CI-sized form of `bench/http-load.ts`, no timings): 10 users with
 * their own preference ask at once; every answer is 200 and carries only its own user's memory.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from './support/server-app.js';

let s: TestServer;
const land = (u: number) => `Land${String.fromCharCode(97 + u)}`;

beforeAll(async () => {
  s = await startTestServer('users');
  s.sqlReply = (prompt) => {
    const country = /customers from (Land[a-z])/.exec(prompt)?.[1];
    return `SELECT c.name FROM customers c${country ? ` WHERE c.country = '${country}'` : ''}`;
  };
});
afterAll(async () => {
  await s?.close();
});

const ask = async (token: string, question: string) => {
  const res = await s.app.request('/api/ask', {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify({ question }),
  });
  return {
    status: res.status,
    doc: (await res.json()) as {
      sql: string;
      appliedMemories: { id: string }[];
      remembered?: { id: string }[];
    },
  };
};

it('10 concurrent users × 3 questions: no errors, no cross-talk', async () => {
  const tokens = await Promise.all(Array.from({ length: 10 }, (_, u) => s.users.add(`load${u}`)));
  const problems: string[] = [];
  await Promise.all(
    tokens.map(async (token, u) => {
      const taught = await ask(token, `Always show me customers from ${land(u)}`);
      const id = taught.doc.remembered?.[0]?.id;
      if (!id) problems.push(`load${u}: nothing remembered`);
      for (let q = 0; q < 3; q += 1) {
        const r = await ask(token, `customer names ${u}-${q}`);
        const lands = [...r.doc.sql.matchAll(/Land[a-z]/g)].map((m) => m[0]);
        if (r.status !== 200) problems.push(`load${u}-${q}: ${r.status}`);
        else if (lands.join() !== land(u) || r.doc.appliedMemories.map((m) => m.id).join() !== id)
          problems.push(`load${u}-${q}: ${r.doc.sql} ${JSON.stringify(r.doc.appliedMemories)}`);
      }
    }),
  );
  expect(problems).toEqual([]);
});
