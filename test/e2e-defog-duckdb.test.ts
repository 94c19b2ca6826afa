/**
 * The defog questions on DuckDB over folders of Parquet files (one folder per database, written by
 * scripts/export-defog-parquet.mjs, as `.ci/run` does): each PostgreSQL gold statement runs
 * through the one SQL path (`runCheckedSql`: the DuckDB guard, then the read-only engine) and its
 * rows are compared with the same statement on embedded PostgreSQL (PGlite) over the same dump.
 * DuckDB speaks most of PostgreSQL; where it does not, the failure is a dialect difference and is
 * counted by kind, not hidden: what must never happen is a statement the guard wrongly refuses
 * for a function DuckDB has, or rows that differ (a value decoded wrongly). A few questions also
 * go through `ask` with the scripted model. Skips when the benchmark data or the folders are absent.
 */
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { type DefogQuestion, expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import { DIALECTS } from '../src/sql/dialects.js';
import { DEFOG_DATABASES, defogDump } from './support/defog.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';
import { tempDir } from './support/temp-dir.js';

/** Where scripts/export-defog-parquet.mjs writes by default. */
const PARQUET_DIR = join(tmpdir(), 'sqlrecall-defog', 'parquet');
const EXPORTED = HAS_BENCHMARKS && DEFOG_DATABASES.every((name) => existsSync(join(PARQUET_DIR, name)));

/**
 * Canonical text of a cell, so PGlite's JavaScript values and the connector's JSON cells compare
 * equal: numbers to 6 significant digits (DuckDB's FLOAT is PostgreSQL's REAL, 32 bits, where
 * PostgreSQL's is 64: `CAST(x AS FLOAT)` differs past the seventh digit by dialect, not by decoding),
 * timestamps with a space, no zone, no zero fraction, and a midnight timestamp as its date.
 */
function canon(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 't' : 'f';
  if (value instanceof Date) return canon(value.toISOString());
  if (typeof value === 'number' || typeof value === 'bigint')
    return String(Number(Number(value).toPrecision(6)));
  if (typeof value === 'object') return JSON.stringify(value);
  const text = String(value);
  if (/^-?\d+(\.\d+)?(e[+-]?\d+)?$/i.test(text)) return String(Number(Number(text).toPrecision(6)));
  const stamp = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d:\d\d)(\.\d+)?(Z|[+-]\d\d(:?\d\d)?)?$/.exec(text);
  if (stamp) {
    const fraction = (stamp[3] ?? '').replace(/0+$/, '').replace(/^\.$/, '');
    return stamp[2] === '00:00:00' && fraction === '' ? stamp[1]! : `${stamp[1]} ${stamp[2]}${fraction}`;
  }
  return text;
}

const canonRows = (rows: unknown[][]) => rows.map((row) => row.map(canon).join('\u0001')).sort();

function firstGold(q: DefogQuestion): string {
  return expandGoldQuery(splitGoldQueries(q.query)[0]!, 'first')[0]!;
}

/** A short kind of a DuckDB failure, for the tally: the error kind and its first words. */
function failureKind(error: unknown): string {
  if (error instanceof SqlrecallError && error.code === 'guard_refused')
    return `guard ${String((error.details as { rule?: string }).rule)}: ${error.message.slice(0, 70)}`;
  const message = error instanceof Error ? error.message : String(error);
  return message
    .split('\n')[0]!
    .replace(/"[^"]*"/g, '"…"')
    .slice(0, 70);
}

