/**
 * The table allowlist on SQLite, both lines: the guard's token walk (CTE scopes, subqueries,
 * quoted and case-varied names, `x IN table`, schema names, table-valued functions) and the
 * worker's check of the compiled program (every b-tree it opens is an allowed table's or index's),
 * which holds when the guard is bypassed and the connector is called directly.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { openDatabase } from '../src/databases/open.js';
import { onlyAllowedTables } from '../src/sql/allowlist.js';
import { guardForDialect } from '../src/sql/dialect-guard.js';
import { betterSqliteInstalled, fileSha256, makeSqliteFile } from './support/conformance/sqlite.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { tempDir } from './support/temp-dir.js';

const FIXTURE = `
  CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, "Region" TEXT);
  CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER, total REAL);
  CREATE INDEX orders_by_customer ON orders (customer_id);
  CREATE TABLE secrets (id INTEGER PRIMARY KEY, password TEXT);
  CREATE VIEW customer_secrets AS SELECT c.name, s.password FROM customers c JOIN secrets s ON s.id = c.id;
  CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
  INSERT INTO customers VALUES (1, 'Ada', 'EMEA'), (2, 'Grace', 'AMER');
  INSERT INTO orders VALUES (10, 1, 120.5), (11, 2, 3.25);
  INSERT INTO secrets VALUES (1, 'hunter2'), (2, 'swordfish');
`;

const ALLOW = ['customers', 'orders'];

/** Statements the guard must refuse with rule `allowlist` under {@link ALLOW}. */
const REFUSED: string[] = [
  'SELECT * FROM secrets',
  'SELECT * FROM SECRETS',
  'SELECT * FROM "Secrets"',
  'SELECT * FROM [secrets]',
  'SELECT * FROM `secrets`',
  "SELECT * FROM 'secrets'",
  'SELECT * FROM main.secrets',
  'SELECT * FROM "main"."secrets"',
  'SELECT * FROM temp.customers',
  'SELECT * FROM other.customers',
  'SELECT * FROM customers, secrets',
  'SELECT * FROM customers c JOIN secrets s ON s.id = c.id',
  'SELECT * FROM customers NATURAL JOIN secrets',
  'SELECT * FROM customers AS c INNER JOIN "main".secrets s ON 1',
  'SELECT * FROM customers c CROSS JOIN (orders o, secrets)',
  'SELECT * FROM customers c LEFT OUTER JOIN orders o ON o.customer_id = c.id, secrets',
  'SELECT * FROM (customers JOIN secrets USING (id))',
  'SELECT * FROM (SELECT * FROM (SELECT password FROM secrets))',
  'SELECT name FROM customers WHERE id IN (SELECT id FROM secrets)',
  'SELECT name FROM customers WHERE id IN secrets',
  'SELECT name FROM customers WHERE id NOT IN main.secrets',
  'SELECT (SELECT password FROM secrets LIMIT 1) AS p FROM customers',
  'SELECT * FROM customers WHERE EXISTS (SELECT 1 FROM secrets)',
  'SELECT 1 UNION SELECT password FROM secrets',
  'SELECT * FROM customer_secrets',
  // A CTE of that name shadows the table only inside its own parentheses.
  'SELECT * FROM (WITH secrets AS (SELECT 1) SELECT * FROM secrets), secrets',
  'SELECT * FROM customers WHERE id IN (WITH secrets AS (SELECT 1) SELECT * FROM secrets) AND id IN secrets',
  'WITH c AS (SELECT * FROM secrets) SELECT * FROM c',
  'WITH c AS (SELECT 1), d AS (SELECT * FROM secrets) SELECT * FROM c',
  // dbstat is a built-in virtual table that reads every page of the file.
  'SELECT * FROM dbstat',
  "SELECT * FROM json_each('[1]'), secrets",
  "SELECT * FROM customers WHERE name IN (SELECT value FROM json_each('[1]') JOIN secrets ON 1)",
];

