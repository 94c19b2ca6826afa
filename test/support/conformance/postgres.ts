/**
 * The conformance engine `postgres`: a PostgreSQL server (TEST_DATABASE_URL), a temporary database
 * per run holding the fixture of `engine.ts`, questioned through `openDatabase(postgres://…)`.
 * The fixture and the statements are PostgreSQL; `pglite.ts` reuses them on the embedded engine.
 */
import pg from 'pg';
import type { DatabaseConnector } from '../../../src/core/ports.js';
import { openDatabase } from '../../../src/databases/open.js';
import { createTempDatabase, TEST_DATABASE_URL } from '../server-db.js';
import type { ConformanceDatabase, ConformanceEngine } from './engine.js';

/** The fixture of `engine.ts` in PostgreSQL (an enum type for `region`, a comment on `customers`). */
export const POSTGRES_FIXTURE = `
CREATE TYPE region AS ENUM ('EMEA', 'AMER', 'APAC');
CREATE TABLE customers (
  id integer PRIMARY KEY, name text NOT NULL, email text, region region, created_on date
);
COMMENT ON TABLE customers IS 'People who bought something';
INSERT INTO customers VALUES
  (1, 'Ada', 'ada@example.com', 'EMEA', '2024-01-05'),
  (2, 'Grace', NULL, 'AMER', '2024-02-10'),
  (3, 'Linus', 'linus@example.com', 'EMEA', '2024-03-15');
CREATE TABLE orders (
  id integer PRIMARY KEY, customer_id integer REFERENCES customers(id), total numeric(12,2), placed_at timestamp
);
INSERT INTO orders VALUES
  (10, 1, '120.50', '2024-04-01 10:00:00'),
  (11, 1, '99999999.99', '2024-04-02 11:30:00'),
  (12, 2, '0.10', '2024-04-03 12:00:00'),
  (13, 3, NULL, '2024-04-04 09:15:00');
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 100;
`;

/**
 * What the data looks like, as one text: every fixture row, the relations of `public` and their
 * columns, and the roles. Any write a hostile statement managed (a row, a table, a role) changes it.
 */
export const POSTGRES_FINGERPRINT_SQL = `SELECT md5(concat_ws('|',
  (SELECT string_agg(c::text, ',' ORDER BY c.id) FROM customers c),
  (SELECT string_agg(o::text, ',' ORDER BY o.id) FROM orders o),
  (SELECT string_agg(table_name || '.' || column_name || ':' || data_type, ',' ORDER BY table_name, ordinal_position)
     FROM information_schema.columns WHERE table_schema = 'public'),
  (SELECT string_agg(relname || ':' || relkind::text, ',' ORDER BY relname) FROM pg_class
     WHERE relnamespace = 'public'::regnamespace),
  (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles),
  (SELECT string_agg(proname, ',' ORDER BY proname) FROM pg_proc WHERE pronamespace = 'public'::regnamespace)
)) AS fingerprint`;

