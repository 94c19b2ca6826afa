/**
 * DuckDB must never install or load an extension, not even while the file is being opened: a
 * `duckdb:` path that holds a SQLite database makes DuckDB reach for its `sqlite_scanner`
 * extension at open time, before any setting run after the open can stop it.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDuckdbConnector } from '../src/databases/duckdb/connector.js';
import { loadDuckdb } from '../src/databases/duckdb/load.js';
import { tempDir } from './support/temp-dir.js';

describe('duckdb: no extension at open', () => {
  it('opens every instance with extension autoinstall and autoload already off', async () => {
    const real = await loadDuckdb();
    const seen: Array<Record<string, string> | undefined> = [];
    const loader = async () =>
      ({
        ...real,
        DuckDBInstance: {
          create: (path: string, options?: Record<string, string>) => {
            seen.push(options);
            return real.DuckDBInstance.create(path, options);
          },
        },
      }) as unknown as typeof real;
    const dir = tempDir('sqlrecall-duckdb-ext-');
    writeFileSync(join(dir, 'sales.csv'), 'a,b\n1,2\n');
    const connector = await createDuckdbConnector({ path: dir, loader });
    try {
      await connector.ping();
    } finally {
      await connector.close();
    }
    expect(seen.length).toBeGreaterThan(0);
    for (const options of seen) {
      expect(options?.autoinstall_known_extensions).toBe('false');
      expect(options?.autoload_known_extensions).toBe('false');
    }
  });

  it('refuses a SQLite file given as duckdb:PATH without trying to download sqlite_scanner', async () => {
    const dir = tempDir('sqlrecall-duckdb-ext-sqlite-');
    const path = join(dir, 'shop.duck');
    // The 16-byte SQLite header is enough for DuckDB to take the file for a SQLite database.
    writeFileSync(path, Buffer.concat([Buffer.from('SQLite format 3\0'), Buffer.alloc(4080)]));
    const connector = await createDuckdbConnector({ path });
    let message = '';
    try {
      await connector.ping();
    } catch (error) {
      message = error instanceof Error ? error.message : String(error);
    } finally {
      await connector.close();
    }
    expect(message).not.toMatch(/download|extension/i);
    expect(message).toMatch(/sqlite:/);
  });
});
