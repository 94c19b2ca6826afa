/**
 * SQLite in the conformance suite: the fixture of `engine.ts` written in SQLite into a temporary
 * file, opened through `openDatabase('sqlite:…')`. Unavailable when better-sqlite3 (an optional
 * dependency) is not installed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { openDatabase } from '../../../src/databases/open.js';
import { tempDir } from '../temp-dir.js';
import type { ConformanceDatabase, ConformanceEngine } from './engine.js';

/** The fixture of `engine.ts` in SQLite (no enums: `region` is text with a CHECK; no comments). */
export const SQLITE_FIXTURE = `
CREATE TABLE customers (
  id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT,
  region TEXT CHECK (region IN ('EMEA', 'AMER', 'APAC')), created_on DATE
);
CREATE TABLE orders (
  id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), total DECIMAL(12,2), placed_at TIMESTAMP
);
INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'EMEA', '2024-01-05'),
  (2, 'Grace', NULL, 'AMER', '2024-02-10'), (3, 'Linus', 'linus@example.com', 'EMEA', '2024-03-15');
INSERT INTO orders VALUES (10, 1, '120.50', '2024-04-01 10:00:00'), (11, 1, '99999999.99', '2024-04-02 11:30:00'),
  (12, 2, '0.10', '2024-04-03 12:00:00'), (13, 3, NULL, '2024-04-04 09:15:00');
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 100;
`;

/** True when better-sqlite3 is installed here. */
export function betterSqliteInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('better-sqlite3');
    return true;
  } catch {
    return false;
  }
}

/**
 * Writes a new SQLite file holding `sql` (default: the fixture) with better-sqlite3 directly (the
 * product never writes); returns its path.
 */
export async function makeSqliteFile(
  sql = SQLITE_FIXTURE,
  dir = tempDir('sqlrecall-sqlite-'),
): Promise<string> {
  const { default: Database } = await import('better-sqlite3');
  const path = join(dir, 'shop.db');
  const db = new Database(path);
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
  return path;
}

/** The SHA-256 of a file's bytes, hex. */
export function fileSha256(path: string): string {
  return createHash('sha256').update(readFileSync(path)).digest('hex');
}

/** Statements that must never change the file, each with its danger. */
export const SQLITE_HOSTILE: { sql: string; why: string }[] = [
  { sql: 'DELETE FROM orders', why: 'a write' },
  { sql: "UPDATE customers SET name = 'x'", why: 'a write' },
  { sql: "INSERT INTO customers (id, name) VALUES (9, 'Eve')", why: 'a write' },
  { sql: "REPLACE INTO customers (id, name) VALUES (1, 'Eve')", why: 'a write' },
  { sql: 'DROP TABLE orders', why: 'a schema change' },
  { sql: 'CREATE TABLE t (x)', why: 'a schema change' },
  { sql: 'ALTER TABLE orders ADD COLUMN y', why: 'a schema change' },
  { sql: "ATTACH DATABASE '/tmp/sqlrecall-attached.db' AS other", why: 'opens (or creates) another file' },
  { sql: 'PRAGMA query_only = OFF', why: 'turns the read-only session off' },
  { sql: 'PRAGMA journal_mode = DELETE', why: 'changes the file' },
  { sql: "VACUUM INTO '/tmp/sqlrecall-vacuum.db'", why: 'writes a copy of the database' },
  { sql: 'VACUUM', why: 'rewrites the file' },
  { sql: 'REINDEX', why: 'rebuilds indexes' },
  { sql: 'ANALYZE', why: 'writes statistics tables' },
  { sql: "SELECT load_extension('/tmp/sqlrecall-ext')", why: 'loads native code' },
  { sql: "SELECT writefile('/tmp/sqlrecall-written', 'x')", why: 'writes a file' },
  { sql: "SELECT readfile('/etc/passwd')", why: 'reads a file' },
  { sql: 'SELECT * FROM sqlite_master', why: "reads SQLite's own catalog" },
  { sql: "SELECT * FROM pragma_table_info('orders')", why: "reads SQLite's own settings" },
  { sql: 'BEGIN IMMEDIATE', why: 'takes the write lock' },
  { sql: 'SELECT 1; DELETE FROM orders', why: 'a second statement' },
  { sql: 'WITH x AS (SELECT 1) DELETE FROM orders', why: 'a write behind a CTE' },
  { sql: "INSERT INTO orders SELECT 99, 1, '1', '2024-01-01' RETURNING id", why: 'a write returning rows' },
];

/** Reads of each kind the guard accepts and SQLite runs. */
export const SQLITE_READS: string[] = [
  'SELECT c.name, o.total FROM customers AS c JOIN orders AS o ON o.customer_id = c.id ORDER BY o.id',
  "WITH emea AS (SELECT * FROM customers WHERE region = 'EMEA') SELECT name FROM emea ORDER BY name",
  'SELECT id, total, rank() OVER (ORDER BY total DESC NULLS LAST) AS r FROM orders',
  'SELECT customer_id, count(*) AS n, sum(total) AS s FROM orders GROUP BY customer_id ORDER BY customer_id',
  'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE total > 100)',
  'SELECT * FROM big_orders ORDER BY id',
];

/** The SQLite engine of the conformance suite. */
export const sqliteEngine: ConformanceEngine = {
  name: 'sqlite',
  dialect: 'sqlite',
  async unavailable() {
    return betterSqliteInstalled() ? undefined : 'better-sqlite3 (an optional dependency) is not installed';
  },
  async setUp(): Promise<ConformanceDatabase> {
    const dir = tempDir('sqlrecall-conformance-sqlite-');
    const path = await makeSqliteFile(SQLITE_FIXTURE, dir);
    const url = `sqlite:${path}`;
    const connector = await openDatabase(url);
    return {
      connector,
      url,
      sql: {
        values: {
          sql: `SELECT 9007199254740993 AS big, '12345678901234567890.12' AS exact_decimal, date('2024-01-05') AS day,
                 datetime('2024-04-01 10:00:00') AS ts, json('{"a":1}') AS doc, x'DEADBEEF' AS bin, NULL AS no_value,
                 1.5 AS real_number`,
          expected: {
            big: '9007199254740993',
            exact_decimal: '12345678901234567890.12',
            day: '2024-01-05',
            ts: '2024-04-01 10:00:00',
            doc: '{"a":1}',
            bin: '<binary 4 bytes>',
            no_value: null,
            real_number: 1.5,
          },
        },
        rows: (n) =>
          `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ${Math.max(1, n)}) SELECT i AS n, replace(printf('%100s', ''), ' ', 'x') AS pad FROM s WHERE i <= ${n}`,
        slow: 'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s) SELECT count(*) AS n FROM s',
        reads: SQLITE_READS,
        hostile: SQLITE_HOSTILE,
      },
      fingerprint: async () => fileSha256(path),
      async dispose() {
        await connector.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
