/**
 * The defog questions with MySQL gold SQL on MariaDB (databases loaded by
 * scripts/load-defog-mysql.mjs, as `.ci/run` does): every gold statement passes the MySQL guard and
 * runs through the one SQL path (`runCheckedSql`: guard, READ ONLY session and transaction, row
 * cap) with exactly the rows the same statement gives on an admin connection. Skips when the
 * server or the loaded databases are absent.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { MYSQL_SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { runCheckedSql } from '../src/agent/run-sql.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { runSqlrecall } from './support/cli.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, TEST_MYSQL_URL } from './support/mysql-db.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

const questions: Record<string, string>[] = HAS_BENCHMARKS
  ? parse(readFileSync(benchmarkPath('defog', 'questions_gen_mysql.csv')), { columns: true })
  : [];

/** Whether the loader ran: the smallest loaded database answers. */
const LOADED =
  MYSQL_AVAILABLE &&
  HAS_BENCHMARKS &&
  (await createTempMysqlDatabase('sqlrecall_probe').then(async (temp) => {
    const rows = await temp.query(
      "SELECT COUNT(*) AS n FROM information_schema.SCHEMATA WHERE SCHEMA_NAME LIKE 'defog\\_%'",
    );
    await temp.drop();
    return Number(rows[0]!.n) >= 11;
  }));

function urlFor(database: string): string {
  const url = new URL(TEST_MYSQL_URL.replace(/^(mysql|mariadb):/, 'http:'));
  url.pathname = `/${database}`;
  return url.toString().replace(/^http:/, 'mysql:');
}

const normalise = (rows: unknown[][]) =>
  rows.map((row) => row.map((v) => (v === null ? null : String(v)))).sort();

describe.skipIf(!LOADED)('defog MySQL gold SQL on MariaDB through the SQL path', () => {
  const connectors = new Map<string, DatabaseConnector>();
  afterAll(async () => {
    for (const db of connectors.values()) await db.close();
  });

  it('answers every gold question with the gold rows', async () => {
    let same = 0;
    let engineErrors = 0;
    const problems: string[] = [];
    for (const q of questions) {
      const gold = q.query!.split(';')[0]!;
      const name = `defog_${q.db_name}`;
      let db = connectors.get(name);
      if (!db) {
        db = await openDatabase(urlFor(name));
        connectors.set(name, db);
      }
      // A few gold statements use MySQL 8 behaviour MariaDB lacks (an alias of an aggregate
      // inside ORDER BY CASE): counted apart, they say nothing about this path.
      const direct = await db.execute(gold, { maxRows: 10_000, timeoutMs: 10_000 }).catch(() => undefined);
      if (!direct) {
        engineErrors += 1;
        continue;
      }
      try {
        const { result } = await runCheckedSql({ db, sql: gold, maxRows: 10_000, timeoutMs: 10_000 });
        if (JSON.stringify(normalise(result.rows)) === JSON.stringify(normalise(direct.rows))) same += 1;
        else problems.push(`${q.db_name}: rows differ for ${gold.slice(0, 80)}`);
      } catch (error) {
        problems.push(`${q.db_name}: ${(error as Error).message} :: ${gold.slice(0, 80)}`);
      }
    }
    console.log(
      `defog MySQL gold through the SQL path: ${same}/${questions.length} with the gold rows, ${engineErrors} that MariaDB itself rejects`,
    );
    expect(problems).toEqual([]);
    expect(same + engineErrors).toBe(questions.length);
    expect(same).toBeGreaterThan(questions.length * 0.8);
  }, 120_000);
});

describe.skipIf(!LOADED)('defog MySQL questions asked through the scripted model on MariaDB', () => {
  it('answers the restaurants questions with the gold rows (sqlrecall ask --json)', async () => {
    const cases = questions.filter((q) => q.db_name === 'restaurants');
    const goldOf = new Map(cases.map((q) => [q.question!, q.query!.split(';')[0]!]));
    const model = await startScriptedOllama({
      chat: (req) => {
        const system = req.messages?.[0]?.content ?? '';
        const user = req.messages?.at(-1)?.content ?? '';
        if (!system.startsWith(MYSQL_SQL_PROMPT_MARKER)) return 'The rows above answer the question.';
        const question = /^Question: (.*)$/ms.exec(user)?.[1]?.trim() ?? '';
        const gold = goldOf.get(question);
        return gold
          ? `\`\`\`sql\n${gold}\n\`\`\``
          : { text: 'unknown question', status: 500, error: 'unknown question' };
      },
    });
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-mysql-e2e-'));
    const db = await openDatabase(urlFor('defog_restaurants'));
    let same = 0;
    let engineErrors = 0;
    let binary = false;
    const failures: string[] = [];
    try {
      for (const q of cases) {
        // Gold SQL MariaDB itself rejects (see above) can only end in a repair loop: not asked.
        const gold = await db
          .execute(goldOf.get(q.question!)!, { maxRows: 100_000, timeoutMs: 10_000 })
          .catch(() => undefined);
        if (!gold) {
          engineErrors += 1;
          continue;
        }
        const args = [
          'ask',
          '--json',
          '--max-rows',
          '100000',
          '--db',
          urlFor('defog_restaurants'),
          '--',
          q.question!,
        ];
        const env = { OLLAMA_HOST: model.url, SQLRECALL_HOME: home, SQLRECALL_MEMORY: 'off' };
        // In this process for every question; the first one also through the real binary.
        const failed = failures.length;
        const runs = [await runCliInProcess(args, { env })];
        if (!binary) {
          binary = true;
          runs.push(await runSqlrecall(args, { env }));
        }
        for (const run of runs) {
          if (run.code !== 0) {
            failures.push(`exit ${run.code}: ${run.stderr.trim().slice(0, 200)}`);
            continue;
          }
          const doc = JSON.parse(run.stdout) as { rows: unknown[][] };
          if (JSON.stringify(normalise(doc.rows)) !== JSON.stringify(normalise(gold.rows)))
            failures.push(`rows differ: ${q.question}`);
        }
        if (failures.length === failed) same += 1;
      }
    } finally {
      await db.close();
      await model.close();
      rmSync(home, { recursive: true, force: true });
    }
    console.log(
      `defog MySQL restaurants through ask and the scripted model: ${same}/${cases.length} with the gold rows, ${engineErrors} not asked (MariaDB rejects the gold SQL)`,
    );
    expect(failures).toEqual([]);
    expect(binary).toBe(true);
    expect(same + engineErrors).toBe(cases.length);
    expect(same).toBeGreaterThan(cases.length * 0.8);
  }, 300_000);
});
