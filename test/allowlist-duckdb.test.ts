/**
 * The table allowlist on DuckDB, read from DuckDB's own parse tree: CTE scopes (a CTE shadows a
 * table only in its own query), subqueries, quoted and case-varied names, schema- and
 * catalog-qualified names, the engine's catalog (information_schema, pg_catalog, duckdb_*(),
 * SHOW, sqlite_master) and file table functions; then the allowed reads run on a real file with
 * the catalog cut to the allowed tables, and the refused ones never reach it.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { openDatabase } from '../src/databases/open.js';
import { onlyAllowedTables } from '../src/sql/allowlist.js';
import { guardForDialect } from '../src/sql/dialect-guard.js';
import { writeDuckdbFile } from './support/duckdb-files.js';
import { tempDir } from './support/temp-dir.js';

const SQL = `
  CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
  CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total DECIMAL(12,2));
  CREATE TABLE secrets (id INTEGER, password TEXT);
  CREATE SCHEMA hr;
  CREATE TABLE hr.salaries (id INTEGER, amount INTEGER);
  CREATE TABLE hr.customers (id INTEGER, note TEXT);
  CREATE VIEW customer_secrets AS SELECT c.name, s.password FROM customers c JOIN secrets s ON s.id = c.id;
  INSERT INTO customers VALUES (1, 'Ada'), (2, 'Grace');
  INSERT INTO orders VALUES (10, 1, 120.50), (11, 2, 3.25);
  INSERT INTO secrets VALUES (1, 'hunter2');
  INSERT INTO hr.salaries VALUES (1, 100);
`;

const ALLOW = ['customers', 'orders'];

/** Statements the guard must refuse with rule `allowlist` under {@link ALLOW}. */
const REFUSED: string[] = [
  'SELECT * FROM secrets',
  'SELECT * FROM SECRETS',
  'SELECT * FROM "Secrets"',
  'SELECT * FROM main.secrets',
  'SELECT * FROM "main"."SECRETS"',
  'SELECT * FROM hr.salaries',
  'SELECT * FROM other.main.customers',
  'SELECT * FROM temp.main.customers',
  'SELECT * FROM customers, secrets',
  'SELECT * FROM customers c JOIN secrets s ON s.id = c.id',
  'SELECT * FROM customers POSITIONAL JOIN secrets',
  'SELECT * FROM (SELECT * FROM (SELECT password FROM secrets))',
  'SELECT name FROM customers WHERE id IN (SELECT id FROM secrets)',
  'SELECT (SELECT password FROM secrets LIMIT 1) AS p FROM customers',
  'SELECT 1 UNION SELECT 2 FROM secrets',
  'FROM secrets',
  'SELECT name FROM customers WHERE id IN (FROM secrets)',
  'SELECT * FROM customers c INNER JOIN "main".secrets s ON true',
  'DESCRIBE secrets',
  'SUMMARIZE secrets',
  'SELECT * FROM customer_secrets',
  // A CTE of that name shadows the table only in the query it belongs to.
  'SELECT * FROM (WITH secrets AS (SELECT 1) SELECT * FROM secrets), secrets',
  'WITH c AS (SELECT * FROM secrets) SELECT * FROM c',
  // A non-recursive CTE's body reads the table of its own name.
  'WITH secrets AS (SELECT * FROM secrets) SELECT * FROM secrets',
  'WITH c AS (SELECT 1) SELECT * FROM c, main.secrets',
  // The anchor of a recursive CTE reads the table of the CTE's own name, in any position.
  'WITH RECURSIVE secrets AS (SELECT * FROM secrets UNION ALL SELECT * FROM secrets WHERE false) SELECT * FROM secrets',
  'SELECT * FROM customers WHERE EXISTS (WITH RECURSIVE secrets AS (SELECT * FROM secrets UNION SELECT * FROM secrets WHERE false) SELECT 1 FROM secrets)',
  'SELECT (WITH RECURSIVE secrets AS (SELECT password FROM secrets UNION ALL SELECT password FROM secrets WHERE false) SELECT max(password) FROM secrets) AS p',
  // The engine's own catalog.
  'SELECT * FROM information_schema.tables',
  'SELECT * FROM information_schema.columns',
  'SELECT * FROM pg_catalog.pg_class',
  'SELECT * FROM pg_tables',
  'SELECT * FROM sqlite_master',
  'SELECT * FROM duckdb_tables()',
  'SELECT * FROM duckdb_columns()',
  'SELECT * FROM system.main.duckdb_tables',
  'SHOW TABLES',
  'SHOW ALL TABLES',
];

/** Reads the guard must accept under {@link ALLOW}. */
const ACCEPTED: string[] = [
  'SELECT * FROM customers',
  'SELECT * FROM CUSTOMERS',
  'SELECT * FROM "Customers"',
  'SELECT * FROM main.customers',
  // A bare pattern allows the name in every schema.
  'SELECT * FROM hr.customers',
  'SELECT c.name, o.total FROM customers AS c JOIN orders o ON o.customer_id = c.id',
  'FROM orders SELECT sum(total)',
  'WITH secrets AS (SELECT * FROM customers) SELECT * FROM secrets',
  'WITH "SECRETS" AS (SELECT 1) SELECT * FROM secrets',
  'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n',
  'WITH a AS (SELECT id FROM orders), b AS (SELECT * FROM a) SELECT * FROM b',
  'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders)',
  'SELECT * FROM range(3)',
  'DESCRIBE customers',
  'SELECT 1',
];

