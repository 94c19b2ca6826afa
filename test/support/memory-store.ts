/**
 * Memory store test engines: embedded PGlite; a "server-style connection" — `pg` over a Unix
 * socket to a PGlite (with pgvector) served by sqlrecall's own wire multiplexer (wire-mux.ts;
 * pglite-socket's queue interleaved or stalled concurrent transactions); and the real server
 * PostgreSQL of TEST_DATABASE_URL (`server`, each harness in its own temporary database) when that
 * server offers the pgvector extension. Same store code, different client paths (pool, wire
 * protocol, real concurrent connections, the server's own pgvector build).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { Gate, startWireMux } from '../../src/databases/pglite/wire-mux.js';
import {
  createMemoryStore,
  type MemoryStoreOptions,
  type SqlMemoryStore,
} from '../../src/memory/store/index.js';
import { freshPgliteDataDir, inMemoryPgliteOptions } from './pglite-template.js';
import { createTempDatabase, TEST_DATABASE_URL } from './server-db.js';

/** Store engines covered by every memory store suite. */
export type StoreEngine = 'pglite' | 'server-style' | 'server';

/**
 * Why the real server is not among the store engines, or null when it is: TEST_DATABASE_URL unset,
 * unreachable, or a server without the pgvector extension (install `postgresql-15-pgvector`, or
 * build pgvector against the server; `.ci/run` does so when it can).
 */
export const SERVER_STORE_SKIP: string | null = await serverStoreSkip();

async function serverStoreSkip(): Promise<string | null> {
  if (!TEST_DATABASE_URL) return 'TEST_DATABASE_URL is not set';
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  try {
    await client.connect();
    const rows = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    return rows.rowCount === 0 ? 'the server at TEST_DATABASE_URL has no pgvector extension' : null;
  } catch (error) {
    return `the server at TEST_DATABASE_URL is unreachable (${(error as Error).message})`;
  } finally {
    await client.end().catch(() => undefined);
  }
}

if (SERVER_STORE_SKIP && TEST_DATABASE_URL)
  console.warn(`memory store suites skip the real server: ${SERVER_STORE_SKIP}`);

export const STORE_ENGINES: StoreEngine[] = SERVER_STORE_SKIP
  ? ['pglite', 'server-style']
  : ['pglite', 'server-style', 'server'];

/** Options of {@link StoreHarness.open}: pool size, and the search policy (to force a path). */
export type StoreOpenOptions = Pick<MemoryStoreOptions, 'maxConnections' | 'search' | 'onSearchPath'>;

/** A place to open stores: `open()` may be called several times (reopen, separate connections). */
export interface StoreHarness {
  engine: StoreEngine;
  /** A new store instance on the same database (embedded: the data dir must be free). */
  open(options?: StoreOpenOptions): SqlMemoryStore;
  /** Embedded data dir (pglite engine only). */
  dataDir?: string;
  /** Server URL (server-style engine only). */
  url?: string;
  dispose(): Promise<void>;
}

/** Creates an empty database for `engine`. */
export async function createStoreHarness(engine: StoreEngine): Promise<StoreHarness> {
  if (engine === 'pglite') {
    const dataDir = freshPgliteDataDir('sqlrecall-memstore-');
    return {
      engine,
      dataDir,
      open: (options = {}) =>
        createMemoryStore({ dataDir, search: options.search, onSearchPath: options.onSearchPath }),
      dispose: async () => rmSync(dataDir, { recursive: true, force: true }),
    };
  }
  if (engine === 'server') {
    const temp = await createTempDatabase('sqlrecall_memstore');
    return {
      engine,
      url: temp.url,
      open: (options = {}) => createMemoryStore({ url: temp.url, ...options }),
      dispose: () => temp.drop(),
    };
  }
  const db = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
  await db.waitReady;
  const runDir = mkdtempSync(join(tmpdir(), 'sqlrecall-memserver-'));
  const server = await startWireMux(db, new Gate(), runDir);
  const url = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(runDir)}`;
  return {
    engine,
    url,
    open: (options = {}) => createMemoryStore({ url, ...options }),
    dispose: async () => {
      await server.close();
      await db.close();
      rmSync(runDir, { recursive: true, force: true });
    },
  };
}

/** A deterministic unit vector of `dimensions` near direction `seed` (small `jitter` spreads it). */
export function testVector(seed: number, dimensions = 8, jitter = 0): number[] {
  const values: number[] = [];
  let state = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < dimensions; i += 1) {
    state = (state * 1664525 + 1013904223) >>> 0;
    values.push(state / 2 ** 32 - 0.5 + (jitter ? Math.sin(seed * 7.1 + i * 3.3) * jitter : 0));
  }
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}
