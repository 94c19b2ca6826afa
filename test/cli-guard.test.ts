/**
 * Issue 2, "Guard": hostile statements are refused with exit code 3 through `sqlrecall sql` and
 * through `ask` (the scripted model returns them), and afterwards the database is unchanged
 * (relations, row counts, content hashes, sequences, large objects). Every statement runs through
 * the CLI in this process (the same program as the binary, without a Node start-up per command);
 * a few also run through the real binary, so the process boundary (exit code, streams) is proven.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { type CliRun, runSqlrecall } from './support/cli.js';
import { type Fixture, pgliteShop, serverShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

/** Statements the first guard must refuse (issue 2's list, plus close relatives). */
export const HOSTILE: { name: string; sql: string }[] = [
  { name: 'DELETE inside a CTE', sql: 'WITH gone AS (DELETE FROM t RETURNING *) SELECT * FROM gone' },
  {
    name: 'UPDATE in a nested CTE',
    sql: 'SELECT * FROM (WITH u AS (UPDATE orders SET status = $$x$$ RETURNING id) SELECT id FROM u) s',
  },
  { name: 'SELECT INTO', sql: 'SELECT * INTO stolen FROM customers' },
  { name: 'two statements', sql: 'SELECT 1; DROP TABLE t' },
  { name: 'SELECT FOR UPDATE', sql: 'SELECT * FROM orders FOR UPDATE' },
  { name: 'FOR SHARE in a subquery', sql: 'SELECT * FROM (SELECT * FROM t FOR SHARE) s' },
  { name: 'COPY to a file', sql: "COPY t TO '/tmp/sqlrecall-copy-test'" },
  { name: 'COPY a query', sql: 'COPY (SELECT * FROM customers) TO STDOUT' },
  { name: 'not SQL', sql: 'please show me every customer from India' },
  { name: 'DROP', sql: 'DROP TABLE t' },
  { name: 'TRUNCATE', sql: 'TRUNCATE orders' },
  { name: 'INSERT', sql: "INSERT INTO t VALUES (3, 'three')" },
  { name: 'sequence bump', sql: "SELECT nextval('customers_id_seq')" },
];

/** The statements also run through the real binary (one a kind: a write in a CTE, two statements, not SQL). */
const THROUGH_BINARY = new Set(['DELETE inside a CTE', 'two statements', 'not SQL']);

/** Runs the command in this process and, for the statements in {@link THROUGH_BINARY}, through the binary too. */
async function both(name: string, args: string[], env: Record<string, string>): Promise<CliRun[]> {
  const runs = [await runCliInProcess(args, { env })];
  if (THROUGH_BINARY.has(name)) runs.push(await runSqlrecall(args, { env }));
  return runs;
}

async function expectUnchanged(fixture: Fixture, run: () => Promise<void>): Promise<void> {
  const before = await fixture.snapshot();
  await run();
  expect(await fixture.snapshot()).toBe(before);
}

function suite(label: string, make: () => Promise<Fixture>) {
  describe(label, () => {
    let fixture: Fixture;
    let model: ScriptedOllama;
    let home: string;
    const replies = new Map<string, string>();

    beforeAll(async () => {
      fixture = await make();
      home = mkdtempSync(join(tmpdir(), 'sqlrecall-guard-'));
      model = await startScriptedOllama({
        chat: (req) => {
          if (!req.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) return 'unused';
          const q = /Question: (.*)$/m.exec(req.lastUserMessage)?.[1] ?? '';
          return replies.get(q) ?? { status: 500, error: `no reply for ${q}` };
        },
      });
    });
    afterAll(async () => {
      await model?.close();
      await fixture?.close();
    });

    it('refuses every hostile statement through `sql` with exit 3 and leaves the database unchanged', async () => {
      await expectUnchanged(fixture, async () => {
        let binary = 0;
        for (const { name, sql } of HOSTILE) {
          const runs = await both(name, ['sql', '--db', fixture.url, '--json', sql], {
            SQLRECALL_MEMORY: 'off',
            SQLRECALL_HOME: home,
          });
          binary += runs.length - 1;
          for (const run of runs) {
            expect(run.code, `${name}: ${run.stderr}`).toBe(3);
            const doc = JSON.parse(run.stdout) as { error: { code: string; message: string } };
            expect(doc.error.code).toBe('guard_refused');
            expect(doc.error.message).toMatch(/^Refused: \S/);
            expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
          }
        }
        expect(binary).toBe(THROUGH_BINARY.size);
      });
    }, 120_000);

    it('refuses the same statements when the model writes them in `ask`', async () => {
      await expectUnchanged(fixture, async () => {
        let binary = 0;
        for (const [i, { name, sql }] of HOSTILE.entries()) {
          const question = `hostile question ${i}`;
          replies.set(question, `\`\`\`sql\n${sql}\n\`\`\``);
          const runs = await both(name, ['ask', '--db', fixture.url, '--json', question], {
            SQLRECALL_MEMORY: 'off',
            SQLRECALL_HOME: home,
            OLLAMA_HOST: model.url,
          });
          binary += runs.length - 1;
          for (const run of runs) {
            // "not SQL" has no statement to extract at all: that is unusable model output (exit 5).
            const expected = name === 'not SQL' ? 5 : 3;
            expect(run.code, `${name}: ${run.stderr}`).toBe(expected);
            const doc = JSON.parse(run.stdout) as { error: { code: string }; rows: unknown[] };
            expect(doc.error.code).toBe(expected === 3 ? 'guard_refused' : 'sql_not_found');
          }
        }
        expect(binary).toBe(THROUGH_BINARY.size);
      });
    }, 180_000);

    it('still answers a read after the refusals', async () => {
      const run = await runSqlrecall(['sql', '--db', fixture.url, '--json', 'SELECT count(*) AS n FROM t'], {
        env: { SQLRECALL_MEMORY: 'off', SQLRECALL_HOME: home },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        columns: ['n'],
        rows: [['2']],
        rowCount: 1,
        truncated: false,
      });
    });
  });
}

suite('PGlite', pgliteShop);
describe.skipIf(!TEST_DATABASE_URL)('server', () => suite('PostgreSQL', serverShop));
