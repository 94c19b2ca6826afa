/**
 * The data policy on the front ends: `POST /api/sql`, `POST /api/ask` (the scripted model writes
 * the SQL) and the `sql` use case as the CLI and MCP call it (`runSql` with the configured user)
 * all run a user's statements under that user's policy, whoever wrote them; another user of the
 * same server is not restricted. The policy comes from the runtime's resolver hook (the policy
 * file fills it). Hostile statements are refused with HTTP 403 and the policy's name.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runSql, sqlRuntimeOf } from '../src/app/run-sql.js';
import { type EffectivePolicy, unrestrictedPolicy } from '../src/policy/types.js';
import { startTestServer, type TestServer } from './support/server-app.js';

/** priya sees customers of India only, never their names' orders amounts. */
function priyaPolicy(): EffectivePolicy {
  return {
    ...unrestrictedPolicy('priya'),
    sources: ['user priya'],
    deniedColumns: new Map([['public.orders', new Map([['total_amount', 'user priya']])]]),
    rowFilters: new Map([
      ['public.customers', [{ expression: 'country = $1', params: ['India'], policy: 'user priya' }]],
    ]),
  };
}

let s: TestServer;
let priya: string;
let other: string;

const post = async (token: string, path: string, body: unknown) => {
  const res = await s.app.request(path, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
};

beforeAll(async () => {
  s = await startTestServer('users');
  s.runtime.setPolicyResolver((user) => (user === 'priya' ? priyaPolicy() : unrestrictedPolicy(user)));
  priya = await s.users.add('priya');
  other = await s.users.add('omar');
}, 180_000);

afterAll(async () => {
  await s?.close();
});

describe('data policy on every front end', () => {
  it('POST /api/sql filters rows for the user and not for another', async () => {
    const sql = 'SELECT name, country FROM customers ORDER BY name';
    const mine = await post(priya, '/api/sql', { sql });
    expect(mine.status).toBe(200);
    expect(mine.body.rows).toEqual([
      ['Asha', 'India'],
      ['Dev', 'India'],
    ]);
    const theirs = await post(other, '/api/sql', { sql });
    expect(theirs.body.rowCount).toBe(4);
  });

  it('POST /api/sql refuses a denied column with 403, naming the policy', async () => {
    const refused = await post(priya, '/api/sql', { sql: 'SELECT sum(o.total_amount) FROM orders o' });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toMatch(/user priya/);
    expect(JSON.stringify(refused.body)).not.toMatch(/27350/);
  });

  it("POST /api/ask runs the model's SQL under the user's policy", async () => {
    s.sqlReply = () => '```sql\nSELECT count(*) AS n FROM customers\n```';
    const answer = await post(priya, '/api/ask', { question: 'how many customers are there?' });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(JSON.stringify(answer.body)).toMatch(/"rows":\[\["2"\]\]/);
    s.sqlReply = () => '```sql\nSELECT row_to_json(o) FROM orders o\n```';
    const refused = await post(priya, '/api/ask', { question: 'show every order as JSON' });
    expect(refused.status).toBe(403);
    expect(JSON.stringify(refused.body)).toMatch(/user priya/);
    s.sqlReply = undefined;
  });

  it('the sql use case (CLI and MCP) runs as the configured user', async () => {
    const runtime = sqlRuntimeOf(s.runtime);
    const run = await runSql({ sql: 'SELECT count(*) FROM customers', user: 'priya' }, runtime);
    expect(run.result.rows).toEqual([['2']]);
    await expect(
      runSql({ sql: 'SELECT total_amount FROM orders', user: 'priya' }, runtime),
    ).rejects.toMatchObject({ code: 'policy_refused', exitCode: 3 });
  });
});
