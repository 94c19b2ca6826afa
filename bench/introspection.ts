/**
 * Introspection benchmark: sqlrecall's fixed-count catalog queries beside a naive per-table
 * approach (what a tool that walks information_schema table by table does), measured in the same
 * run on the same throw-away database.
 *
 *   npx tsx bench/introspection.ts [--tables 1000] [--repeat 3] [--url postgres://…] [--json]
 *
 * Default URL: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. The role must
 * be allowed to CREATE DATABASE; the generated database is dropped at the end.
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { maskUrl } from '../src/core/redact.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { introspectionStats } from '../src/databases/postgres/introspect.js';

const { values: args } = parseArgs({
  options: {
    tables: { type: 'string', default: '1000' },
    repeat: { type: 'string', default: '3' },
    url: {
      type: 'string',
      default: process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres',
    },
    json: { type: 'boolean', default: false },
  },
});
const tableCount = Number(args.tables);
const repeat = Number(args.repeat);
const adminUrl = args.url ?? '';
const log = (text: string): void => {
  process.stderr.write(`${text}\n`);
};

/** Deterministic pseudo-random numbers (mulberry32), so every run builds the same schema. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const COLUMN_TYPES = [
  'integer',
  'bigint',
  'text',
  'varchar(80)',
  'numeric(12,2)',
  'boolean',
  'date',
  'timestamp',
  'timestamptz',
  'jsonb',
  'text[]',
  'uuid',
];

/** DDL of the generated schema: 10–20 columns per table, 1–2 FKs to earlier tables. */
function generateSchema(count: number): { statements: string[]; columns: number; foreignKeys: number } {
  const next = random(20260101);
  const pick = (n: number): number => Math.floor(next() * n);
  const statements: string[] = [];
  let columns = 0;
  let foreignKeys = 0;
  for (let i = 0; i < count; i += 1) {
    const name = `t_${String(i).padStart(4, '0')}`;
    const parts = ['id bigint PRIMARY KEY'];
    const total = 10 + pick(11);
    const fkCount = i === 0 ? 0 : 1 + pick(2);
    for (let k = 0; k < fkCount; k += 1) {
      const target = `t_${String(pick(i)).padStart(4, '0')}`;
      parts.push(`ref${k}_id bigint REFERENCES ${target}(id)`);
      foreignKeys += 1;
    }
    for (let c = parts.length; c < total; c += 1) {
      const type = COLUMN_TYPES[pick(COLUMN_TYPES.length)]!;
      parts.push(`c${c} ${type}${next() < 0.3 ? ' NOT NULL' : ''}`);
    }
    columns += parts.length;
    statements.push(`CREATE TABLE ${name} (${parts.join(', ')});`);
    if (next() < 0.5) statements.push(`COMMENT ON TABLE ${name} IS 'Generated table number ${i}';`);
    if (next() < 0.3)
      statements.push(
        `CREATE UNIQUE INDEX ${name}_c${parts.length - 1}_key ON ${name} (c${parts.length - 1});`,
      );
  }
  return { statements, columns, foreignKeys };
}

/**
 * The naive approach, written as such tools do it: list tables, then per table read columns from
 * information_schema.columns, the primary key and the foreign keys from
 * table_constraints/key_column_usage/constraint_column_usage, the indexes from pg_indexes and the
 * comment with obj_description: 5 queries per table.
 */
