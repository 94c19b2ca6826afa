/**
 * The conformance engine `duckdb`: the fixture written into a new `.duckdb` file by an engine of
 * the test's own (then closed), opened the way a user would, `openDatabase('duckdb:FILE')`
 * (read-only, external access off, configuration locked). The fingerprint is the file's sha256:
 * any write, even one DuckDB rolled back, would change it. The optional package is imported only
 * when the engine is used, so the suite still loads without it (the engine is then unavailable).
 */
import { createHash } from 'node:crypto';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { openDatabase } from '../../../src/databases/open.js';
import { tempDir } from '../temp-dir.js';
import type { ConformanceDatabase, ConformanceEngine } from './engine.js';

/** The statements of the suite in DuckDB's dialect; `{DIR}` stands for the database's folder. */
const STATEMENTS = (dir: string): ConformanceDatabase['sql'] => ({
  values: {
    sql: `SELECT 9007199254740993::BIGINT AS big, 12345678901234567890.12::DECIMAL(38,2) AS exact,
      DATE '2024-02-29' AS day, TIMESTAMP '2024-02-29 13:14:15.5' AS at, true AS yes,
      '{"a": [1, 2], "n": 12345678901234567890}'::JSON AS doc, '\\xDE\\xAD\\xBE\\xEF'::BLOB AS bytes,
      NULL::INTEGER AS nothing`,
    expected: {
      big: '9007199254740993',
      exact: '12345678901234567890.12',
      day: '2024-02-29',
      at: '2024-02-29T13:14:15.5',
      yes: true,
      doc: '{"a": [1, 2], "n": 12345678901234567890}',
      bytes: '<binary 4 bytes>',
      nothing: null,
    },
  },
  rows: (n) => `SELECT i AS n, repeat('x', 100) AS pad FROM range(${Math.floor(n)}) t(i)`,
  slow: 'SELECT sum(i) FROM range(1000000000000) t(i)',
  reads: [
    'SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY o.id',
    'WITH spend AS (SELECT customer_id, sum(total) AS s FROM orders GROUP BY customer_id) SELECT * FROM spend ORDER BY s DESC',
    'SELECT id, rank() OVER (PARTITION BY customer_id ORDER BY total DESC) AS r FROM orders',
    'SELECT region, count(*) AS n FROM customers GROUP BY region ORDER BY n DESC',
    'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE total > 100)',
    'SELECT * FROM big_orders ORDER BY id',
    'SELECT name FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)',
    "SELECT name, date_trunc('month', created_on) AS m FROM customers WHERE name ILIKE 'a%'",
  ],
  hostile: [
    { sql: 'UPDATE orders SET total = 0 WHERE id = 10', why: 'a write' },
    { sql: 'DELETE FROM orders', why: 'a write' },
    { sql: "INSERT INTO customers VALUES (9, 'Eve', NULL, 'APAC', NULL)", why: 'a write' },
    { sql: 'DROP VIEW big_orders', why: 'DDL' },
    { sql: 'CREATE TABLE t AS SELECT * FROM orders', why: 'DDL' },
    { sql: 'ALTER TABLE orders ADD COLUMN x INTEGER', why: 'DDL' },
    { sql: `COPY orders TO '${join(dir, 'orders.csv')}'`, why: 'writes a file' },
    { sql: `EXPORT DATABASE '${join(dir, 'export')}'`, why: 'writes files' },
    { sql: `ATTACH '${join(dir, 'other.duckdb')}' AS other`, why: 'creates and attaches a database' },
    { sql: 'INSTALL httpfs', why: 'installs an extension' },
    { sql: 'LOAD httpfs', why: 'loads an extension' },
    { sql: 'SET enable_external_access = true', why: 'changes the lockdown' },
    { sql: 'PRAGMA enable_profiling', why: 'changes session state' },
    { sql: 'CHECKPOINT', why: 'writes the file' },
    { sql: "SELECT * FROM read_text('/etc/passwd')", why: 'reads a file outside the database' },
    { sql: "SELECT * FROM '/etc/passwd'", why: 'reads a file as a table' },
    { sql: 'SELECT 1; DELETE FROM orders', why: 'a second statement' },
  ],
});

/** Why the optional package cannot be used here, or undefined. */
async function unavailable(): Promise<string | undefined> {
  try {
    const { loadDuckdb } = await import('../../../src/databases/duckdb/load.js');
    await loadDuckdb();
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

export const duckdbEngine: ConformanceEngine = {
  name: 'duckdb',
  dialect: 'duckdb',
  unavailable,
  async setUp() {
    const { DUCKDB_SHOP_SQL, writeDuckdbFile } = await import('../duckdb-files.js');
    const dir = tempDir('sqlrecall-conform-duckdb-');
    const file = join(dir, 'shop.duckdb');
    await writeDuckdbFile(file, DUCKDB_SHOP_SQL);
    const url = `duckdb:${file}`;
    const connector = await openDatabase(url);
    return {
      connector,
      url,
      sql: STATEMENTS(dir),
      fingerprint: async () => createHash('sha256').update(readFileSync(file)).digest('hex'),
      async dispose() {
        await connector.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  },
};
