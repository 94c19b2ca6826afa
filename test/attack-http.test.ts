/**
 * Issue 4, "Attack corpus", the HTTP leg: the scripted model returns every hostile statement of
 * the corpus to `POST /api/ask` (JSON and SSE); each is refused (422 `guard_refused`, or an
 * unusable-output 502 for prose the extractor cannot even find), nothing of it runs, and the
 * database is unchanged afterwards.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ATTACKS, existingCorpusFiles } from './support/attacks.js';
import { snapshotWith } from './support/fixtures.js';
import { parseSse, startTestServer, type TestServer } from './support/server-app.js';

describe('the attack corpus through the HTTP API', () => {
  let s: TestServer;
  let local: TestServer['app'];
  let before: string;
  /** Snapshot through the server's own connection (a PGlite directory is opened by one owner only). */
  const snapshot = async () => {
    const db = await s.runtime.database();
    return snapshotWith(async (sql) => {
      const result = await db.execute(sql, { maxRows: 10_000, timeoutMs: 30_000 });
      const rows = result.rows.map((row) =>
        Object.fromEntries(result.columns.map((c, i) => [c.name, String(row[i])])),
      );
      return { rows };
    });
  };

  beforeAll(async () => {
    s = await startTestServer('local');
    local = s.appFor({ mode: 'local', user: 'mallory' });
    before = await snapshot();
  });
  afterAll(async () => s?.close());

  it('POST /api/ask refuses every record the model returns (JSON)', async () => {
    const problems: string[] = [];
    for (const attack of ATTACKS) {
      s.sqlReply = () => `\`\`\`sql\n${attack.sql}\n\`\`\``;
      const res = await local.request('http://localhost/api/ask', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ question: `attack ${attack.id}`, skipAnswer: true }),
      });
      const body = (await res.json()) as { error?: { code: string }; sql?: string | null };
      if (attack.askSql) {
        // The extractor found only a harmless statement before an unterminated comment.
        if (res.status !== 200 || body.sql !== attack.askSql) problems.push(`${attack.id}: ${res.status}`);
        continue;
      }
      const refused = res.status === 422 && body.error?.code === 'guard_refused';
      // A parse error goes back to the model for repair (issue 11); still unparsable after the bounded
      // rounds it is unusable output (502), and it never runs.
      const noSql =
        attack.rule === 'parse-error' &&
        res.status === 502 &&
        (body.error?.code === 'sql_not_found' || body.error?.code === 'model_output');
      if (!refused && !noSql)
        problems.push(`${attack.id}: ${res.status} ${JSON.stringify(body).slice(0, 200)}`);
    }
    expect(problems).toEqual([]);
  }, 300_000);

  it('the SSE stream ends with a refusal, never rows, for a sample', async () => {
    for (const attack of ATTACKS.filter((a, i) => i % 20 === 0 && !a.askSql && a.rule !== 'parse-error')) {
      s.sqlReply = () => `\`\`\`sql\n${attack.sql}\n\`\`\``;
      const res = await local.request('http://localhost/api/ask', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ question: `sse attack ${attack.id}`, skipAnswer: true }),
      });
      const events = parseSse(await res.text()).map((e) => e.event);
      expect(events, attack.id).toContain('refused');
      expect(events, attack.id).not.toContain('rows');
      expect(events.at(-1), attack.id).toBe('error');
    }
  }, 120_000);

  it('leaves the database unchanged and creates no file', async () => {
    expect(await snapshot()).toBe(before);
    expect(existingCorpusFiles()).toEqual([]);
  });
});
