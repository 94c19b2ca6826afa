/**
 * Introspection benchmark: sqlrecall's fixed-count catalog queries beside a naive per-table
 * approach (what a tool that walks information_schema table by table does), measured in the same
 * run on the same throw-away database; then `introspect()` of the same generated schema on every
 * other engine of {@link ENGINES} (PGlite, MariaDB/MySQL, SQLite, DuckDB), one table "engine | tables | ms".
 *
 *   npx tsx bench/introspection.ts [--tables 1000] [--repeat 3] [--url postgres://…]
 *     [--mysql-url mysql://…] [--json]
 *
 * Default URL: TEST_DATABASE_URL, else postgres://postgres@127.0.0.1:5432/postgres. The role must
 * be allowed to CREATE DATABASE; the generated database is dropped at the end. MariaDB: the
 * `--mysql-url` user (default TEST_MYSQL_URL, else mysql://root@127.0.0.1:3306) must be allowed to
 * CREATE DATABASE; an engine that is not reachable is listed as skipped, with the reason.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { DatabaseConnector } from '../src/core/ports.js';
import { maskUrl } from '../src/core/redact.js';
import { openDatabase } from '../src/databases/open.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
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
    'mysql-url': {
      type: 'string',
      default: process.env.TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306',
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

/** Column types of the generated schema, in PostgreSQL and in MySQL. */
const COLUMN_TYPES: { postgres: string; mysql: string; indexable: boolean }[] = [
  { postgres: 'integer', mysql: 'INT', indexable: true },
  { postgres: 'bigint', mysql: 'BIGINT', indexable: true },
  { postgres: 'text', mysql: 'TEXT', indexable: false },
  { postgres: 'varchar(80)', mysql: 'VARCHAR(80)', indexable: true },
  { postgres: 'numeric(12,2)', mysql: 'DECIMAL(12,2)', indexable: true },
  { postgres: 'boolean', mysql: 'BOOLEAN', indexable: true },
  { postgres: 'date', mysql: 'DATE', indexable: true },
  { postgres: 'timestamp', mysql: 'DATETIME', indexable: true },
  { postgres: 'timestamptz', mysql: 'TIMESTAMP NULL', indexable: true },
  { postgres: 'jsonb', mysql: 'JSON', indexable: false },
  { postgres: 'text[]', mysql: 'TEXT', indexable: false },
  { postgres: 'uuid', mysql: 'CHAR(36)', indexable: true },
];

/** One generated table, independent of the dialect. */
interface GeneratedTable {
  name: string;
  columns: { name: string; type: (typeof COLUMN_TYPES)[number]; notNull: boolean }[];
  /** `refK_id` → the table it references (by `id`). */
  references: { column: string; table: string }[];
  comment: string | null;
  /** A column with a unique index, when the last column got one. */
  unique: string | null;
}

/** The generated schema: 10–20 columns per table, 1–2 FKs to earlier tables (same every run). */
function generateTables(count: number): GeneratedTable[] {
  const next = random(20260101);
  const pick = (n: number): number => Math.floor(next() * n);
  const tables: GeneratedTable[] = [];
  for (let i = 0; i < count; i += 1) {
    const name = `t_${String(i).padStart(4, '0')}`;
    const total = 10 + pick(11);
    const fkCount = i === 0 ? 0 : 1 + pick(2);
    const references: GeneratedTable['references'] = [];
    for (let k = 0; k < fkCount; k += 1)
      references.push({ column: `ref${k}_id`, table: `t_${String(pick(i)).padStart(4, '0')}` });
    const columns: GeneratedTable['columns'] = [];
    for (let c = 1 + references.length; c < total; c += 1) {
      const type = COLUMN_TYPES[pick(COLUMN_TYPES.length)]!;
      columns.push({ name: `c${c}`, type, notNull: next() < 0.3 });
    }
    const comment = next() < 0.5 ? `Generated table number ${i}` : null;
    const last = columns.at(-1);
    const unique = next() < 0.3 && last ? last.name : null;
    tables.push({ name, columns, references, comment, unique });
  }
  return tables;
}