async function naiveIntrospection(
  client: pg.Client,
): Promise<{ queries: number; tables: number; foreignKeys: number }> {
  let queries = 1;
  const tables = await client.query<{ table_schema: string; table_name: string }>(
    `SELECT table_schema, table_name FROM information_schema.tables
     WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type IN ('BASE TABLE', 'VIEW')
     ORDER BY table_schema, table_name`,
  );
  let foreignKeys = 0;
  for (const { table_schema: schema, table_name: table } of tables.rows) {
    await client.query(
      `SELECT column_name, data_type, character_maximum_length, numeric_precision, numeric_scale,
              is_nullable, column_default
       FROM information_schema.columns WHERE table_schema = $1 AND table_name = $2 ORDER BY ordinal_position`,
      [schema, table],
    );
    await client.query(
      `SELECT kcu.column_name FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage kcu
         ON kcu.constraint_name = tc.constraint_name AND kcu.constraint_schema = tc.constraint_schema
       WHERE tc.constraint_type = 'PRIMARY KEY' AND tc.table_schema = $1 AND tc.table_name = $2
       ORDER BY kcu.ordinal_position`,
      [schema, table],
    );
    const fks = await client.query(
      `SELECT tc.constraint_name, kcu.column_name, ccu.table_schema AS foreign_schema,
              ccu.table_name AS foreign_table, ccu.column_name AS foreign_column
       FROM information_schema.table_constraints tc
       JOIN information_schema.key_column_usage kcu
         ON kcu.constraint_name = tc.constraint_name AND kcu.constraint_schema = tc.constraint_schema
       JOIN information_schema.constraint_column_usage ccu
         ON ccu.constraint_name = tc.constraint_name AND ccu.constraint_schema = tc.constraint_schema
       WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = $1 AND tc.table_name = $2`,
      [schema, table],
    );
    foreignKeys += fks.rowCount ?? 0;
    await client.query(
      'SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = $1 AND tablename = $2',
      [schema, table],
    );
    await client.query(
      `SELECT obj_description(format('%I.%I', $1::text, $2::text)::regclass, 'pg_class') AS comment`,
      [schema, table],
    );
    queries += 5;
  }
  return { queries, tables: tables.rowCount ?? 0, foreignKeys };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

async function main(): Promise<void> {
  const dbName = `sqlrecall_bench_${randomBytes(4).toString('hex')}`;
  const dbUrlParsed = new URL(adminUrl);
  dbUrlParsed.pathname = `/${dbName}`;
  const dbUrl = dbUrlParsed.toString();
  log(`creating ${dbName} on ${maskUrl(adminUrl)} with ${tableCount} tables…`);
  await adminQuery(`CREATE DATABASE ${dbName}`);
  const connector = createPostgresConnector({ url: dbUrl });
  const client = new pg.Client({ connectionString: dbUrl });
  try {
    await client.connect();
    const generated = generateSchema(tableCount);
    const started = performance.now();
    await client.query('BEGIN');
    for (let i = 0; i < generated.statements.length; i += 500) {
      await client.query(generated.statements.slice(i, i + 500).join('\n'));
    }
    await client.query('COMMIT');
    await client.query('ANALYZE');
    log(`schema created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    await connector.ping(); // open the pool's connection outside the timing, like the pre-connected client

    const ours: { ms: number; queries: number }[] = [];
    const naive: { ms: number; queries: number }[] = [];
    let oursTables = 0;
    let oursForeignKeys = 0;
    let naiveTables = 0;
    for (let run = 1; run <= repeat; run += 1) {
      const before = introspectionStats.queries;
      let t = performance.now();
      const schema = await connector.introspect();
      ours.push({ ms: performance.now() - t, queries: introspectionStats.queries - before });
      oursTables = schema.tables.length;
      oursForeignKeys = schema.tables.reduce((sum, table) => sum + table.foreignKeys.length, 0);
      t = performance.now();
      const result = await naiveIntrospection(client);
      naive.push({ ms: performance.now() - t, queries: result.queries });
      naiveTables = result.tables;
      log(
        `run ${run}/${repeat}: sqlrecall ${ours.at(-1)!.ms.toFixed(1)} ms, naive ${naive.at(-1)!.ms.toFixed(1)} ms`,
      );
    }
    const version = (await client.query<{ v: string }>(`SELECT current_setting('server_version') AS v`))
      .rows[0]?.v;
    const oursMs = median(ours.map((r) => r.ms));
    const naiveMs = median(naive.map((r) => r.ms));
    const report = {
      tables: tableCount,
      columns: generated.columns,
      foreignKeys: generated.foreignKeys,
      server: `PostgreSQL ${version}`,
      repeat,
      sqlrecall: {
        medianMs: round(oursMs),
        catalogQueries: ours[0]!.queries,
        tablesFound: oursTables,
        foreignKeysFound: oursForeignKeys,
      },
      naivePerTable: {
        medianMs: round(naiveMs),
        catalogQueries: naive[0]!.queries,
        tablesFound: naiveTables,
      },
      speedup: round(naiveMs / oursMs),
      queryRatio: round(naive[0]!.queries / ours[0]!.queries),
    };
    if (args.json) {
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    } else {
      printTable(report);
    }
    if (oursTables !== tableCount || oursForeignKeys !== generated.foreignKeys) {
      throw new Error(
        `sqlrecall found ${oursTables} tables / ${oursForeignKeys} FKs, expected ${tableCount} / ${generated.foreignKeys}`,
      );
    }
  } finally {
    await client.end().catch(() => {});
    await connector.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    log(`dropped ${dbName}`);
  }
}

function round(value: number): number {
  return Math.round(value * 10) / 10;
}

function printTable(report: {
  tables: number;
  columns: number;
  foreignKeys: number;
  server: string;
  repeat: number;
  sqlrecall: { medianMs: number; catalogQueries: number };
  naivePerTable: { medianMs: number; catalogQueries: number };
  speedup: number;
  queryRatio: number;
}): void {
  const rows: [string, string, string][] = [
    ['approach', 'median time', 'catalog queries'],
    [
      'sqlrecall (fixed catalog queries)',
      `${report.sqlrecall.medianMs.toLocaleString('en-US')} ms`,
      String(report.sqlrecall.catalogQueries),
    ],
    [
      'naive per table (information_schema)',
      `${report.naivePerTable.medianMs.toLocaleString('en-US')} ms`,
      String(report.naivePerTable.catalogQueries),
    ],
    ['ratio (naive / sqlrecall)', `${report.speedup}×`, `${report.queryRatio}×`],
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  console.log(
    `Introspection of ${report.tables} tables (${report.columns} columns, ${report.foreignKeys} foreign keys) on ${report.server}, median of ${report.repeat} runs`,
  );
  for (const [i, row] of rows.entries()) {
    console.log(
      `| ${row[0].padEnd(widths[0]!)} | ${row[1].padStart(widths[1]!)} | ${row[2].padStart(widths[2]!)} |`,
    );
    if (i === 0)
      console.log(
        `|${'-'.repeat(widths[0]! + 2)}|${'-'.repeat(widths[1]! + 1)}:|${'-'.repeat(widths[2]! + 1)}:|`,
      );
  }
}

main().catch((error: unknown) => {
  log(`benchmark failed: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
});
