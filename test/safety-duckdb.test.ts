/**
 * The DuckDB read-only path against real files: every hostile statement is refused by the guard
 * with a reason AND every file (the data folder and a secret in a sibling folder) is byte for byte
 * what it was, with nothing added; a file outside the folder cannot be read by any route, neither
 * through the guard nor when a statement reaches the engine directly (its configuration stops
 * it too); reads of each kind are accepted and run.
 */
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { guardForDialect } from '../src/sql/dialect-guard.js';
import { guardDuckdbSql } from '../src/sql/duckdb/guard.js';
import { folderFingerprint, writeDuckdbFile } from './support/duckdb-files.js';
import { tempDir } from './support/temp-dir.js';

const SECRET = 'TOP-SECRET-7f3a9c';
const root = tempDir('sqlrecall-duckdb-safety-');
const data = join(root, 'data');
const sibling = join(root, 'private');
const secret = join(sibling, 'secret.csv');

/** Statement → the rule that must refuse it (`{SIB}` and `{DATA}` stand for the two folders). */
const HOSTILE: [string, string][] = [
  ["COPY sales TO '{DATA}/sales.csv'", 'statement-kind'],
  ["COPY (SELECT 1) TO '{SIB}/out.csv'", 'statement-kind'],
  ["COPY sales FROM '{SIB}/secret.csv'", 'statement-kind'],
  ["EXPORT DATABASE '{DATA}/export'", 'statement-kind'],
  ["IMPORT DATABASE '{SIB}'", 'statement-kind'],
  ["ATTACH '{SIB}/other.duckdb' AS other", 'statement-kind'],
  ["ATTACH '{DATA}/new.duckdb'", 'statement-kind'],
  ['DETACH files', 'statement-kind'],
  ['INSTALL httpfs', 'statement-kind'],
  ['LOAD httpfs', 'statement-kind'],
  ['FORCE INSTALL sqlite_scanner', 'statement-kind'],
  ['SET enable_external_access = true', 'statement-kind'],
  ["SET allowed_directories = ['/']", 'statement-kind'],
  ['SET GLOBAL lock_configuration = false', 'statement-kind'],
  ['RESET lock_configuration', 'statement-kind'],
  ["SET VARIABLE x = 'y'", 'statement-kind'],
  ['PRAGMA database_list', 'statement-kind'],
  ['PRAGMA enable_profiling', 'statement-kind'],
  ['CALL pragma_version()', 'statement-kind'],
  ['CREATE TABLE t AS SELECT * FROM sales', 'statement-kind'],
  ["CREATE VIEW leak AS SELECT * FROM read_text('{SIB}/secret.csv')", 'statement-kind'],
  ['CREATE MACRO m(x) AS x + 1', 'statement-kind'],
  ["CREATE SECRET s (TYPE s3, KEY_ID 'a', SECRET 'b')", 'statement-kind'],
  ['INSERT INTO sales VALUES (9, 9)', 'statement-kind'],
  ['UPDATE sales SET amount = 0', 'statement-kind'],
  ['DELETE FROM sales', 'statement-kind'],
  ['DROP VIEW sales', 'statement-kind'],
  ['ALTER VIEW sales RENAME TO s2', 'statement-kind'],
  ['CHECKPOINT', 'statement-kind'],
  ['VACUUM', 'statement-kind'],
  ['BEGIN TRANSACTION', 'statement-kind'],
  ['USE memory', 'statement-kind'],
  ['EXPLAIN ANALYZE SELECT * FROM sales', 'statement-kind'],
  ['PIVOT sales ON id USING sum(amount)', 'statement-kind'],
  ["SELECT * FROM read_text('{SIB}/secret.csv')", 'table-function'],
  ["SELECT * FROM read_blob('{SIB}/secret.csv')", 'table-function'],
  ["SELECT * FROM read_csv('{DATA}/../private/secret.csv')", 'table-function'],
  ["SELECT * FROM read_csv_auto('secret.csv')", 'table-function'],
  ["SELECT * FROM read_csv('../private/secret.csv')", 'table-function'],
  ["SELECT * FROM read_json_auto('{SIB}/*.json')", 'table-function'],
  ["SELECT * FROM read_parquet(['{DATA}/sales.csv', '{SIB}/secret.csv'])", 'table-function'],
  ["SELECT * FROM parquet_metadata('{SIB}/secret.csv')", 'table-function'],
  ["SELECT * FROM sniff_csv('{SIB}/secret.csv')", 'table-function'],
  ["SELECT * FROM glob('{SIB}/*')", 'table-function'],
  ["SELECT * FROM glob('{DATA}/*')", 'table-function'],
  ["SELECT * FROM query('SELECT * FROM read_text(''{SIB}/secret.csv'')')", 'table-function'],
  ["SELECT * FROM query_table('sales')", 'table-function'],
  ['SELECT * FROM duckdb_settings()', 'table-function'],
  ['SELECT * FROM duckdb_secrets()', 'table-function'],
  ['SELECT * FROM duckdb_databases()', 'table-function'],
  ['SELECT * FROM enable_logging()', 'table-function'],
  ["SELECT s.*, t.* FROM sales s, read_text('{SIB}/secret.csv') t", 'table-function'],
  ["SELECT (SELECT content FROM read_text('{SIB}/secret.csv')) AS c", 'table-function'],
  ["WITH s AS (SELECT * FROM read_text('{SIB}/secret.csv')) SELECT * FROM s", 'table-function'],
  ["SELECT id FROM sales UNION ALL SELECT 1 FROM read_text('{SIB}/secret.csv')", 'table-function'],
  ["SELECT * FROM '{SIB}/secret.csv'", 'file-scan'],
  ["SELECT * FROM 'secret.csv'", 'file-scan'],
  ['SELECT * FROM "../private/secret.csv"', 'file-scan'],
  ["FROM '{DATA}/sales.csv'", 'file-scan'],
  ["SELECT * FROM 'https://example.com/x.parquet'", 'file-scan'],
  ['SELECT sleep_ms(5000)', 'function'],
  ['SELECT pg_sleep(5)', 'function'],
  ["SELECT getvariable('x')", 'function'],
  ["SELECT current_setting('allowed_paths')", 'function'],
  ['SELECT setseed(0.5)', 'function'],
  ["SELECT nextval('seq')", 'function'],
  ["SELECT write_log('x')", 'function'],
  ['SELECT my_macro(1)', 'function'],
  ["SELECT other.main.lower('x')", 'function'],
  ['SELECT 1; SELECT 2', 'multiple-statements'],
  ["SELECT 1; COPY sales TO '{DATA}/x.csv'", 'multiple-statements'],
  ['-- only a comment', 'empty'],
  ['SELECT 1\0', 'nul-byte'],
  ['SELEC 1', 'parse-error'],
];

