/**
 * The table allowlist (`--allow-tables`) on MySQL/MariaDB, through the dialect's guard: every
 * table a statement reads, however reached (a join, a subquery, a derived table, a CTE, a union,
 * `db.table`, backtick-quoted names), must match a pattern; a CTE name is not a table where it is
 * in scope, and a table outside that scope is one. The guard decides without a server; one suite
 * runs `sql --allow-tables` on MariaDB, where unqualified names are the URL's database.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Schema } from '../src/core/schema.js';
import { guardForDialect } from '../src/sql/dialect-guard.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

/** The catalog in allowlist mode: only its database (the connection's default) matters here. */
const SHOP: Schema = {
  dialect: 'mysql',
  database: 'shop',
  serverVersion: '10.11',
  schemas: ['shop'],
  tables: [],
};

/** The verdict with the catalog `schema` (default SHOP; null: no catalog). */
async function verdict(sql: string, allowTables: string[], schema: Schema | null = SHOP) {
  return guardForDialect('mysql', sql, { allowTables, ...(schema ? { schema } : {}) });
}

async function accepted(sql: string, allowTables: string[], schema?: Schema | null) {
  const result = await verdict(sql, allowTables, schema);
  expect(result, sql).toMatchObject({ ok: true });
}

async function refused(sql: string, allowTables: string[], schema?: Schema | null) {
  const result = await verdict(sql, allowTables, schema);
  expect(result, sql).toMatchObject({ ok: false, rule: 'allowlist' });
  return result.ok ? '' : result.reason;
}

describe('the MySQL table allowlist', () => {
  it('accepts reads of allowed tables: bare names, db.table, db.*, backticks', async () => {
    await accepted('SELECT * FROM orders', ['orders']);
    await accepted('SELECT * FROM shop.orders', ['orders']);
    await accepted('SELECT * FROM orders', ['shop.orders']);
    await accepted('SELECT * FROM `shop`.`orders` o JOIN customers c ON c.id = o.customer_id', ['shop.*']);
    await accepted('SELECT * FROM `we.ird`.`Or ders`', ['`we.ird`.`Or ders`']);
    await accepted('SELECT * FROM orders o WHERE EXISTS (SELECT 1 FROM customers c WHERE c.id = o.id)', [
      'orders',
      'customers',
    ]);
    await accepted('SELECT 1', ['orders']);
    // Without an allowlist nothing changes.
    expect(await guardForDialect('mysql', 'SELECT * FROM secret')).toMatchObject({ ok: true });
  });

  it('refuses a table outside the list, naming it and the list', async () => {
    const reason = await refused('SELECT * FROM secret', ['orders', 'customers']);
    expect(reason).toContain('shop.secret');
    expect(reason).toContain('orders, customers');
  });

  it('finds the table however it is reached: join, subquery, derived table, union, EXISTS, scalar subquery', async () => {
    const allow = ['orders', 'customers'];
    await refused('SELECT * FROM orders o JOIN secret s ON s.id = o.id', allow);
    await refused('SELECT * FROM orders WHERE id IN (SELECT id FROM secret)', allow);
    await refused('SELECT * FROM (SELECT * FROM secret) d', allow);
    await refused('SELECT * FROM (SELECT * FROM (SELECT id FROM secret) a) b', allow);
    await refused('SELECT id FROM orders UNION SELECT id FROM secret', allow);
    await refused('SELECT * FROM orders o WHERE EXISTS (SELECT 1 FROM secret s WHERE s.id = o.id)', allow);
    await refused('SELECT (SELECT MAX(id) FROM secret) AS m FROM orders', allow);
    await refused('SELECT * FROM orders LEFT JOIN (customers, secret) ON customers.id = orders.id', allow);
  });

  it('tells a database apart: db.table outside the list, another database’s table of an allowed name', async () => {
    await refused('SELECT * FROM other.orders', ['shop.orders']);
    await refused('SELECT * FROM `other`.`orders`', ['shop.*']);
    await refused('SELECT * FROM orders JOIN other.customers c ON c.id = orders.id', ['shop.*']);
    // Without the catalog an unqualified name has no database: only bare patterns match it.
    await refused('SELECT * FROM orders', ['shop.orders'], null);
    expect(await guardForDialect('mysql', 'SELECT * FROM orders', { allowTables: ['orders'] })).toMatchObject(
      {
        ok: true,
      },
    );
  });

  it('compares names exactly: backtick-quoted names, case, a dot inside backticks', async () => {
    await refused('SELECT * FROM `secret`', ['orders']);
    await refused('SELECT * FROM ORDERS', ['orders']);
    // A backtick inside a name is refused before the allowlist is asked.
    expect(await verdict('SELECT * FROM `or``ders`', ['orders', 'or`ders'])).toMatchObject({ ok: false });
    await refused('SELECT * FROM `orders.x`', ['orders']);
    await accepted('SELECT * FROM `Orders`', ['Orders']);
  });

  it('treats a CTE name as the CTE only where it is in scope', async () => {
    const allow = ['orders'];
    await accepted('WITH t AS (SELECT * FROM orders) SELECT * FROM t', allow);
    await accepted('WITH a AS (SELECT * FROM orders), b AS (SELECT * FROM a) SELECT * FROM b', allow);
    await accepted(
      'WITH RECURSIVE n (k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < 3) SELECT * FROM n JOIN orders ON orders.id = n.k',
      allow,
    );
    // A CTE that shadows a table's name reads what its body reads.
    await accepted('WITH secret AS (SELECT * FROM orders) SELECT * FROM secret', allow);
    await refused('WITH t AS (SELECT * FROM secret) SELECT * FROM t', allow);
    // A later CTE is not in scope in an earlier one's body (without RECURSIVE): there it is a table.
    await refused('WITH a AS (SELECT * FROM secret), secret AS (SELECT 1) SELECT * FROM a', allow);
    // A CTE of a subquery ends with it: the outer `secret` is the table.
    await refused('SELECT * FROM (WITH secret AS (SELECT 1 AS x) SELECT * FROM secret) d, secret', allow);
    // A qualified name is never a CTE.
    await refused('WITH secret AS (SELECT * FROM orders) SELECT * FROM shop.secret', allow);
  });

  it('still refuses what the guard refuses without an allowlist (writes, system databases)', async () => {
    expect(await verdict('DELETE FROM orders', ['orders'])).toMatchObject({
      ok: false,
      rule: 'statement-kind',
    });
    expect(await verdict('SELECT * FROM mysql.user', ['*'])).toMatchObject({ ok: false });
  });
});