/** Columns and foreign keys of the generated schema (the id and reference columns included). */
function schemaSize(tables: GeneratedTable[]): { columns: number; foreignKeys: number } {
  let columns = 0;
  let foreignKeys = 0;
  for (const table of tables) {
    columns += 1 + table.references.length + table.columns.length;
    foreignKeys += table.references.length;
  }
  return { columns, foreignKeys };
}

/** The schema as PostgreSQL DDL. */
function postgresDdl(tables: GeneratedTable[]): string[] {
  const statements: string[] = [];
  for (const table of tables) {
    const parts = [
      'id bigint PRIMARY KEY',
      ...table.references.map((r) => `${r.column} bigint REFERENCES ${r.table}(id)`),
      ...table.columns.map((c) => `${c.name} ${c.type.postgres}${c.notNull ? ' NOT NULL' : ''}`),
    ];
    statements.push(`CREATE TABLE ${table.name} (${parts.join(', ')});`);
    if (table.comment) statements.push(`COMMENT ON TABLE ${table.name} IS '${table.comment}';`);
    if (table.unique)
      statements.push(
        `CREATE UNIQUE INDEX ${table.name}_${table.unique}_key ON ${table.name} (${table.unique});`,
      );
  }
  return statements;
}

/** The schema as MySQL DDL (a unique index only on a type MySQL can index whole). */
function mysqlDdl(tables: GeneratedTable[]): string[] {
  return tables.map((table) => {
    const parts = [
      'id BIGINT PRIMARY KEY',
      ...table.references.map((r) => `${r.column} BIGINT`),
      ...table.columns.map((c) => `${c.name} ${c.type.mysql}${c.notNull ? ' NOT NULL' : ''}`),
      ...table.references.map((r) => `FOREIGN KEY (${r.column}) REFERENCES ${r.table}(id)`),
    ];
    const unique = table.columns.find((c) => c.name === table.unique);
    if (unique?.type.indexable) parts.push(`UNIQUE KEY ${table.name}_${unique.name}_key (${unique.name})`);
    const comment = table.comment ? ` COMMENT '${table.comment}'` : '';
    return `CREATE TABLE ${table.name} (${parts.join(', ')})${comment};`;
  });
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
  const tables = generateTables(tableCount);
  const generated = schemaSize(tables);
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
    const statements = postgresDdl(tables);
    const started = performance.now();
    await client.query('BEGIN');
    for (let i = 0; i < statements.length; i += 500) {
      await client.query(statements.slice(i, i + 500).join('\n'));
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
    if (oursTables !== tableCount || oursForeignKeys !== generated.foreignKeys) {
      throw new Error(
        `sqlrecall found ${oursTables} tables / ${oursForeignKeys} FKs, expected ${tableCount} / ${generated.foreignKeys}`,
      );
    }
    const engines: EngineFigure[] = [{ engine: 'postgres', tables: oursTables, ms: round(oursMs) }];
    for (const engine of ENGINES) engines.push(await measureEngine(engine, tables, generated.foreignKeys));
    if (args.json) {
      process.stdout.write(`${JSON.stringify({ ...report, engines }, null, 2)}\n`);
    } else {
      printTable(report);
      printEngines(engines);
    }
    const wrong = engines.find((e) => e.error !== undefined);
    if (wrong) throw new Error(`${wrong.engine}: ${wrong.error}`);
  } finally {
    await client.end().catch(() => {});
    await connector.close();
    await adminQuery(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
    log(`dropped ${dbName}`);
  }
}

/** One engine's figure: `introspect()` of the generated schema, median of the runs. */
interface EngineFigure {
  engine: string;
  /** Tables found (must be all of them). */
  tables: number;
  /** Median milliseconds, or null when the engine was skipped. */
  ms: number | null;
  /** Why the engine was skipped (not reachable here). */
  skipped?: string;
  /** What it got wrong (a table or a foreign key missing): fails the run. */
  error?: string;
}

/**
 * An engine the generated schema is introspected on besides the PostgreSQL server, whose
 * comparison with the naive approach comes first. A further engine is one more entry of
 * {@link ENGINES}: set up the generated schema (its own DDL), hand back a connector on it.
 */
interface BenchEngine {
  name: string;
  /** Why the engine cannot run here, or undefined. */
  unavailable(): Promise<string | undefined>;
  /** A database holding `tables`, and a connector on it; `dispose` removes both. */
  setUp(tables: GeneratedTable[]): Promise<{ connector: DatabaseConnector; dispose(): Promise<void> }>;
}

const pgliteEngine: BenchEngine = {
  name: 'pglite',
  unavailable: async () => undefined,
  async setUp(tables) {
    const db = new PGlite();
    await db.exec(postgresDdl(tables).join('\n'));
    await db.exec('ANALYZE');
    const connector = createPgliteConnector({ pglite: db });
    return {
      connector,
      dispose: async () => {
        await connector.close();
        await db.close();
      },
    };
  },
};

/** `--mysql-url` without its database, as mysql2 options. */
function mysqlAdminOptions(): mysql.ConnectionOptions {
  const url = new URL((args['mysql-url'] ?? '').replace(/^(mysql|mariadb):/i, 'http:'));
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username || 'root'),
    password: decodeURIComponent(url.password),
    multipleStatements: true,
    connectTimeout: 3_000,
  };
}

