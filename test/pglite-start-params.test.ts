/**
 * The embedded instances start with the small buffer pool of `start-params.ts` (issue 15, fast
 * start): the user's `pglite:` database through its connector (on a data directory, whose
 * postgresql.conf says 128MB) and the embedded memory store, while keeping PGlite's own start
 * parameters (search_path=public is one of them) and still refusing writes on the user's database.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { PGLITE_SHARED_BUFFERS } from '../src/databases/pglite/start-params.js';
import { createSharedPgliteClient } from '../src/memory/store/shared-pglite.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-start-params-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

const SETTINGS =
  "SELECT current_setting('shared_buffers') AS shared_buffers, current_setting('search_path') AS search_path";

describe('embedded PGlite start parameters', () => {
  it('the connector opens an existing data directory with the small pool, read-only as before', async () => {
    const dir = join(tempDir(), 'shop');
    const seed = new PGlite(dir);
    await seed.exec('CREATE TABLE t (id int); INSERT INTO t VALUES (1), (2);');
    await seed.close();
    expect(readFileSync(join(dir, 'postgresql.conf'), 'utf8')).toMatch(/^shared_buffers = 128MB/m);

    const connector = createPgliteConnector({ dataDir: dir });
    try {
      const result = await connector.execute(SETTINGS, { maxRows: 10, timeoutMs: 5_000 });
      expect(result.rows).toEqual([[PGLITE_SHARED_BUFFERS, 'public']]);
      const count = await connector.execute('SELECT count(*) FROM t', { maxRows: 10, timeoutMs: 5_000 });
      expect(count.rows).toEqual([['2']]);
      await expect(
        connector.execute('INSERT INTO t VALUES (3)', { maxRows: 10, timeoutMs: 5_000 }),
      ).rejects.toMatchObject({ details: { sqlState: '25006' } });
    } finally {
      await connector.close();
    }
  });

  it('the embedded memory store (owner, on a data directory) uses the small pool', async () => {
    const client = createSharedPgliteClient(join(tempDir(), 'memory'), {});
    try {
      expect(await client.query(SETTINGS)).toEqual([
        { shared_buffers: PGLITE_SHARED_BUFFERS, search_path: 'public' },
      ]);
      expect(
        await client.query("SELECT default_version FROM pg_available_extensions WHERE name = 'vector'"),
      ).toHaveLength(1);
    } finally {
      await client.close();
    }
  });

  it('an in-memory store (no data directory) gets the options too', async () => {
    const client = createSharedPgliteClient(undefined, {});
    try {
      expect(await client.query(SETTINGS)).toEqual([
        { shared_buffers: PGLITE_SHARED_BUFFERS, search_path: 'public' },
      ]);
    } finally {
      await client.close();
    }
  });
});