/** Reads that must pass the guard and run. */
const READS: string[] = [
  'SELECT id, amount FROM sales ORDER BY id',
  'SELECT count(*) AS n, sum(amount) AS total FROM sales',
  'WITH big AS (SELECT * FROM sales WHERE amount > 5) SELECT id FROM big ORDER BY id',
  'SELECT id FROM sales WHERE id = 1 UNION ALL SELECT id FROM sales WHERE id = 2',
  'SELECT s.id FROM sales s WHERE s.id IN (SELECT id FROM sales WHERE amount > 0)',
  'SELECT id, rank() OVER (ORDER BY amount DESC) AS r, sum(amount) FILTER (WHERE amount > 5) OVER () AS f FROM sales',
  "SELECT \"id\", amount::VARCHAR AS a, date_trunc('month', DATE '2024-02-10') AS m FROM sales WHERE 'x' ILIKE 'X'",
  'FROM sales SELECT id LIMIT 1',
  'SELECT * FROM range(3) t(i) WHERE i > 0 -- a trailing comment',
  "SELECT strftime(DATE '2024-01-31' + INTERVAL 1 MONTH, '%Y-%m') AS m;",
  "SELECT [x * 2 FOR x IN [1, 2]] AS l, {'a': 1} AS s, list_sum([1, 2]) AS t",
  'SELECT table_name FROM information_schema.tables',
  'SELECT view_name FROM duckdb_views() WHERE NOT internal',
  'DESCRIBE sales',
  'SELECT coalesce(NULL, 1), CASE WHEN 1 = 1 THEN 2 END, CAST(1 AS DOUBLE), 1 IS DISTINCT FROM 2',
];

const place = (sql: string) => sql.replaceAll('{SIB}', sibling).replaceAll('{DATA}', data);

