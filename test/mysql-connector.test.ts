import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { parseMysqlUrl } from '../src/databases/mysql/url.js';
import { openDatabase, parseDatabaseUrl } from '../src/databases/open.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

const FIXTURE = `
CREATE TABLE customers (
  id INT PRIMARY KEY, email VARCHAR(100) NOT NULL UNIQUE, tier ENUM('free','pro','it''s') NOT NULL DEFAULT 'free'
) COMMENT 'who buys';
CREATE TABLE orders (
  id BIGINT PRIMARY KEY, customer_id INT NOT NULL COMMENT 'buyer',
  total DECIMAL(30,10), placed DATETIME(6), CONSTRAINT fk_cust FOREIGN KEY (customer_id) REFERENCES customers(id)
);
CREATE VIEW big_orders AS SELECT id, total FROM orders WHERE total > 100;
CREATE TABLE typed (
  big BIGINT, ubig BIGINT UNSIGNED, exact DECIMAL(40,10), small SMALLINT, f FLOAT, d DOUBLE, flag BOOLEAN,
  day DATE, at DATETIME(6), ts TIMESTAMP NULL, clock TIME, yr YEAR, doc JSON, raw BLOB, vb VARBINARY(10),
  bits BIT(10), label VARCHAR(20), note TEXT
);
INSERT INTO customers VALUES (1, 'a@x.test', 'pro'), (2, 'b@x.test', 'free');
INSERT INTO orders VALUES (1, 1, 150.5, '2024-02-29 13:14:15.123456'), (2, 2, 20, NULL), (3, 1, 99999999999999999999.0123456789, NULL);
INSERT INTO typed VALUES (
  9007199254740993, 18446744073709551615, 123456789012345678901234567890.0123456789, -32768, 1.5, 0.1, TRUE,
  '2024-02-29', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15', '23:59:59', 2024, '{"a": [1, "x", null], "n": 12345678901234567890}',
  REPEAT('ab', 1234), 0x0001FF, b'1000000001', 'héllo', NULL
);
CREATE TABLE many (n INT PRIMARY KEY);
CREATE TABLE digits (d INT);
INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
INSERT INTO many SELECT 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d FROM digits a, digits b, digits c, digits e WHERE 1 + a.d + 10 * b.d + 100 * c.d + 1000 * e.d <= 5000;
`;

const RUN = { maxRows: 100, timeoutMs: 5_000 };

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

describe('mysql:// and mariadb:// URLs', () => {
  it('selects the mysql engine for both schemes and masks the password', async () => {
    expect(parseDatabaseUrl('mysql://u:pw@h/db')).toEqual({ engine: 'mysql', url: 'mysql://u:pw@h/db' });
    expect(parseDatabaseUrl('MariaDB://h/db').engine).toBe('mysql');
    const target = parseMysqlUrl('mariadb://reader:S%40cret@db.local:3307/shop?ssl=true');
    expect(target).toMatchObject({
      host: 'db.local',
      port: 3307,
      user: 'reader',
      password: 'S@cret',
      database: 'shop',
      ssl: true,
    });
    expect(target.displayName).not.toContain('S%40cret');
    const db = await openDatabase('mysql://reader:hunter2@127.0.0.1:1/x');
    expect(db.dialect).toBe('mysql');
    expect(db.displayName).not.toContain('hunter2');
    const error = await failure(db.ping());
    expect(error.code).toBe('db_unreachable');
    expect(error.message).not.toContain('hunter2');
    await db.close();
  });
});

