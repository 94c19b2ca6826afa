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
 *
 * The `policy-*` rows time what a data policy adds to a statement (`databases/policed.ts`): the
 * rewrite (`rewriteForPolicy`, every table of the statement with a row filter and a denied column)
 * plus the guard's second check of the rewritten text. Budget: 2 ms at p95.
 *
 * The `mysql-*` rows time the MySQL/MariaDB guard (`sql/mysql/guard.ts`: its lexer, then
 * node-sql-parser's MySQL grammar and the tree checks) on the same two statements written for
 * MySQL, so the guard's latency is there per dialect.
 */
import { parseArgs } from 'node:util';
import { percentile } from '../src/eval/report.js';
import type { EffectivePolicy } from '../src/policy/types.js';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { guardMysqlSql } from '../src/sql/mysql/guard.js';
import { type PolicyCatalog, type PolicyRelation, rewriteForPolicy } from '../src/sql/policy-rewrite.js';

const { values: args } = parseArgs({
  options: {
    repeat: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
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

/** What the policy decorator adds to one statement: the rewrite, then the guard again. */
async function policed(sql: string): Promise<{ ok: boolean }> {
  const rewritten = rewriteForPolicy(sql, POLICY, CATALOG);
  if (!rewritten.ok) return { ok: false };
  return guardSql(rewritten.sql);
}

await loadGuardParser();
const results: {
  statement: string;
  accepted: boolean;
  meanMs: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
}[] = [];
const runs: [string, string, (sql: string) => Promise<{ ok: boolean }>][] = [
  ...Object.entries(STATEMENTS).map(([name, sql]): [string, string, typeof guardSql] => [
    name,
    sql,
    guardSql,
  ]),
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
runs.push(
  ...Object.entries(MYSQL_STATEMENTS).map(([name, sql]): [string, string, typeof guardMysqlSql] => [
    `mysql-${name}`,
    sql,
    (text) => guardMysqlSql(text),
  ]),
);

for (const [name, sql, check] of runs) {
  let accepted = true;
  for (let k = 0; k < 20; k += 1) accepted = (await check(sql)).ok && accepted;
  const times: number[] = [];
  for (let k = 0; k < repeat; k += 1) {
    const started = performance.now();
    const verdict = await check(sql);
    times.push(performance.now() - started);
    accepted &&= verdict.ok;
  }
  const mean = times.reduce((a, b) => a + b, 0) / times.length;
  results.push({
    statement: name,
    accepted,
    meanMs: mean,
    p50Ms: percentile(times, 50),
    p95Ms: percentile(times, 95),
    p99Ms: percentile(times, 99),
  });
}

if (args.json) process.stdout.write(`${JSON.stringify({ repeat, results }, null, 2)}\n`);
else {
  process.stdout.write(
    `guardSql (policy-*: data-policy rewrite + second guard check), ${repeat} calls per statement after 20 warm-up calls (parser loaded)\n`,
  );
  for (const r of results) {
    process.stdout.write(
      `${r.statement.padEnd(12)} accepted=${r.accepted} mean ${r.meanMs.toFixed(3)} ms, p50 ${r.p50Ms.toFixed(3)} ms, p95 ${r.p95Ms.toFixed(3)} ms, p99 ${r.p99Ms.toFixed(3)} ms\n`,
    );
  }
}
if (results.some((r) => !r.accepted)) process.exit(1);