describe.skipIf(!EXPORTED)('defog PostgreSQL gold SQL on DuckDB over Parquet folders', () => {
  let reference: PGlite;
  const connectors = new Map<string, DatabaseConnector>();
  let questions: DefogQuestion[] = [];

  beforeAll(async () => {
    questions = await readDefogCsv(benchmarkPath('defog', 'questions_gen_postgres.csv'));
    // One embedded PostgreSQL for the reference rows: each dump loads into `public`, which is then
    // renamed after the database.
    reference = new PGlite();
    for (const name of DEFOG_DATABASES) {
      await reference.exec(defogDump(name));
      await reference.exec(`ALTER SCHEMA public RENAME TO "ref_${name}"; CREATE SCHEMA public;`);
    }
  }, 300_000);
  afterAll(async () => {
    for (const db of connectors.values()) await db.close();
    await reference?.close();
  });

  const goldRows = async (name: string, sql: string): Promise<unknown[][] | undefined> => {
    try {
      await reference.exec(`SET search_path TO "ref_${name}"`);
      return (await reference.query<unknown[]>(sql, [], { rowMode: 'array' })).rows;
    } catch {
      return undefined;
    }
  };

  it('answers the gold questions with the gold rows, every failure a dialect difference', async () => {
    let same = 0;
    let referenceErrors = 0;
    const kinds = new Map<string, number>();
    const problems: string[] = [];
    for (const q of questions) {
      const gold = firstGold(q);
      const expected = await goldRows(q.dbName, gold);
      if (!expected) {
        referenceErrors += 1;
        continue;
      }
      let db = connectors.get(q.dbName);
      if (!db) {
        db = await openDatabase(`${join(PARQUET_DIR, q.dbName)}/`);
        connectors.set(q.dbName, db);
      }
      try {
        const { result } = await runCheckedSql({ db, sql: gold, maxRows: 100_000, timeoutMs: 20_000 });
        if (JSON.stringify(canonRows(result.rows)) === JSON.stringify(canonRows(expected))) same += 1;
        else problems.push(`${q.dbName}: rows differ for ${gold.slice(0, 100)}`);
      } catch (error) {
        const kind = failureKind(error);
        kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
        // The guard may refuse only what DuckDB could not run either (a PostgreSQL function
        // DuckDB lacks): a statement the engine runs, run directly past the guard, is a false refusal.
        if (error instanceof SqlrecallError && error.code === 'guard_refused') {
          const ran = await db.execute(gold, { maxRows: 100_000, timeoutMs: 20_000 }).then(
            () => true,
            () => false,
          );
          if (ran)
            problems.push(
              `${q.dbName}: guard refused what DuckDB runs (${error.message}) :: ${gold.slice(0, 100)}`,
            );
        }
      }
    }
    const asked = questions.length - referenceErrors;
    console.log(
      `duckdb (parquet): ${same}/${asked} gold questions with the gold rows (${referenceErrors} the reference itself rejects)`,
    );
    for (const [kind, count] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${count} × ${kind}`);
    expect(problems).toEqual([]);
    expect(same).toBeGreaterThan(asked * 0.8);
  }, 300_000);

  it('answers restaurants questions through ask and the scripted model', async () => {
    const cases = questions.filter((q) => q.dbName === 'restaurants').slice(0, 5);
    const goldOf = new Map(cases.map((q) => [q.question, firstGold(q)]));
    const model = await startScriptedOllama({
      chat: (req) => {
        const system = req.messages?.[0]?.content ?? '';
        const user = req.messages?.at(-1)?.content ?? '';
        if (!system.startsWith(DIALECTS.duckdb.promptMarker)) return 'The rows above answer the question.';
        const question = /^Question: (.*)$/ms.exec(user)?.[1]?.trim() ?? '';
        const gold = goldOf.get(question);
        return gold
          ? `\`\`\`sql\n${gold}\n\`\`\``
          : { text: 'unknown question', status: 500, error: 'unknown question' };
      },
    });
    const home = tempDir('sqlrecall-duckdb-e2e-');
    const folder = `${join(PARQUET_DIR, 'restaurants')}/`;
    const failures: string[] = [];
    let same = 0;
    try {
      for (const q of cases) {
        const expected = await goldRows('restaurants', goldOf.get(q.question)!);
        const run = await runCliInProcess(
          ['ask', '--json', '--max-rows', '100000', '--db', folder, '--', q.question],
          {
            env: { OLLAMA_HOST: model.url, SQLRECALL_HOME: home, SQLRECALL_MEMORY: 'off' },
          },
        );
        if (run.code !== 0) {
          failures.push(`exit ${run.code}: ${run.stderr.trim().slice(0, 200)}`);
          continue;
        }
        const doc = JSON.parse(run.stdout) as { rows: unknown[][] };
        if (expected && JSON.stringify(canonRows(doc.rows)) === JSON.stringify(canonRows(expected)))
          same += 1;
        else failures.push(`rows differ: ${q.question}`);
      }
    } finally {
      await model.close();
    }
    console.log(`duckdb (parquet) restaurants through ask and the scripted model: ${same}/${cases.length}`);
    expect(failures).toEqual([]);
    expect(same).toBe(cases.length);
  }, 300_000);
});
