/**
 * SQL guard latency (moved here from a timed unit test): the time `guardSql` takes to parse
 * and check one statement once the parser's WebAssembly module is loaded, for a simple join and a
 * larger statement with CTEs, a subquery and a window function. Prints per statement the mean, p50 and
 * p99 in milliseconds over `--repeat` calls (after 20 warm-up calls), and whether the statement was
 * accepted (it must be, or the figure would time a refusal).
 *
 *   npx tsx bench/guard-latency.ts [--repeat 2000] [--quick] [--json]
 *
 * `--quick`: 200 calls per statement. The figure to watch: well under a millisecond per statement.
 * `--rows policy-join,policy-large`: only those rows (default: all).
 *
 * Each row also gives the CPU time of one call (`process.cpuUsage`, user + system, p50 and p95):
 * on a loaded machine the wall-clock figures include time spent waiting for a core, the CPU time
 * does not, so it is the figure to compare between runs made under different loads.
 *
 * The `policy-*` rows time what a data policy adds to a statement on the client: the whole
 * decorator of `databases/policed.ts` (`withDataPolicy(...).execute`), every table of the
 * statement with a row filter and a denied column: the rewrite, the guard's second check of the
 * rewritten text, the preparation of the server's analysis and the reading of its answer. Each
 * call is preceded, untimed, by the guard's check of the same text, as every caller does (the
 * decorator takes over that parse). The database below is a replay of answers recorded once from
 * an in-memory PGlite (the probe's analysed tree, the catalog look-up), so no server time is in
 * the figure; the `adds` column is the policy row's p95 (what the policy adds per statement).
 * Budget: 2 ms at p95.
 *
 * The `mysql-*` rows time the MySQL/MariaDB guard (`sql/mysql/guard.ts`: its lexer, then
 * node-sql-parser's MySQL grammar and the tree checks) on the same two statements written for
 * MySQL, so the guard's latency is there per dialect; likewise `sqlite-*` (SQLite's date
 * arithmetic) and `duckdb-*` (DuckDB's own parser reads the PostgreSQL text; its first call starts an
 * in-memory engine, which the warm-up calls absorb).
 */
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import type { DatabaseConnector, QueryResult } from '../src/core/ports.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { withDataPolicy } from '../src/databases/policed.js';
import { percentile } from '../src/eval/report.js';
import type { EffectivePolicy } from '../src/policy/types.js';
import { guardDuckdbSql } from '../src/sql/duckdb/guard.js';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { guardMysqlSql } from '../src/sql/mysql/guard.js';
import type { PolicyCatalog, PolicyRelation } from '../src/sql/policy-rewrite.js';
import { guardSqliteSql } from '../src/sql/sqlite/guard.js';

const { values: args } = parseArgs({
  options: {
    repeat: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    rows: { type: 'string' },
  },
});
const onlyRows = args.rows ? new Set(args.rows.split(',').map((row) => row.trim())) : undefined;
const repeat = Number(args.repeat ?? (args.quick ? 200 : 2000));
if (!Number.isInteger(repeat) || repeat < 1) {
  process.stderr.write('--repeat must be a positive integer\n');
  process.exit(2);
}

const STATEMENTS: Record<string, string> = {
  join: 'SELECT a, b FROM t JOIN u USING (id) WHERE c > 1 ORDER BY a',
  large: `WITH recent AS (SELECT id, owner_id, amount, created_at FROM payments WHERE created_at > now() - interval '30 days'),
    totals AS (SELECT owner_id, sum(amount) AS total, count(*) AS n FROM recent GROUP BY owner_id)
    SELECT o.name, t.total, t.n, rank() OVER (ORDER BY t.total DESC) AS place
    FROM owners o JOIN totals t ON t.owner_id = o.id
    WHERE o.id IN (SELECT owner_id FROM recent WHERE amount > 100)
    ORDER BY place LIMIT 20`,
};

