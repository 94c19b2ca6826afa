/**
 * The table allowlist on SQLite and DuckDB over the defog gold SQL for SQLite
 * (`questions_gen_sqlite.csv`, the first statement of each answer), on the SQLite files
 * `scripts/load-defog-sqlite.mjs` writes:
 * - accepted: statements the guard accepts with every table of their database allowed (of those it
 *   accepts without an allowlist), per dialect; for SQLite also run through the connector opened
 *   with the allowlist (the check of the compiled program included);
 * - refused: for every table a statement reads (the tables whose b-trees SQLite's compiled program
 *   opens: the truth, not the guard's reading), the same statement with only that table left out
 *   of the list; the guard must refuse it, and for SQLite the check of the compiled program too
 *   (`table-access.ts`, called in process as the worker calls it);
 * - cost: the guard's p50 per statement without and with the allowlist, and for SQLite the p50 of
 *   a whole `execute` (child process round trip) without and with the check of the program.
 *
 *   npx tsx bench/allowlist-lite.ts [--repeat 5]
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import Database from 'better-sqlite3';
import { parse } from 'csv-parse/sync';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { openDatabase } from '../src/databases/open.js';
import { checkTableAccess } from '../src/databases/sqlite/table-access.js';
import { percentile } from '../src/eval/report.js';
import { guardDuckdbSql } from '../src/sql/duckdb/guard.js';
import type { GuardOptions, GuardVerdict } from '../src/sql/guard.js';
import { guardSqliteSql } from '../src/sql/sqlite/guard.js';
import { benchmarkPath } from '../test/support/shared-data.js';

// @ts-expect-error: a plain JavaScript script without type declarations
const { DEFAULT_SQLITE_DEFOG_DIR } = (await import('../scripts/load-defog-sqlite.mjs')) as {
  DEFAULT_SQLITE_DEFOG_DIR: string;
};

const { values } = parseArgs({ options: { repeat: { type: 'string', default: '5' } } });
const repeat = Math.max(1, Number(values.repeat));
const dir = process.env.SQLRECALL_DEFOG_SQLITE_DIR ?? DEFAULT_SQLITE_DEFOG_DIR;

const questions = parse(readFileSync(benchmarkPath('defog', 'questions_gen_sqlite.csv')), {
  columns: true,
  relax_quotes: true,
}) as Record<string, string>[];

/** The tables of one database file, and the tables whose b-trees a statement's program opens. */
function readsOf(file: string, sql: string): { tables: string[]; reads: string[] } | undefined {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare("SELECT type, name, tbl_name, rootpage FROM sqlite_schema WHERE type IN ('table', 'index')")
      .all() as {
      type: string;
      name: string;
      tbl_name: string;
      rootpage: number;
    }[];
    const byPage = new Map(rows.map((row) => [row.rootpage, row.tbl_name]));
    const program = db.prepare(`EXPLAIN ${sql}`).all() as { opcode: string; p2: number }[];
    const reads = new Set<string>();
    for (const op of program)
      if (op.opcode === 'OpenRead' || op.opcode === 'ReopenIdx') reads.add(byPage.get(op.p2)!);
    return { tables: rows.filter((row) => row.type === 'table').map((row) => row.name), reads: [...reads] };
  } catch {
    return undefined;
  } finally {
    db.close();
  }
}

function catalogOf(dialect: 'sqlite' | 'duckdb', name: string, tables: readonly string[]): Schema {
  return {
    dialect,
    database: name,
    schemas: ['main'],
    tables: tables.map((table) => ({
      schema: 'main',
      name: table,
      kind: 'table',
      columns: [],
      foreignKeys: [],
    })),
  } as unknown as Schema;
}

type Guard = (sql: string, options: GuardOptions) => Promise<GuardVerdict>;
const GUARDS: [string, 'sqlite' | 'duckdb', Guard][] = [
  ['sqlite', 'sqlite', guardSqliteSql],
  ['duckdb', 'duckdb', guardDuckdbSql],
];

async function timed(fn: () => Promise<unknown>): Promise<number> {
  const started = performance.now();
  await fn();
  return performance.now() - started;
}

