/**
 * Small databases for CLI tests, on PGlite (always) and on the server (when TEST_DATABASE_URL is set),
 * with a snapshot function that proves a database is unchanged.
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { freshPgliteDataDir } from './pglite-template.js';
import { createTempDatabase, type TempDatabase } from './server-db.js';

/** A tiny shop: customers and orders with a foreign key, a sequence, and a view. */
export const SHOP_SQL = `
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, country text NOT NULL);
CREATE TABLE orders (id serial PRIMARY KEY, customer_id int REFERENCES customers(id), status text, total_amount numeric(12,2));
CREATE TABLE t (id int PRIMARY KEY, v text);
INSERT INTO customers (name, country) VALUES ('Asha', 'India'), ('Bob', 'United States'), ('Chen', 'China'), ('Dev', 'India');
INSERT INTO orders (customer_id, status, total_amount) VALUES (1, 'delivered', 12000.50), (1, 'pending', 50), (2, 'delivered', 300), (4, 'delivered', 15000);
INSERT INTO t VALUES (1, 'one'), (2, 'two');
CREATE VIEW india_customers AS SELECT * FROM customers WHERE country = 'India';
`;

/** A way to run read-only snapshot queries against a fixture. */
export interface Fixture {
  url: string;
  /** Relations, row counts, sequence values and a content hash of every table. */
  snapshot(): Promise<string>;
  close(): Promise<void>;
}

const SNAPSHOT_SQL = `
SELECT c.relname || ':' || c.relkind::text AS rel FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast') ORDER BY 1`;
const CONTENT_SQL = `
SELECT (SELECT count(*) FROM customers) || '/' || (SELECT md5(string_agg(c::text, ',' ORDER BY id)) FROM customers c) || '|' ||
       (SELECT count(*) FROM orders) || '/' || (SELECT md5(string_agg(o::text, ',' ORDER BY id)) FROM orders o) || '|' ||
       (SELECT count(*) FROM t) || '/' || (SELECT md5(string_agg(x::text, ',' ORDER BY id)) FROM t x) || '|' ||
       (SELECT last_value FROM customers_id_seq) || '|' || (SELECT count(*) FROM pg_largeobject_metadata) AS content`;

/** Runs the snapshot queries through any driver (e.g. a connector that already holds the database). */
export async function snapshotWith(
  query: (sql: string) => Promise<{ rows: Record<string, string>[] }>,
): Promise<string> {
  const rels = await query(SNAPSHOT_SQL);
  const content = await query(CONTENT_SQL);
  return `${rels.rows.map((r) => r.rel).join(',')}\n${content.rows[0]?.content}`;
}

/** Creates the shop fixture in a fresh PGlite data directory (closed again; the CLI opens it). */
export async function pgliteShop(): Promise<Fixture> {
  const dir = freshPgliteDataDir('sqlrecall-fixture-');
  const db = new PGlite(dir);
  await db.exec(SHOP_SQL);
  await db.close();
  return {
    url: `pglite:${dir}`,
    async snapshot() {
      const probe = new PGlite(dir);
      try {
        return await snapshotWith((sql) => probe.query<Record<string, string>>(sql));
      } finally {
        await probe.close();
      }
    },
    async close() {},
  };
}

/** Creates the shop fixture in a temp server database. */
export async function serverShop(): Promise<Fixture & { db: TempDatabase }> {
  const db = await createTempDatabase('sqlrecall_shop');
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query(SHOP_SQL);
  await client.end();
  return {
    db,
    url: db.url,
    async snapshot() {
      const c = new pg.Client({ connectionString: db.url });
      await c.connect();
      try {
        return await snapshotWith((sql) => c.query<Record<string, string>>(sql));
      } finally {
        await c.end();
      }
    },
    close: () => db.drop(),
  };
}