/** Every table the statements read, each with a row filter and a denied column. */
const POLICED: Record<string, string[]> = {
  t: ['a', 'b', 'c', 'id', 'region', 'secret'],
  u: ['id', 'region', 'secret'],
  payments: ['id', 'owner_id', 'amount', 'created_at', 'region', 'secret'],
  owners: ['id', 'name', 'region', 'secret'],
};
const relations = new Map<string, PolicyRelation>(
  Object.entries(POLICED).map(([name, columns]) => [
    `public.${name}`,
    { schema: 'public', name, kind: 'r', columns },
  ]),
);
const CATALOG: PolicyCatalog = {
  relations,
  searchPath: ['public'],
  definitions: new Map(),
  functions: [],
  parents: new Map(),
};
const POLICY: EffectivePolicy = {
  user: 'bench',
  sources: ['team bench'],
  deniedColumns: new Map([...relations.keys()].map((key) => [key, new Map([['secret', 'team bench']])])),
  rowFilters: new Map(
    [...relations.keys()].map((key) => [
      key,
      [{ expression: 'region = $1', params: ['EMEA'], policy: 'team bench' }],
    ]),
  ),
  rowsToModel: true,
  admin: false,
};

const RUN = { maxRows: 10, timeoutMs: 30_000 };

/**
 * A connector that answers from `recorded` (by exact text), and records what `real` answers when
 * given: the same decorator code runs against it, without the database's time.
 */
function replaying(real?: DatabaseConnector): {
  db: DatabaseConnector;
  recorded: Map<string, unknown>;
} {
  const recorded = new Map<string, unknown>();
  const answer = async <T>(key: string, ask: (() => Promise<T>) | undefined): Promise<T> => {
    if (recorded.has(key)) return recorded.get(key) as T;
    if (!ask) throw new Error(`no recorded answer for ${key.slice(0, 80)}`);
    const value = await ask();
    recorded.set(key, value);
    return value;
  };
  const db: DatabaseConnector = {
    dialect: 'postgres',
    displayName: 'replay',
    ping: async () => {},
    introspect: () => {
      throw new Error('not used');
    },
    close: async () => {},
    execute: (sql, options) =>
      answer<QueryResult>(`execute:${sql}`, real ? () => real.execute(sql, options) : undefined),
    probe: (statements, options) =>
      answer(`probe:${statements.join('\n;\n')}`, real ? () => real.probe!(statements, options) : undefined),
  };
  return { db, recorded };
}

/** The tables of {@link POLICED} in a fresh in-memory PGlite, to record the server's answers from. */
async function recordAnswers(): Promise<Map<string, unknown>> {
  const pglite = new PGlite();
  for (const [name, columns] of Object.entries(POLICED))
    await pglite.exec(
      `CREATE TABLE ${name} (${columns.map((c) => `${c} ${c === 'created_at' ? 'timestamptz' : c === 'amount' ? 'numeric' : c === 'region' || c === 'name' || c === 'secret' ? 'text' : 'int'}`).join(', ')})`,
    );
  const real = createPgliteConnector({ pglite });
  const recorder = replaying(real);
  const db = withDataPolicy(recorder.db, POLICY, { get: async () => CATALOG });
  for (const sql of Object.values(STATEMENTS)) {
    const verdict = await guardSql(sql);
    if (!verdict.ok) throw new Error(verdict.reason);
    await db.execute(verdict.sql, RUN);
  }
  await real.close();
  await pglite.close();
  return recorder.recorded;
}

await loadGuardParser();
const replay = replaying();
for (const [key, value] of await recordAnswers()) replay.recorded.set(key, value);
const policedDb = withDataPolicy(replay.db, POLICY, { get: async () => CATALOG });

/** One timed call: wall-clock and CPU time (user + system of this process), in ms. */
interface Timing {
  wall: number;
  cpu: number;
}

/** Times `work` by the wall clock and by the CPU time the process spent on it. */
async function timed(work: () => Promise<unknown>): Promise<Timing> {
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await work();
  const wall = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  return { wall, cpu: (cpu.user + cpu.system) / 1000 };
}

/**
 * What the policy decorator adds to one statement: the guard's check comes first, untimed (every
 * caller makes it), then the decorator's whole `execute` is timed.
 */
async function policed(sql: string): Promise<Timing> {
  const verdict = await guardSql(sql);
  if (!verdict.ok) throw new Error(verdict.reason);
  return timed(() => policedDb.execute(verdict.sql, RUN));
}

/** The guard alone, timed. */
async function guarded(sql: string): Promise<Timing> {
  let verdict: Awaited<ReturnType<typeof guardSql>> | undefined;
  const took = await timed(async () => {
    verdict = await guardSql(sql);
  });
  if (!verdict?.ok) throw new Error(verdict?.reason ?? 'no verdict');
  return took;
}