/** Reads the guard must accept under {@link ALLOW}. */
const ACCEPTED: string[] = [
  'SELECT * FROM customers',
  'SELECT * FROM CUSTOMERS',
  'SELECT * FROM "Customers"',
  'SELECT * FROM main.customers',
  'SELECT * FROM [main].[orders]',
  'SELECT c.name, o.total FROM customers AS c JOIN orders o ON o.customer_id = c.id',
  'SELECT * FROM customers c, orders o WHERE o.customer_id = c.id ORDER BY c.id, o.id LIMIT 5',
  'WITH secrets AS (SELECT * FROM customers) SELECT * FROM secrets',
  'WITH "SECRETS" AS (SELECT 1) SELECT * FROM secrets',
  'WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 5) SELECT x FROM n',
  'WITH a AS (SELECT * FROM b), b AS (SELECT id FROM orders) SELECT * FROM a',
  'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders)',
  "SELECT key, value FROM json_each('[1,2]')",
  'SELECT * FROM generate_series(1, 3)',
  'SELECT count(*) FILTER (WHERE total > 1) FROM orders',
  'SELECT 1',
];

function catalog(allowTables: readonly string[]): Schema {
  const table = (name: string) => ({ schema: 'main', name, kind: 'table', columns: [], foreignKeys: [] });
  return onlyAllowedTables(
    {
      dialect: 'sqlite',
      database: 'shop.db',
      schemas: ['main'],
      tables: ['customers', 'orders', 'secrets'].map(table),
    } as unknown as Schema,
    allowTables,
  );
}

describe('SQLite allowlist in the guard', () => {
  for (const sql of REFUSED)
    it(`refuses: ${sql}`, async () => {
      const verdict = await guardForDialect('sqlite', sql, { allowTables: ALLOW, schema: catalog(ALLOW) });
      expect(verdict).toMatchObject({ ok: false, rule: 'allowlist' });
      if (!verdict.ok) expect(verdict.reason).toMatch(/^refused: /);
    });

  for (const sql of ACCEPTED)
    it(`accepts: ${sql}`, async () => {
      expect(
        await guardForDialect('sqlite', sql, { allowTables: ALLOW, schema: catalog(ALLOW) }),
      ).toMatchObject({
        ok: true,
      });
    });

  it('names the table that is not allowed', async () => {
    expect(
      await guardForDialect('sqlite', 'SELECT * FROM customers JOIN Secrets', { allowTables: ALLOW }),
    ).toEqual({
      ok: false,
      rule: 'allowlist',
      reason: 'refused: main.secrets is not one of the allowed tables (customers, orders)',
    });
  });

  it('matches patterns without regard to case, and main.* for the whole file', async () => {
    expect(
      await guardForDialect('sqlite', 'SELECT * FROM Orders', { allowTables: ['ORDERS'] }),
    ).toMatchObject({
      ok: true,
    });
    expect(
      await guardForDialect('sqlite', 'SELECT * FROM secrets', { allowTables: ['main.*'] }),
    ).toMatchObject({
      ok: true,
    });
    // A built-in virtual table is no table of the catalog, even under main.*.
    const all = catalog(['main.*']);
    expect(
      await guardForDialect('sqlite', 'SELECT * FROM dbstat', { allowTables: ['main.*'], schema: all }),
    ).toMatchObject({ ok: false, rule: 'allowlist' });
  });

  it('keeps a table in the catalog whatever the case of its name or pattern, on SQLite and DuckDB only', () => {
    const tables = ['Orders', 'secrets'].map((name) => ({
      schema: 'main',
      name,
      columns: [],
      foreignKeys: [],
    }));
    const names = (dialect: string) =>
      onlyAllowedTables({ dialect, database: 'x', schemas: ['main'], tables } as unknown as Schema, [
        'ORDERS',
      ]).tables.map((table) => table.name);
    expect(names('sqlite')).toEqual(['Orders']);
    expect(names('duckdb')).toEqual(['Orders']);
    // PostgreSQL folds the unquoted pattern to lower case and keeps the quoted name's case apart.
    expect(names('postgres')).toEqual([]);
  });

  it('still refuses what the guard refuses without an allowlist', async () => {
    expect(
      await guardForDialect('sqlite', 'SELECT * FROM sqlite_master', { allowTables: ['main.*'] }),
    ).toMatchObject({
      ok: false,
      rule: 'system-catalog',
    });
    expect(await guardForDialect('sqlite', 'DELETE FROM customers', { allowTables: ALLOW })).toMatchObject({
      ok: false,
      rule: 'statement-kind',
    });
  });
});