/** The statements of `engine.ts` in PostgreSQL (server and PGlite alike). */
export const POSTGRES_STATEMENTS: ConformanceDatabase['sql'] = {
  values: {
    sql: `SELECT 9007199254740993::bigint AS big, 12345678901234567890.123456789::numeric AS exact,
      DATE '2024-02-29' AS day, TIMESTAMP '2024-02-29 13:14:15.5' AS at, true AS flag,
      '{"a": [1, "x", null], "n": 12345678901234567890}'::jsonb AS doc, '\\x0001ff'::bytea AS raw,
      NULL::text AS nothing`,
    expected: {
      big: '9007199254740993',
      exact: '12345678901234567890.123456789',
      day: '2024-02-29',
      at: '2024-02-29T13:14:15.5',
      flag: true,
      doc: '{"a": [1, "x", null], "n": 12345678901234567890}',
      raw: '<binary 3 bytes>',
      nothing: null,
    },
  },
  rows: (n) => `SELECT g AS n, repeat('x', 100) AS pad FROM generate_series(1, ${Math.floor(n)}) AS g`,
  slow: 'SELECT pg_sleep(8)',
  reads: [
    'SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id',
    'WITH t AS (SELECT customer_id, sum(total) AS s FROM orders GROUP BY customer_id) SELECT * FROM t ORDER BY customer_id',
    'SELECT id, total, rank() OVER (PARTITION BY customer_id ORDER BY total DESC) AS r FROM orders',
    'SELECT region, count(*) AS n FROM customers GROUP BY region ORDER BY region',
    'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE total > 100)',
    'SELECT * FROM big_orders ORDER BY id',
    'SELECT c.name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.total IS NULL)',
  ],
  hostile: [
    { sql: 'DELETE FROM orders', why: 'a write' },
    { sql: "UPDATE customers SET name = 'x'", why: 'a write' },
    { sql: 'TRUNCATE orders', why: 'a write' },
    { sql: 'DROP TABLE orders CASCADE', why: 'DDL' },
    { sql: 'CREATE TABLE stolen AS SELECT * FROM customers', why: 'DDL' },
    { sql: 'SELECT * INTO stolen FROM customers', why: 'SELECT INTO creates a table' },
    { sql: 'SELECT 1; DELETE FROM orders', why: 'a stacked second statement' },
    { sql: 'COMMIT; DELETE FROM orders', why: 'ends the read-only transaction first' },
    {
      sql: 'WITH gone AS (DELETE FROM orders RETURNING *) SELECT count(*) FROM gone',
      why: 'a write inside a CTE',
    },
    { sql: "SELECT set_config('default_transaction_read_only', 'off', false)", why: 'a session setting' },
    { sql: 'SET TRANSACTION READ WRITE', why: 'lifts read-only' },
    { sql: 'SELECT * FROM orders FOR UPDATE', why: 'row locks' },
    { sql: 'DO $$ BEGIN DELETE FROM orders; END $$', why: 'an anonymous code block' },
    { sql: 'CREATE ROLE intruder SUPERUSER', why: 'a role' },
    { sql: "SELECT lo_import('/etc/hostname')", why: 'a server file into a large object' },
    { sql: '/* just a read */ DELETE FROM orders -- really', why: 'a write behind comments' },
    { sql: 'EXPLAIN ANALYZE DELETE FROM orders', why: 'EXPLAIN ANALYZE runs the write' },
    { sql: "COPY (SELECT * FROM customers) TO '/tmp/sqlrecall-stolen.csv'", why: 'writes a server file' },
    { sql: 'PREPARE gone AS DELETE FROM orders', why: 'a prepared write' },
    { sql: 'CREATE TEMP TABLE scratch (x int)', why: 'DDL, even temporary' },
    { sql: 'SELECT pg_advisory_lock(1)', why: 'a server-wide lock' },
    { sql: "SELECT pg_read_file('/etc/hostname')", why: 'reads a server file' },
  ],
};

/** Runs `sql` with full rights on `url` (setting up the fixture, reading the fingerprint). */
async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export const postgresEngine: ConformanceEngine = {
  name: 'postgres',
  dialect: 'postgres',
  async unavailable() {
    if (!TEST_DATABASE_URL) return 'TEST_DATABASE_URL is not set';
    try {
      await withAdmin(TEST_DATABASE_URL, (client) => client.query('SELECT 1'));
      return undefined;
    } catch (error) {
      return `the server at TEST_DATABASE_URL does not answer (${(error as Error).message})`;
    }
  },
  async setUp() {
    const temp = await createTempDatabase('sqlrecall_conform');
    let connector: DatabaseConnector | undefined;
    try {
      await withAdmin(temp.url, (client) => client.query(POSTGRES_FIXTURE));
      connector = await openDatabase(temp.url);
    } catch (error) {
      await temp.drop();
      throw error;
    }
    return {
      connector,
      url: temp.url,
      sql: POSTGRES_STATEMENTS,
      fingerprint: () =>
        withAdmin(temp.url, async (client) =>
          String((await client.query(POSTGRES_FINGERPRINT_SQL)).rows[0]?.fingerprint),
        ),
      async dispose() {
        await connector?.close();
        await temp.drop();
      },
    };
  },
};