describe.skipIf(!MYSQL_AVAILABLE)('MariaDB/MySQL connector', () => {
  let temp: TempMysqlDatabase;
  let db: DatabaseConnector;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_conn');
    await temp.exec(FIXTURE);
    db = await openDatabase(temp.url);
  });
  afterAll(async () => {
    await db?.close();
    await temp?.drop();
  });

  it('reads every value type the way the PostgreSQL dialect does', async () => {
    const result = await db.execute('SELECT * FROM typed', RUN);
    const row = Object.fromEntries(result.columns.map((c, i) => [c.name, result.rows[0]![i]]));
    expect(row).toEqual({
      big: '9007199254740993',
      ubig: '18446744073709551615',
      exact: '123456789012345678901234567890.0123456789',
      small: -32768,
      f: 1.5,
      d: 0.1,
      flag: 1,
      day: '2024-02-29',
      at: '2024-02-29T13:14:15.123456',
      ts: '2024-02-29T13:14:15+00:00',
      clock: '23:59:59',
      yr: 2024,
      doc: expect.stringMatching(/^\{"a": ?\[1, ?"x", ?null\], ?"n": ?12345678901234567890\}$/),
      raw: '<binary 2468 bytes>',
      vb: '<binary 3 bytes>',
      bits: 513,
      label: 'héllo',
      note: null,
    });
    const types = Object.fromEntries(result.columns.map((c) => [c.name, c.type]));
    expect(types).toMatchObject({
      big: 'bigint',
      ubig: 'bigint unsigned',
      exact: 'decimal',
      day: 'date',
      raw: 'blob',
      label: 'varchar',
    });
    // Aggregates: COUNT is BIGINT, SUM of DECIMAL stays exact.
    const agg = await db.execute('SELECT COUNT(*) AS n, SUM(total) AS s FROM orders', RUN);
    expect(agg.rows).toEqual([['3', '100000000000000000169.5123456789']]);
  });

  it('caps rows while streaming and flags truncation, then keeps working', async () => {
    const capped = await db.execute('SELECT n FROM many ORDER BY n', { maxRows: 3, timeoutMs: 5_000 });
    expect(capped.rows).toEqual([[1], [2], [3]]);
    expect(capped).toMatchObject({ rowCount: 3, truncated: true, truncatedReason: 'max_rows' });
    const whole = await db.execute('SELECT n FROM many WHERE n <= 3', { maxRows: 3, timeoutMs: 5_000 });
    expect(whole).toMatchObject({ rowCount: 3, truncated: false });
    for (let i = 0; i < 5; i += 1) await db.execute('SELECT n FROM many', { maxRows: 1, timeoutMs: 5_000 });
    expect((await db.execute('SELECT 1 AS one', RUN)).rows).toEqual([[1]]);
  });

  it('stops at the byte budget, and refuses a first row larger than it', async () => {
    const budget = await db.execute('SELECT n FROM many ORDER BY n', {
      maxRows: 5000,
      timeoutMs: 5_000,
      maxBytes: 20,
    });
    expect(budget.truncatedReason).toBe('max_bytes');
    expect(budget.rowCount).toBeLessThan(20);
    const error = await failure(db.execute("SELECT REPEAT('x', 1000) AS big", { ...RUN, maxBytes: 100 }));
    expect(error.code).toBe('result_too_large');
  });

  it('runs read-only even when a write gets past the guard, and the data is unchanged', async () => {
    const error = await failure(db.execute("INSERT INTO customers VALUES (9, 'z@x.test', 'free')", RUN));
    expect(error.code).toBe('db_query');
    expect(error.details.sqlState).toBe('25006');
    const error2 = await failure(db.execute('DELETE FROM orders', RUN));
    expect(error2.code).toBe('db_query');
    expect((await temp.query('SELECT COUNT(*) AS n FROM customers'))[0]!.n).toBe(2);
    expect((await temp.query('SELECT COUNT(*) AS n FROM orders'))[0]!.n).toBe(3);
  });

  it('maps errors: unknown table with its SQLSTATE, the time limit as db_timeout', async () => {
    const unknown = await failure(db.execute('SELECT * FROM nope', RUN));
    expect(unknown.code).toBe('db_query');
    expect(unknown.details.sqlState).toBe('42S02');
    const started = Date.now();
    const slow = await failure(db.execute('SELECT SLEEP(5)', { maxRows: 1, timeoutMs: 300 }));
    expect(slow.code).toBe('db_timeout');
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('cancels a running statement with KILL QUERY when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const error = await failure(
      db.execute('SELECT COUNT(*) FROM many a, many b, many c', {
        maxRows: 1,
        timeoutMs: 20_000,
        signal: controller.signal,
      }),
    );
    expect(error.code).toBe('db_query');
    expect(error.details).toMatchObject({ cancelled: true });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect((await db.execute('SELECT 2 AS two', RUN)).rows).toEqual([[2]]);
  });

  it('introspects tables, views, columns, keys, comments and enum values in one pass', async () => {
    const schema = await db.introspect();
    expect(schema).toMatchObject({ dialect: 'mysql', database: temp.name, schemas: [temp.name] });
    const byName = new Map(schema.tables.map((t) => [t.name, t]));
    expect([...byName.keys()]).toEqual(['big_orders', 'customers', 'digits', 'many', 'orders', 'typed']);
    const customers = byName.get('customers')!;
    expect(customers).toMatchObject({ kind: 'table', comment: 'who buys', primaryKey: ['id'] });
    expect(customers.columns.find((c) => c.name === 'tier')).toMatchObject({
      type: 'enum',
      enumValues: ['free', 'pro', "it's"],
      nullable: false,
    });
    expect(customers.uniqueIndexes.map((i) => i.columns)).toEqual(
      expect.arrayContaining([['id'], ['email']]),
    );
    const orders = byName.get('orders')!;
    expect(orders.foreignKeys).toEqual([
      {
        name: 'fk_cust',
        columns: ['customer_id'],
        references: { schema: temp.name, table: 'customers', columns: ['id'] },
      },
    ]);
    expect(orders.columns.find((c) => c.name === 'customer_id')?.comment).toBe('buyer');
    expect(orders.columns.find((c) => c.name === 'total')?.type).toBe('decimal(30,10)');
    expect(byName.get('big_orders')).toMatchObject({ kind: 'view', comment: null, estimatedRows: null });
  });
});