describe('DuckDB allowlist in the guard', () => {
  let schema: Schema;
  let db: DatabaseConnector;

  beforeAll(async () => {
    const path = join(tempDir('sqlrecall-duckdb-allow-'), 'shop.duckdb');
    await writeDuckdbFile(path, SQL);
    db = await openDatabase(`duckdb:${path}`, { allowTables: ALLOW });
    schema = onlyAllowedTables(await db.introspect(), ALLOW);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('sees only the allowed tables in the catalog it is given', () => {
    expect(schema.tables.map((table) => `${table.schema}.${table.name}`).sort()).toEqual([
      'hr.customers',
      'main.customers',
      'main.orders',
    ]);
  });

  for (const sql of REFUSED)
    it(`refuses: ${sql}`, async () => {
      const verdict = await guardForDialect('duckdb', sql, { allowTables: ALLOW, schema });
      expect(verdict).toMatchObject({ ok: false, rule: 'allowlist' });
      if (!verdict.ok) expect(verdict.reason).toMatch(/^refused: /);
    });

  for (const sql of ACCEPTED)
    it(`accepts: ${sql}`, async () => {
      expect(await guardForDialect('duckdb', sql, { allowTables: ALLOW, schema })).toMatchObject({
        ok: true,
      });
    });

  it('refuses file table functions with or without an allowlist', async () => {
    for (const sql of ["SELECT * FROM read_csv('x.csv')", "SELECT * FROM 'x.csv'", "SELECT * FROM glob('*')"])
      expect(await guardForDialect('duckdb', sql, { allowTables: ['main.*'], schema })).toMatchObject({
        ok: false,
      });
  });

  it('refuses the catalog views even without a catalog to compare with', async () => {
    for (const sql of [
      'SELECT * FROM duckdb_tables',
      'SELECT * FROM sqlite_master',
      'SELECT * FROM pg_class',
    ])
      expect(await guardForDialect('duckdb', sql, { allowTables: ['main.*'] })).toMatchObject({
        ok: false,
        rule: 'allowlist',
      });
  });

  it('names the relation that is not allowed', async () => {
    expect(
      await guardForDialect('duckdb', 'SELECT * FROM customers JOIN Secrets ON true', { allowTables: ALLOW }),
    ).toEqual({
      ok: false,
      rule: 'allowlist',
      reason: 'refused: main.secrets is not one of the allowed tables (customers, orders)',
    });
  });

  it('runs the allowed reads on the file and refuses the others before they run', async () => {
    const run = (sql: string) =>
      runCheckedSql({
        sql,
        db,
        dialect: 'duckdb',
        allowTables: ALLOW,
        schema,
        maxRows: 100,
        timeoutMs: 10_000,
      });
    const { result } = await run(
      'SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id',
    );
    expect(result.rowCount).toBe(2);
    const error = await run('SELECT password FROM secrets').then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(SqlrecallError);
    expect((error as SqlrecallError).details).toMatchObject({ rule: 'allowlist' });
    expect((error as SqlrecallError).message).not.toContain('hunter2');
  });
});

describe('DuckDB database that defines macros', () => {
  it('is not opened when a macro takes the name of a built-in function (it would run in its place)', async () => {
    const path = join(tempDir('sqlrecall-duckdb-macro-'), 'shadow.duckdb');
    await writeDuckdbFile(
      path,
      `${SQL} CREATE MACRO upper(x) AS (SELECT max(password) FROM secrets); CREATE MACRO range(x) AS TABLE SELECT * FROM secrets;`,
    );
    // The file is opened on first use: introspection, or the first statement.
    const db = await openDatabase(`duckdb:${path}`, { allowTables: ALLOW });
    try {
      const error = await db.introspect().then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toBeInstanceOf(SqlrecallError);
      expect((error as SqlrecallError).code).toBe('config');
      expect((error as SqlrecallError).message).toMatch(/range, upper/);
      const run = await db
        .execute('SELECT upper(name) FROM customers', { maxRows: 10, timeoutMs: 5000 })
        .then(
          () => 'ran',
          (caught: unknown) => (caught instanceof SqlrecallError ? caught.code : 'other'),
        );
      expect(run).toBe('config');
    } finally {
      await db.close();
    }
  });

  it('is opened when its macros have names of their own, and a call to one is refused', async () => {
    const path = join(tempDir('sqlrecall-duckdb-macro-'), 'own.duckdb');
    await writeDuckdbFile(
      path,
      `${SQL} CREATE MACRO leak_password(x) AS (SELECT max(password) FROM secrets);`,
    );
    const db = await openDatabase(`duckdb:${path}`, { allowTables: ALLOW });
    try {
      const schema = onlyAllowedTables(await db.introspect(), ALLOW);
      const verdict = await guardForDialect('duckdb', 'SELECT leak_password(1) FROM customers', {
        allowTables: ALLOW,
        schema,
      });
      expect(verdict.ok).toBe(false);
    } finally {
      await db.close();
    }
  });
});