const results: {
  statement: string;
  accepted: boolean;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  cpuP50Ms: number;
  cpuP95Ms: number;
}[] = [];
const runs: [string, string, (sql: string) => Promise<Timing>][] = [
  ...Object.entries(STATEMENTS).map(([name, sql]): [string, string, typeof guarded] => [name, sql, guarded]),
  ...Object.entries(STATEMENTS).map(([name, sql]): [string, string, typeof policed] => [
    `policy-${name}`,
    sql,
    policed,
  ]),
];
// MySQL/MariaDB rows: the same two statements in MySQL, through the MySQL guard.
const MYSQL_STATEMENTS: Record<string, string> = {
  join: STATEMENTS.join!,
  large: `WITH recent AS (SELECT id, owner_id, amount, created_at FROM payments WHERE created_at > NOW() - INTERVAL 30 DAY),
    totals AS (SELECT owner_id, SUM(amount) AS total, COUNT(*) AS n FROM recent GROUP BY owner_id)
    SELECT o.name, t.total, t.n, RANK() OVER (ORDER BY t.total DESC) AS place
    FROM owners o JOIN totals t ON t.owner_id = o.id
    WHERE o.id IN (SELECT owner_id FROM recent WHERE amount > 100)
    ORDER BY place LIMIT 20`,
};
// SQLite rows: the large statement with SQLite's date arithmetic; DuckDB reads PostgreSQL's text.
const SQLITE_STATEMENTS: Record<string, string> = {
  join: STATEMENTS.join!,
  large: STATEMENTS.large!.replace("now() - interval '30 days'", "date('now', '-30 days')"),
};

/** A dialect guard, timed; a refusal throws. */
function timedGuard(guard: (sql: string) => Promise<{ ok: boolean; reason?: string }>) {
  return async (text: string): Promise<Timing> => {
    let verdict: { ok: boolean; reason?: string } | undefined;
    const took = await timed(async () => {
      verdict = await guard(text);
    });
    if (!verdict?.ok) throw new Error(verdict?.reason ?? 'no verdict');
    return took;
  };
}

const DIALECT_RUNS: [string, Record<string, string>, (sql: string) => Promise<Timing>][] = [
  ['mysql', MYSQL_STATEMENTS, timedGuard(guardMysqlSql)],
  ['sqlite', SQLITE_STATEMENTS, timedGuard(guardSqliteSql)],
  ['duckdb', STATEMENTS, timedGuard(guardDuckdbSql)],
];
for (const [dialect, statements, check] of DIALECT_RUNS)
  runs.push(
    ...Object.entries(statements).map(([name, sql]): [string, string, typeof check] => [
      `${dialect}-${name}`,
      sql,
      check,
    ]),
  );

for (const [name, sql, check] of runs) {
  if (onlyRows && !onlyRows.has(name)) continue;
  // A refusal throws: every figure times an accepted statement.
  let accepted = true;
  const times: number[] = [];
  const cpuTimes: number[] = [];
  try {
    for (let k = 0; k < 20; k += 1) await check(sql);
    for (let k = 0; k < repeat; k += 1) {
      const { wall, cpu } = await check(sql);
      times.push(wall);
      cpuTimes.push(cpu);
    }
  } catch (error) {
    process.stderr.write(`${name}: ${error instanceof Error ? error.message : String(error)}\n`);
    accepted = false;
    times.push(Number.NaN);
    cpuTimes.push(Number.NaN);
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  results.push({
    statement: name,
    accepted,
    meanMs: mean,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    p99Ms: percentile(times, 99),
    cpuP50Ms: percentile(cpuTimes, 50),
    cpuP95Ms: percentile(cpuTimes, 95),
  });
}

if (args.json) process.stdout.write(`${JSON.stringify({ repeat, results }, null, 2)}\n`);
else {
  process.stdout.write(
    `guardSql (policy-*: everything the data-policy decorator adds on the client), ${repeat} calls per statement after 20 warm-up calls (parser loaded)\n`,
  );
  for (const r of results) {
    const adds = r.statement.startsWith('policy-') ? `  adds ${r.p95Ms.toFixed(3)} ms at p95` : '';
    process.stdout.write(
      `${r.statement.padEnd(12)} accepted=${r.accepted} mean ${r.meanMs.toFixed(3)} ms, p50 ${r.p50Ms.toFixed(3)} ms, p95 ${r.p95Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(3)} ms, cpu p50 ${r.cpuP50Ms.toFixed(3)} ms, cpu p95 ${r.cpuP95Ms.toFixed(3)} ms${adds}\n`,
    );
  }
}
if (results.some((r) => !r.accepted)) process.exit(1);
