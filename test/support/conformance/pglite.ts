/**
 * The conformance engine `pglite`: embedded PostgreSQL in a temporary folder (the test cluster
 * template copied in, the fixture written with full rights, the instance closed), then opened the
 * way a user would, `openDatabase('pglite:DIR')`. The statements are PostgreSQL's (`postgres.ts`).
 */
import { PGlite } from '@electric-sql/pglite';
import type { DatabaseConnector } from '../../../src/core/ports.js';
import { openDatabase } from '../../../src/databases/open.js';
import { freshPgliteDataDir } from '../pglite-template.js';
import type { ConformanceEngine } from './engine.js';
import { POSTGRES_FINGERPRINT_SQL, POSTGRES_FIXTURE, POSTGRES_STATEMENTS } from './postgres.js';

export const pgliteEngine: ConformanceEngine = {
  name: 'pglite',
  dialect: 'postgres',
  // A dependency of the product: always there.
  unavailable: async () => undefined,
  async setUp() {
    const dir = freshPgliteDataDir('sqlrecall-conform-');
    const writer = new PGlite(dir);
    try {
      await writer.exec(POSTGRES_FIXTURE);
    } finally {
      await writer.close();
    }
    const url = `pglite:${dir}`;
    const connector: DatabaseConnector = await openDatabase(url);
    return {
      connector,
      url,
      sql: POSTGRES_STATEMENTS,
      uninterruptible:
        'PGlite runs each statement to its end on the calling thread: it cannot be cancelled, and statement_timeout is not enforced',
      // The folder is held by the connector (one process opens it), so the data is read through
      // the connector's own read-only path.
      fingerprint: async () =>
        String(
          (await connector.execute(POSTGRES_FINGERPRINT_SQL, { maxRows: 1, timeoutMs: 10_000 })).rows[0]?.[0],
        ),
      dispose: () => connector.close(),
    };
  },
};