const available = betterSqliteInstalled();

describe.skipIf(!available)('SQLite allowlist on the compiled program (guard bypassed)', () => {
  let path: string;
  let db: DatabaseConnector;
  let hash: string;
  const RUN = { maxRows: 100, timeoutMs: 10_000 };

  beforeAll(async () => {
    path = await makeSqliteFile(FIXTURE);
    hash = fileSha256(path);
    db = await openDatabase(`sqlite:${path}`, { allowTables: ALLOW });
  });
  afterAll(async () => {
    await db?.close();
    if (path) expect(fileSha256(path)).toBe(hash);
  });

  async function refusal(sql: string): Promise<SqlrecallError> {
    try {
      await db.execute(sql, RUN);
    } catch (error) {
      if (error instanceof SqlrecallError) return error;
      throw error;
    }
    throw new Error(`expected a refusal: ${sql}`);
  }

  for (const sql of [
    'SELECT * FROM secrets',
    'SELECT * FROM "SECRETS"',
    'SELECT * FROM customer_secrets',
    'SELECT * FROM customers WHERE id IN (SELECT id FROM secrets)',
    'WITH c AS (SELECT * FROM secrets) SELECT count(*) FROM c',
    'SELECT name FROM sqlite_master',
    'SELECT * FROM dbstat',
    "SELECT * FROM pragma_table_info('secrets')",
    // One harmless call in the text does not pay for a second virtual table.
    "SELECT count(*) FROM json_each('[1]'), dbstat",
  ])
    it(`refuses before running: ${sql}`, async () => {
      const error = await refusal(sql);
      expect(error.code).toBe('guard_refused');
      expect(error.details).toMatchObject({ rule: 'allowlist' });
      expect(error.message).not.toMatch(/hunter2|swordfish/);
    });

  for (const [sql, rows] of [
    ['SELECT * FROM customers', 2],
    ['SELECT c.name FROM customers c JOIN orders o ON o.customer_id = c.id', 2],
    ['SELECT customer_id FROM orders WHERE customer_id = 1', 1],
    ['SELECT * FROM big_orders', 1],
    ["SELECT value FROM json_each('[1,2,3]')", 3],
    ['WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 4) SELECT x FROM n', 4],
  ] as const)
    it(`runs: ${sql}`, async () => {
      expect((await db.execute(sql, RUN)).rowCount).toBe(rows);
    });

  it('keeps working after a refusal (the read transaction is closed either way)', async () => {
    await refusal('SELECT * FROM secrets');
    expect((await db.execute('SELECT count(*) AS n FROM orders', RUN)).rows).toEqual([[2]]);
  });
});

describe.skipIf(!available)('`sqlrecall sql --allow-tables` on a SQLite file', () => {
  it('runs a read of the allowed tables and refuses one of another with exit 3, naming it', async () => {
    const path = await makeSqliteFile(FIXTURE);
    const env = { env: { SQLRECALL_HOME: tempDir('sqlrecall-allowlite-home-') } };
    const base = ['sql', '--db', `sqlite:${path}`, '--allow-tables', 'Customers,orders', '--json'];
    const ok = await runCliInProcess(
      [...base, 'SELECT count(*) AS n FROM customers JOIN orders ON orders.customer_id = customers.id'],
      env,
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({ rows: [[2]] });
    const refused = await runCliInProcess([...base, 'SELECT password FROM customer_secrets'], env);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toMatch(
      /^error: Refused: main\.customer_secrets is not one of the allowed tables/,
    );
    expect(refused.stdout + refused.stderr).not.toMatch(/hunter2|swordfish/);
    // The view is allowed, the table under it is not: the text passes, the compiled program does not.
    const view = await runCliInProcess(
      [
        'sql',
        '--db',
        `sqlite:${path}`,
        '--allow-tables',
        'customers,customer_secrets',
        '--json',
        'SELECT * FROM customer_secrets',
      ],
      env,
    );
    expect(view.code).toBe(3);
    expect(view.stderr).toMatch(
      /^error: Refused: the statement reads a table that is not one of the allowed tables/,
    );
    expect(view.stdout + view.stderr).not.toMatch(/hunter2|swordfish/);
  }, 60_000);
});
