/**
 * DuckDB test data: a `.duckdb` file written by an engine of the test's own (then closed, so the
 * connector under test opens it as a user's file), and a fingerprint of every file under a folder
 * (names and sha256), to show that nothing was written, removed or added.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

/** Writes a new DuckDB database at `path` by running `sql` (several statements allowed), then closes it. */
export async function writeDuckdbFile(path: string, sql: string): Promise<void> {
  const instance = await DuckDBInstance.create(path);
  try {
    const connection = await instance.connect();
    try {
      await connection.run(sql);
    } finally {
      connection.closeSync();
    }
  } finally {
    instance.closeSync();
  }
}

/** Every file below `dir` (recursively, links not followed) with its sha256, sorted by path. */
export function folderFingerprint(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (folder: string, prefix: string) => {
    for (const name of readdirSync(folder).sort()) {
      const path = join(folder, name);
      const stat = statSync(path, { throwIfNoEntry: false });
      if (stat?.isDirectory()) walk(path, `${prefix}${name}/`);
      else
        out[`${prefix}${name}`] = stat
          ? createHash('sha256').update(readFileSync(path)).digest('hex')
          : 'link';
    }
  };
  walk(dir, '');
  return out;
}

/** The fixture of the conformance suite (test/support/conformance/engine.ts) in DuckDB's dialect. */
export const DUCKDB_SHOP_SQL = `
CREATE TYPE region AS ENUM ('EMEA', 'AMER', 'APAC');
CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, email TEXT, region region, created_on DATE);
COMMENT ON TABLE customers IS 'People who bought something';
COMMENT ON COLUMN customers.email IS 'Where receipts go';
CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id),
  total DECIMAL(12,2), placed_at TIMESTAMP);
INSERT INTO customers VALUES (1, 'Ada', 'ada@example.com', 'EMEA', '2024-01-05'),
  (2, 'Grace', NULL, 'AMER', '2024-02-10'), (3, 'Linus', 'linus@example.com', 'EMEA', '2024-03-15');
INSERT INTO orders VALUES (10, 1, 120.50, '2024-04-01 10:00:00'), (11, 1, 99999999.99, '2024-04-02 11:30:00'),
  (12, 2, 0.10, '2024-04-03 12:00:00'), (13, 3, NULL, '2024-04-04 09:15:00');
CREATE VIEW big_orders AS SELECT id, customer_id, total FROM orders WHERE total > 100;
`;
