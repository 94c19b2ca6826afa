/**
 * The defog questions with SQLite gold SQL on SQLite files (loaded by scripts/load-defog-sqlite.mjs,
 * as `.ci/run` does): every gold statement passes the SQLite guard and runs through the one SQL
 * path (`runCheckedSql`: guard, read-only file, the engine's read-only check, row cap) with exactly
 * the rows better-sqlite3 gives for the same statement run directly; a handful go through `ask`
 * with the scripted model. Skips when the loaded files are absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { DIALECTS } from '../src/sql/dialects.js';
import { betterSqliteInstalled } from './support/conformance/sqlite.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';
import { tempDir } from './support/temp-dir.js';

// @ts-expect-error: a plain JavaScript script without type declarations
const { DEFAULT_SQLITE_DEFOG_DIR } = (await import('../scripts/load-defog-sqlite.mjs')) as {
  DEFAULT_SQLITE_DEFOG_DIR: string;
};

const DIR = process.env.SQLRECALL_DEFOG_SQLITE_DIR ?? DEFAULT_SQLITE_DEFOG_DIR;

// The file has one question whose text holds a stray quote: read leniently, as the rows are whole.
const questions: Record<string, string>[] = HAS_BENCHMARKS
  ? parse(readFileSync(benchmarkPath('defog', 'questions_gen_sqlite.csv')), {
      columns: true,
      relax_quotes: true,
    })
  : [];

const fileOf = (name: string) => join(DIR, `${name}.db`);
const LOADED =
  betterSqliteInstalled() && questions.length > 0 && questions.every((q) => existsSync(fileOf(q.db_name!)));

const normalise = (rows: unknown[][]) =>
  rows.map((row) => row.map((v) => (v === null ? null : String(v)))).sort();

/** The gold statement's rows from better-sqlite3 directly (read-only), or undefined when SQLite rejects it. */
async function direct(name: string, sql: string): Promise<unknown[][] | undefined> {
  const { default: Database } = await import('better-sqlite3');
  const db = new Database(fileOf(name), { readonly: true, fileMustExist: true });
  try {
    return db.prepare(sql).raw(true).all() as unknown[][];
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

describe.skipIf(!LOADED)('defog SQLite gold SQL through the SQL path', () => {
  const connectors = new Map<string, DatabaseConnector>();
  afterAll(async () => {
    for (const db of connectors.values()) await db.close();
  });

  it('answers the gold questions with the gold rows', async () => {
    let same = 0;
    let engineErrors = 0;
    const problems: string[] = [];
    for (const q of questions) {
      const gold = q.query!.split(';')[0]!;
      const expected = await direct(q.db_name!, gold);
      if (!expected) {
        engineErrors += 1;
        continue;
      }
      let db = connectors.get(q.db_name!);
      if (!db) {
        db = await openDatabase(`sqlite:${fileOf(q.db_name!)}`);
        connectors.set(q.db_name!, db);
      }
      try {
        const { result } = await runCheckedSql({ db, sql: gold, maxRows: 10_000, timeoutMs: 10_000 });
        if (JSON.stringify(normalise(result.rows)) === JSON.stringify(normalise(expected))) same += 1;
        else problems.push(`${q.db_name}: rows differ for ${gold.slice(0, 80)}`);
      } catch (error) {
        problems.push(`${q.db_name}: ${(error as Error).message} :: ${gold.slice(0, 80)}`);
      }
    }
    console.log(
      `sqlite: ${same}/${questions.length} gold questions with the gold rows, ${engineErrors} that SQLite itself rejects`,
    );
    expect(problems).toEqual([]);
    expect(same + engineErrors).toBe(questions.length);
    expect(same).toBeGreaterThan(questions.length * 0.8);
  }, 300_000);
});

describe.skipIf(!LOADED)('defog SQLite questions asked through the scripted model', () => {
  it('answers restaurants questions with the gold rows (sqlrecall ask --json)', async () => {
    const cases = questions.filter((q) => q.db_name === 'restaurants').slice(0, 5);
    const goldOf = new Map(cases.map((q) => [q.question!, q.query!.split(';')[0]!]));
    const model = await startScriptedOllama({
      chat: (req) => {
        const system = req.messages?.[0]?.content ?? '';
        const user = req.messages?.at(-1)?.content ?? '';
        if (!system.startsWith(DIALECTS.sqlite.promptMarker)) return 'The rows above answer the question.';
        const question = /^Question: (.*)$/ms.exec(user)?.[1]?.trim() ?? '';
        const gold = goldOf.get(question);
        return gold
          ? `\`\`\`sql\n${gold}\n\`\`\``
          : { text: 'unknown question', status: 500, error: 'unknown question' };
      },
    });
    const home = tempDir('sqlrecall-sqlite-e2e-');
    let same = 0;
    const failures: string[] = [];
    try {
      for (const q of cases) {
        const expected = await direct('restaurants', goldOf.get(q.question!)!);
        expect(expected).toBeDefined();
        const run = await runCliInProcess(
          [
            'ask',
            '--json',
            '--max-rows',
            '100000',
            '--db',
            `sqlite:${fileOf('restaurants')}`,
            '--',
            q.question!,
          ],
          { env: { OLLAMA_HOST: model.url, SQLRECALL_HOME: home, SQLRECALL_MEMORY: 'off' } },
        );
        if (run.code !== 0) {
          failures.push(`exit ${run.code}: ${run.stderr.trim().slice(0, 200)}`);
          continue;
        }
        const doc = JSON.parse(run.stdout) as { rows: unknown[][] };
        if (JSON.stringify(normalise(doc.rows)) === JSON.stringify(normalise(expected!))) same += 1;
        else failures.push(`rows differ: ${q.question}`);
      }
    } finally {
      await model.close();
    }
    console.log(`sqlite: ${same}/${cases.length} restaurants questions through ask with the gold rows`);
    expect(failures).toEqual([]);
    expect(same).toBe(cases.length);
  }, 300_000);
});
