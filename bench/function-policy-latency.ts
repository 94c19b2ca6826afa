/**
 * What the function policy adds to one statement: the same statements run through the bare
 * connector, through the policy with the server's analysis (a temporary view in a rolled-back
 * transaction, then catalog reads), and through the policy's name-based check alone (a connector
 * without the analysis). Catalog rows are cached for a minute, so "warm" repeats one policy
 * instance (the steady state of `serve`/`chat`) and "cold" builds a new one per statement (a
 * one-shot `sqlrecall sql`). Prints the mean and p50 in milliseconds per mode and engine.
 *
 * "function + data policy, warm" is the stack the runtime builds for a user under a data policy
 * (`withDataPolicy` over `withFunctionPolicy`, catalogs cached): a row filter on both tables, an
 * allow-list naming the tables and the user function. It also prints how many server analyses
 * (temporary-view probes) each policed statement cost.
 *
 *   npx tsx bench/function-policy-latency.ts [--repeat 50] [--quick] [--json]
 *
 * The server engine needs TEST_DATABASE_URL (a scratch database is created and dropped).
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { policyCatalogCache, withDataPolicy } from '../src/databases/policed.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { percentile } from '../src/eval/report.js';
import type { EffectivePolicy } from '../src/policy/types.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { PROBE_VIEW } from '../src/sql/server-analysis.js';

const { values: args } = parseArgs({
  options: {
    repeat: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const repeat = Number(args.repeat ?? (args.quick ? 10 : 50));

const SCHEMA = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, country text);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers(id), total numeric, placed_on date);
INSERT INTO customers SELECT g, 'c' || g, CASE WHEN g % 2 = 0 THEN 'FR' ELSE 'DE' END FROM generate_series(1, 200) g;
INSERT INTO orders SELECT g, 1 + g % 200, g * 1.5, DATE '2024-01-01' + g FROM generate_series(1, 2000) g;
CREATE FUNCTION net(amount numeric) RETURNS numeric LANGUAGE sql IMMUTABLE AS 'SELECT amount / 1.2';
`;

const STATEMENTS: Record<string, string> = {
  simple: 'SELECT name FROM customers WHERE id = 7',
  join: `SELECT c.country, count(*) AS n, sum(net(o.total)) AS net FROM customers c
           JOIN orders o ON o.customer_id = c.id WHERE o.placed_on >= DATE '2024-03-01'
          GROUP BY c.country ORDER BY n DESC`,
};

const RUN = { maxRows: 100, timeoutMs: 30_000 };

/** A user's data policy over {@link SCHEMA}: rows of FR customers, orders of the first 100. */
const POLICY: EffectivePolicy = {
  user: 'bench',
  sources: ['team bench'],
  tables: new Set(['public.customers', 'public.orders', 'public.net']),
  deniedColumns: new Map(),
  rowFilters: new Map([
    ['public.customers', [{ expression: 'country = $1', params: ['FR'], policy: 'team bench' }]],
    ['public.orders', [{ expression: 'customer_id <= $1', params: ['100'], policy: 'team bench' }]],
  ]),
  rowsToModel: true,
  admin: false,
};

/** `connector` with its temporary-view probes (server analyses) counted. */
function countingAnalyses(connector: DatabaseConnector): { db: DatabaseConnector; count: () => number } {
  let analyses = 0;
  return {
    db: {
      ...connector,
      execute: (sql, options) => connector.execute(sql, options),
      probe: (statements, options) => {
        if (statements.some((s) => s.includes(`CREATE TEMP VIEW ${PROBE_VIEW}`))) analyses += 1;
        return connector.probe!(statements, options);
      },
    },
    count: () => analyses,
  };
}

interface Row {
  engine: string;
  statement: string;
  mode: string;
  meanMs: number;
  p50Ms: number;
  /** Server analyses (temporary-view probes) per statement, for the policed stack. */
  analysesPerStatement?: number;
}

async function time(fn: () => Promise<unknown>): Promise<number[]> {
  for (let k = 0; k < 3; k += 1) await fn();
  const times: number[] = [];
  for (let k = 0; k < repeat; k += 1) {
    const started = performance.now();
    await fn();
    times.push(performance.now() - started);
  }
  return times;
}

async function measure(engine: string, connector: DatabaseConnector): Promise<Row[]> {
  const rows: Row[] = [];
  const { probe: _probe, ...withoutProbe } = connector;
  const byName = withoutProbe as DatabaseConnector;
  for (const [statement, sql] of Object.entries(STATEMENTS)) {
    const warm = withFunctionPolicy(connector);
    const warmByName = withFunctionPolicy(byName);
    const counted = countingAnalyses(connector);
    const checked = withFunctionPolicy(counted.db);
    const policed = withDataPolicy(checked, POLICY, policyCatalogCache(checked));
    // The guard's check comes first on every path (the data policy takes over its parse).
    const guarded = async (): Promise<string> => {
      const verdict = await guardSql(sql);
      if (!verdict.ok) throw new Error(verdict.reason);
      return verdict.sql;
    };
    const modes: Record<string, () => Promise<unknown>> = {
      'bare connector': () => connector.execute(sql, RUN),
      'policy, server analysis, warm': () => warm.execute(sql, RUN),
      'policy, server analysis, cold': () => withFunctionPolicy(connector).execute(sql, RUN),
      'policy, names only, warm': () => warmByName.execute(sql, RUN),
      'function + data policy, warm': async () => policed.execute(await guarded(), RUN),
    };
    for (const [mode, fn] of Object.entries(modes)) {
      const before = counted.count();
      const times = await time(fn);
      rows.push({
        engine,
        statement,
        mode,
        meanMs: times.reduce((a, b) => a + b, 0) / times.length,
        p50Ms: percentile(times, 50),
        ...(mode.startsWith('function + data')
          ? { analysesPerStatement: (counted.count() - before) / (repeat + 3) }
          : {}),
      });
    }
  }
  return rows;
}

await loadGuardParser();
const results: Row[] = [];
{
  const db = new PGlite();
  await db.exec(SCHEMA);
  const connector = createPgliteConnector({ pglite: db });
  results.push(...(await measure('PGlite', connector)));
  await connector.close();
  await db.close();
}
const serverUrl = process.env.TEST_DATABASE_URL;
if (serverUrl) {
  const name = `bench_policy_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  try {
    const setup = new pg.Client({ connectionString: url.toString() });
    await setup.connect();
    await setup.query(SCHEMA);
    await setup.end();
    const connector = createPostgresConnector({ url: url.toString() });
    results.push(...(await measure('PostgreSQL server', connector)));
    await connector.close();
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

if (args.json) process.stdout.write(`${JSON.stringify({ repeat, results }, null, 2)}\n`);
else {
  process.stdout.write(`function policy cost per statement, ${repeat} runs per mode after 3 warm-up runs\n`);
  for (const r of results)
    process.stdout.write(
      `${r.engine.padEnd(18)} ${r.statement.padEnd(7)} ${r.mode.padEnd(30)} mean ${r.meanMs.toFixed(2)} ms, p50 ${r.p50Ms.toFixed(2)} ms${r.analysesPerStatement !== undefined ? `, ${r.analysesPerStatement.toFixed(2)} server analyses per statement` : ''}\n`,
    );
}
