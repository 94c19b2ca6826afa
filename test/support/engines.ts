/**
 * Runs a suite on every available engine: PGlite always, the server PostgreSQL when
 * TEST_DATABASE_URL is set (each suite in its own temporary database).
 */
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import type { DatabaseConnector } from '../../src/core/ports.js';
import { createPgliteConnector } from '../../src/databases/pglite/connector.js';
import { createPostgresConnector } from '../../src/databases/postgres/connector.js';
import { inMemoryPgliteOptions } from './pglite-template.js';
import { createTempDatabase, TEST_DATABASE_URL } from './server-db.js';

/** Engine names for `describe.each`. */
export type EngineName = 'pglite' | 'server';

/** The engines this run covers. */
export const ENGINES: EngineName[] = TEST_DATABASE_URL ? ['pglite', 'server'] : ['pglite'];

/** A fresh, empty database on one engine. */
export interface TestDatabase {
  engine: EngineName;
  /** Runs setup SQL (several statements allowed) with full rights, outside the connector. */
  exec(sql: string): Promise<void>;
  /** A connector on this database (closed by `dispose`). */
  connector: DatabaseConnector;
  /** Server URL (server engine only). */
  url?: string;
  dispose(): Promise<void>;
}

/** Creates an empty database on `engine`. */
export async function createTestDatabase(engine: EngineName, prefix: string): Promise<TestDatabase> {
  if (engine === 'pglite') {
    const db = new PGlite(inMemoryPgliteOptions());
    const connector = createPgliteConnector({ pglite: db });
    return {
      engine,
      exec: async (sql) => {
        await db.exec(sql);
      },
      connector,
      dispose: async () => {
        await connector.close();
        await db.close();
      },
    };
  }
  const temp = await createTempDatabase(prefix);
  const admin = new pg.Client({ connectionString: temp.url });
  await admin.connect();
  const connector = createPostgresConnector({ url: temp.url });
  return {
    engine,
    url: temp.url,
    exec: async (sql) => {
      await admin.query(sql);
    },
    connector,
    dispose: async () => {
      await connector.close();
      await admin.end();
      await temp.drop();
    },
  };
}