describe.skipIf(!MYSQL_AVAILABLE)('sql --allow-tables on MariaDB', () => {
  let temp: TempMysqlDatabase;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_allow');
    await temp.exec(`CREATE TABLE orders (id INT PRIMARY KEY, total DECIMAL(10,2));
      CREATE TABLE secret (id INT PRIMARY KEY, password VARCHAR(40));
      INSERT INTO orders VALUES (1, 10.50), (2, 20.00);
      INSERT INTO secret VALUES (1, 'hunter2');`);
  });
  afterAll(async () => {
    await temp?.drop();
  });

  const sql = (statement: string, allow: string) =>
    runCliInProcess(['sql', statement, '--db', temp.url, '--allow-tables', allow, '--json']);

  it('runs a read of an allowed table, unqualified or qualified with the URL’s database', async () => {
    const plain = await sql('SELECT COUNT(*) AS n FROM orders', `${temp.name}.orders`);
    expect(plain.code, plain.stderr).toBe(0);
    expect(JSON.parse(plain.stdout).rows).toEqual([['2']]);
    const qualified = await sql(`SELECT SUM(total) AS s FROM \`${temp.name}\`.orders`, 'orders');
    expect(qualified.code, qualified.stderr).toBe(0);
    expect(JSON.parse(qualified.stdout).rows).toEqual([['30.50']]);
  });

  it('refuses a table outside the list before anything runs (exit 3), the data never shown', async () => {
    const run = await sql('SELECT o.id FROM orders o WHERE o.id IN (SELECT id FROM secret)', 'orders');
    expect(run.code).toBe(3);
    expect(`${run.stdout}${run.stderr}`).toContain(`${temp.name}.secret is not one of the allowed tables`);
    expect(`${run.stdout}${run.stderr}`).not.toContain('hunter2');
  });
});
