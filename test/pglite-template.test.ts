/**
 * The PGlite template of the test run (test/support/pglite-template.ts): new test databases start
 * from a copy of one initdb'd cluster. This proves the copy is in use (the run would silently pay
 * initdb again otherwise) and that a copy is a working, empty, writable cluster on disk and in memory,
 * with pgvector available.
 */
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { describe, expect, it } from 'vitest';
import { freshPgliteDataDir, inMemoryPgliteOptions, TEMPLATE_ENV } from './support/pglite-template.js';

const enabled = process.env[TEMPLATE_ENV] !== 'off';

describe('PGlite template cluster', () => {
  it.runIf(enabled)('the global setup published a template that the helpers use', () => {
    const dir = freshPgliteDataDir('sqlrecall-template-check-');
    try {
      expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true);
      expect(inMemoryPgliteOptions().loadDataDir).toBeInstanceOf(Blob);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a copied data directory opens as an empty, writable cluster', async () => {
    const dir = freshPgliteDataDir('sqlrecall-template-check-');
    try {
      const db = new PGlite(dir);
      try {
        const user = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace s ON s.oid = c.relnamespace WHERE s.nspname = 'public'",
        );
        expect(user.rows[0]?.n).toBe(0);
        await db.exec('CREATE TABLE t (id int PRIMARY KEY); INSERT INTO t VALUES (1), (2);');
        expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n).toBe(2);
      } finally {
        await db.close();
      }
      expect(readdirSync(dir)).toContain('PG_VERSION');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('an in-memory copy loads pgvector and keeps no state between instances', async () => {
    const first = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
    await first.exec(
      "CREATE EXTENSION vector; CREATE TABLE v (e vector(2)); INSERT INTO v VALUES ('[1,0]');",
    );
    const distance = await first.query<{ d: number }>("SELECT e <=> '[0,1]' AS d FROM v");
    expect(distance.rows[0]?.d).toBeCloseTo(1);
    await first.close();
    const second = new PGlite(inMemoryPgliteOptions());
    const tables = await second.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_tables WHERE tablename = 'v'",
    );
    expect(tables.rows[0]?.n).toBe(0);
    await second.close();
  });
});