const mariadbEngine: BenchEngine = {
  name: 'mariadb',
  async unavailable() {
    try {
      const conn = await mysql.createConnection(mysqlAdminOptions());
      await conn.end();
      return undefined;
    } catch (error) {
      return `no MySQL/MariaDB server at ${maskUrl(args['mysql-url'] ?? '')} (${(error as Error).message})`;
    }
  },
  async setUp(tables) {
    const name = `sqlrecall_bench_${randomBytes(4).toString('hex')}`;
    const admin = await mysql.createConnection(mysqlAdminOptions());
    await admin.query(`CREATE DATABASE \`${name}\``);
    const drop = async () => {
      await admin.query(`DROP DATABASE IF EXISTS \`${name}\``).catch(() => {});
      await admin.end().catch(() => {});
    };
    try {
      await admin.query(`USE \`${name}\``);
      const statements = mysqlDdl(tables);
      for (let i = 0; i < statements.length; i += 200)
        await admin.query(statements.slice(i, i + 200).join('\n'));
      const url = new URL((args['mysql-url'] ?? '').replace(/^(mysql|mariadb):/i, 'http:'));
      url.pathname = `/${name}`;
      const connector = await openDatabase(url.toString().replace(/^http:/, 'mysql:'));
      return {
        connector,
        dispose: async () => {
          await connector.close();
          await drop();
        },
      };
    } catch (error) {
      await drop();
      throw error;
    }
  },
};

/**
 * The schema as DuckDB DDL: PostgreSQL's, with `JSON` for `jsonb` (DuckDB has no jsonb) and
 * `VARCHAR[]` for `text[]`; DuckDB keeps table comments.
 */
function duckdbDdl(tables: GeneratedTable[]): string[] {
  // DuckDB indexes no LIST or JSON key: those unique indexes are left out.
  const unindexable = new Set(
    tables.flatMap((table) =>
      table.columns
        .filter((c) => c.type.postgres === 'jsonb' || c.type.postgres === 'text[]')
        .map((c) => `${table.name}_${c.name}_key`),
    ),
  );
  return postgresDdl(tables)
    .filter(
      (statement) =>
        !/^CREATE UNIQUE INDEX (\S+)/.test(statement) || !unindexable.has(statement.split(' ')[3]!),
    )
    .map((statement) => statement.replace(/\bjsonb\b/g, 'JSON').replace(/\btext\[\]/g, 'VARCHAR[]'));
}