describe('DuckDB guard verdicts', () => {
  it.each(HOSTILE)('refuses %s', async (sql, rule) => {
    const verdict = await guardDuckdbSql(place(sql));
    expect(verdict).toMatchObject({ ok: false, rule });
    if (!verdict.ok) expect(verdict.reason).toMatch(/\S/);
  });

  it.each(READS)('accepts %s', async (sql) => {
    expect(await guardDuckdbSql(sql)).toMatchObject({ ok: true });
  });

  it('names the statement it refuses and why', async () => {
    expect(await guardDuckdbSql(`COPY sales TO '${data}/x.csv'`)).toMatchObject({
      reason: 'refused: COPY is not a read; only SELECT is allowed',
    });
    expect(await guardDuckdbSql("SELECT * FROM read_csv('x.csv')")).toMatchObject({
      reason:
        'refused: read_csv() reads files directly; the files are already tables: name the table instead',
    });
  });

  it('runs the statement without its final semicolon', async () => {
    expect(await guardDuckdbSql('WITH x AS (SELECT 1) SELECT * FROM x;  ')).toEqual({
      ok: true,
      sql: 'WITH x AS (SELECT 1) SELECT * FROM x',
      kind: 'with',
    });
  });

  it('checks the table allowlist: a table outside it is refused, one inside it accepted', async () => {
    expect(await guardForDialect('duckdb', 'SELECT * FROM secret', { allowTables: ['sales'] })).toMatchObject(
      {
        ok: false,
        rule: 'allowlist',
      },
    );
    expect(await guardForDialect('duckdb', 'SELECT * FROM sales', { allowTables: ['sales'] })).toMatchObject({
      ok: true,
    });
  });
});

describe('DuckDB hostile statements on a real folder', () => {
  let db: DatabaseConnector;
  let before: Record<string, string>;

  beforeAll(async () => {
    mkdirSync(data, { recursive: true });
    mkdirSync(sibling, { recursive: true });
    writeFileSync(join(data, 'sales.csv'), 'id,amount\n1,10.5\n2,20\n3,3.25\n');
    writeFileSync(secret, `password\n${SECRET}\n`);
    writeFileSync(join(sibling, 'secret.json'), JSON.stringify([{ password: SECRET }]));
    await writeDuckdbFile(join(sibling, 'other.duckdb'), `CREATE TABLE t AS SELECT '${SECRET}' AS s`);
    // A link inside the folder to the secret, under a name that is not a data file: never a table.
    symlinkSync(secret, join(data, 'notes.txt'));
    db = await openDatabase(`${data}/`);
    before = folderFingerprint(root);
  });
  afterAll(async () => {
    await db?.close();
  });

  it.each(HOSTILE)('refuses %s on the SQL path and leaves every file as it was', async (sql) => {
    const error = await runCheckedSql({ db, sql: place(sql), maxRows: 100, timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SqlrecallError);
    expect(['guard_refused', 'usage']).toContain((error as SqlrecallError).code);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect(folderFingerprint(root)).toEqual(before);
  });

  it.each(READS)('runs %s', async (sql) => {
    const { result } = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 });
    expect(result.rowCount).toBeGreaterThan(0);
  });

  /** Reads of the secret sent to the engine directly, past the guard: its configuration must stop each. */
  const ROUTES = [
    "SELECT * FROM read_text('{SIB}/secret.csv')",
    "SELECT * FROM read_csv('{DATA}/../private/secret.csv')",
    "SELECT * FROM read_csv('../private/secret.csv')",
    "SELECT * FROM read_csv_auto('private/secret.csv')",
    "SELECT * FROM read_json_auto('{SIB}/secret.json')",
    "SELECT * FROM read_text('{DATA}/notes.txt')",
    "SELECT * FROM read_blob('{SIB}/*')",
    "SELECT * FROM glob('{SIB}/*')",
    "SELECT * FROM '{SIB}/secret.csv'",
    "SELECT * FROM parquet_metadata('{SIB}/secret.csv')",
    "SELECT * FROM query('SELECT * FROM read_text(''{SIB}/secret.csv'')')",
    "SELECT * FROM sniff_csv('{SIB}/secret.csv')",
  ];

  it.each(ROUTES)('the engine itself refuses %s', async (sql) => {
    const error = await db.execute(place(sql), { maxRows: 100, timeoutMs: 5_000 }).then(
      (result) => ({ leaked: JSON.stringify(result) }),
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SqlrecallError);
    expect(JSON.stringify(error)).not.toContain(SECRET);
    expect((error as SqlrecallError).message).toMatch(/Permission Error|disabled by configuration/);
  });

  it('the engine refuses ATTACH, COPY and settings past the guard too', async () => {
    for (const sql of [
      "ATTACH '{SIB}/other.duckdb' AS other",
      "COPY (SELECT 1) TO '{DATA}/x.csv'",
      'SET enable_external_access = true',
      "SET allowed_paths = ['{SIB}/secret.csv']",
      'INSTALL httpfs',
      "CREATE VIEW v AS SELECT * FROM read_text('{SIB}/secret.csv')",
    ]) {
      const error = await db.execute(place(sql), { maxRows: 1, timeoutMs: 5_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error, sql).toBeInstanceOf(SqlrecallError);
    }
    expect(folderFingerprint(root)).toEqual(before);
  });
});