const connectors = new Map<string, { open: DatabaseConnector; checked: DatabaseConnector }>();
async function connectorsOf(name: string, tables: readonly string[]) {
  let pair = connectors.get(name);
  if (!pair) {
    const url = `sqlite:${join(dir, `${name}.db`)}`;
    pair = { open: await openDatabase(url), checked: await openDatabase(url, { allowTables: tables }) };
    connectors.set(name, pair);
  }
  return pair;
}

const RUN = { maxRows: 10_000, timeoutMs: 30_000 };
const summary: Record<string, number | string> = {};
const count = (key: string) => {
  summary[key] = Number(summary[key] ?? 0) + 1;
};
const timings: Record<string, number[]> = {};
const time = (key: string, ms: number) => {
  const list = timings[key] ?? [];
  list.push(ms);
  timings[key] = list;
};
const misses: string[] = [];

for (const q of questions) {
  const sql = q.query!.split(';')[0]!;
  const name = q.db_name!;
  const facts = readsOf(join(dir, `${name}.db`), sql);
  if (!facts) {
    count('gold rejected by SQLite itself');
    continue;
  }
  count('statements');
  for (const [label, dialect, guard] of GUARDS) {
    const plain = await guard(sql, {});
    if (!plain.ok) {
      count(`${label}: refused without an allowlist`);
      continue;
    }
    const schema = catalogOf(dialect, name, facts.tables);
    const all = { allowTables: facts.tables, schema };
    const verdict = await guard(sql, all);
    if (verdict.ok) count(`${label}: accepted, every table allowed`);
    else misses.push(`${label} refused with all allowed (${verdict.reason}): ${sql}`);
    for (let i = 0; i < repeat; i += 1) {
      time(`${label} guard, no allowlist`, await timed(() => guard(sql, {})));
      time(`${label} guard, allowlist`, await timed(() => guard(sql, all)));
    }
    for (const left of facts.reads) {
      const rest = facts.tables.filter((table) => table !== left);
      count(`${label}: one read table left out (cases)`);
      const out = await guard(sql, { allowTables: rest, schema: catalogOf(dialect, name, rest) });
      if (!out.ok && out.rule === 'allowlist') count(`${label}: one read table left out, refused`);
      else misses.push(`${label} accepted without ${left}: ${sql}`);
    }
  }
  const pair = await connectorsOf(name, facts.tables);
  const ran = await pair.checked.execute(sql, RUN).then(
    () => true,
    (error: unknown) => {
      misses.push(`sqlite execute refused with all allowed (${String(error)}): ${sql}`);
      return false;
    },
  );
  if (ran) {
    count('sqlite: ran through the connector, every table allowed');
    for (let i = 0; i < repeat; i += 1) {
      time('sqlite execute, no allowlist', await timed(() => pair.open.execute(sql, RUN)));
      time('sqlite execute, program checked', await timed(() => pair.checked.execute(sql, RUN)));
    }
  }
  // The worker's check itself (what the connector runs before the statement), in process.
  const file = new Database(join(dir, `${name}.db`), { readonly: true, fileMustExist: true });
  try {
    for (const left of facts.reads) {
      const rest = facts.tables.filter((table) => table !== left);
      count('sqlite program check: one read table left out (cases)');
      file.prepare('BEGIN').run();
      try {
        if (checkTableAccess(file, sql, rest))
          count('sqlite program check: one read table left out, refused');
        else misses.push(`sqlite program check passed without ${left}: ${sql}`);
      } finally {
        file.prepare('ROLLBACK').run();
      }
    }
  } finally {
    file.close();
  }
}
for (const pair of connectors.values()) {
  await pair.open.close();
  await pair.checked.close();
}

console.log(JSON.stringify(summary, null, 2));
for (const [key, list] of Object.entries(timings))
  console.log(
    `${key.padEnd(36)} p50 ${percentile(list, 50).toFixed(3)} ms  p95 ${percentile(list, 95).toFixed(3)} ms  (n=${list.length})`,
  );
if (misses.length > 0) console.log(`\n${misses.length} misses:\n${misses.slice(0, 40).join('\n')}`);