/** A temporary folder for a file engine's database, removed by the returned function. */
function scratchFolder(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

const sqliteEngine: BenchEngine = {
  name: 'sqlite',
  async unavailable() {
    try {
      createRequire(import.meta.url).resolve('better-sqlite3');
      return undefined;
    } catch {
      return 'the optional package better-sqlite3 is not installed';
    }
  },
  async setUp(tables) {
    const { default: Database } = await import('better-sqlite3');
    const scratch = scratchFolder('sqlrecall-bench-sqlite-');
    const file = join(scratch.dir, 'bench.db');
    const db = new Database(file);
    // SQLite accepts PostgreSQL's type names as declared types; it keeps no comments.
    db.exec(
      postgresDdl(tables)
        .filter((statement) => !statement.startsWith('COMMENT'))
        .join('\n'),
    );
    db.close();
    const connector = await openDatabase(`sqlite:${file}`);
    return {
      connector,
      dispose: async () => {
        await connector.close();
        scratch.remove();
      },
    };
  },
};

const duckdbEngine: BenchEngine = {
  name: 'duckdb',
  async unavailable() {
    try {
      createRequire(import.meta.url).resolve('@duckdb/node-api');
      return undefined;
    } catch {
      return 'the optional package @duckdb/node-api is not installed';
    }
  },
  async setUp(tables) {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const scratch = scratchFolder('sqlrecall-bench-duckdb-');
    const file = join(scratch.dir, 'bench.duckdb');
    const instance = await DuckDBInstance.create(file);
    const connection = await instance.connect();
    for (const statement of duckdbDdl(tables)) await connection.run(statement);
    connection.closeSync();
    instance.closeSync();
    const connector = await openDatabase(`duckdb:${file}`);
    return {
      connector,
      dispose: async () => {
        await connector.close();
        scratch.remove();
      },
    };
  },
};

/** The engines measured after the PostgreSQL server, in order. */
const ENGINES: BenchEngine[] = [pgliteEngine, mariadbEngine, sqliteEngine, duckdbEngine];

/** Sets up `engine`, introspects `repeat` times, checks every table and foreign key was found. */
async function measureEngine(
  engine: BenchEngine,
  tables: GeneratedTable[],
  foreignKeys: number,
): Promise<EngineFigure> {
  const reason = await engine.unavailable();
  if (reason) {
    log(`${engine.name}: skipped (${reason})`);
    return { engine: engine.name, tables: 0, ms: null, skipped: reason };
  }
  const started = performance.now();
  const { connector, dispose } = await engine.setUp(tables);
  log(`${engine.name}: schema created in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  try {
    await connector.ping();
    const times: number[] = [];
    let found = 0;
    let foundKeys = 0;
    for (let run = 1; run <= repeat; run += 1) {
      const t = performance.now();
      const schema = await connector.introspect();
      times.push(performance.now() - t);
      found = schema.tables.length;
      foundKeys = schema.tables.reduce((sum, table) => sum + table.foreignKeys.length, 0);
      log(`${engine.name} run ${run}/${repeat}: ${times.at(-1)!.toFixed(1)} ms`);
    }
    const figure: EngineFigure = { engine: engine.name, tables: found, ms: round(median(times)) };
    if (found !== tables.length || foundKeys !== foreignKeys)
      figure.error = `found ${found} tables / ${foundKeys} FKs, expected ${tables.length} / ${foreignKeys}`;
    return figure;
  } finally {
    await dispose();
  }
}

/** The table "engine | tables | ms". */
function printEngines(figures: EngineFigure[]): void {
  console.log('');
  console.log(`introspect() of the same ${tableCount}-table schema per engine, median of ${repeat} runs`);
  const rows = [
    ['engine', 'tables', 'ms'],
    ...figures.map((f) => [
      f.engine,
      f.skipped ? '-' : String(f.tables),
      f.ms === null ? `skipped: ${f.skipped}` : f.ms.toLocaleString('en-US'),
    ]),
  ];
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const [i, row] of rows.entries()) {
    console.log(
      `| ${row[0]!.padEnd(widths[0]!)} | ${row[1]!.padStart(widths[1]!)} | ${row[2]!.padStart(widths[2]!)} |`,
    );
    if (i === 0)
      console.log(
        `|${'-'.repeat(widths[0]! + 2)}|${'-'.repeat(widths[1]! + 1)}:|${'-'.repeat(widths[2]! + 1)}:|`,
      );
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
