/**
 * Memory store test engines: embedded PGlite, and a "server-style connection" — `pg` over a Unix
 * socket to a PGlite (with pgvector) served by sqlrecall's own wire multiplexer (wire-mux.ts;
 * pglite-socket's queue interleaved or stalled concurrent transactions), since the Debian
 * PostgreSQL server used in CI lacks pgvector. Same store code, different client path (pool, wire
 * protocol, real concurrent connections).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { Gate, startWireMux } from '../../src/databases/pglite/wire-mux.js';
import {
  createMemoryStore,
  type MemoryStoreOptions,
  type SqlMemoryStore,
} from '../../src/memory/store/index.js';
import { freshPgliteDataDir, inMemoryPgliteOptions } from './pglite-template.js';

/** Store engines covered by every memory store suite. */
export type StoreEngine = 'pglite' | 'server-style';
export const STORE_ENGINES: StoreEngine[] = ['pglite', 'server-style'];

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
