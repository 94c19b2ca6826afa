/**
 * The one small query interface the memory store runs its SQL through, with two implementations:
 * embedded PGlite (+ pgvector) in a data directory, and a server PostgreSQL through `pg`. Both get
 * the same statements with `$n` parameters (extended protocol, one statement per call).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import pg from 'pg';
import { SqlrecallError } from '../../core/errors.js';
import { maskUrl, redactSecrets } from '../../core/redact.js';
import { connectionReason, isConnectionError, sqlStateOf } from '../../databases/postgres/errors.js';

/** A row as returned by either driver. */
export type Row = Record<string, unknown>;

/** Runs one statement with bound parameters and returns its rows. */
export interface SqlSession {
  query<R extends Row = Row>(text: string, params?: unknown[]): Promise<R[]>;
}

/** A connection (pool) to the store's database. */
export interface SqlClient extends SqlSession {
  readonly engine: 'pglite' | 'postgres';
  /** Where the store lives, safe to show (masked URL or `pglite:DIR`). */
  readonly displayName: string;
  /** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** Name of the lock file that marks a data directory as owned by a running process. */
export const LOCK_FILE_NAME = 'sqlrecall-memory.lock';

/** Data directories opened by this process (PGlite corrupts a directory opened twice). */
const openDirs = new Set<string>();

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Takes the data directory for this process: PGlite itself does not refuse a second process on the
 * same directory (tried with 0.5.14: both open, and writes would corrupt it), so we keep a lock file
 * with our pid. A lock left by a dead process (crash, SIGKILL) is taken over.
 * @throws SqlrecallError `memory_store` when another live process (or another store in this process) holds it
 */
function lockDataDir(dir: string): () => void {
  const inUse = (owner: string): SqlrecallError =>
    new SqlrecallError(
      'memory_store',
      `The memory store in ${dir} is in use by ${owner}; close it first or set MEMORY_DATABASE_URL to a server PostgreSQL to share memory between processes.`,
      { details: { hint: 'Only one sqlrecall process can open an embedded memory store at a time.' } },
    );
  if (openDirs.has(dir)) throw inUse('another memory store in this process');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE_NAME);
  const token = `${process.pid} ${randomUUID()}`;
  for (let attempt = 0; attempt < 2; attempt += 1) {
    try {
      writeFileSync(file, token, { flag: 'wx' });
      openDirs.add(dir);
      return () => {
        openDirs.delete(dir);
        try {
          if (readFileSync(file, 'utf8') === token) rmSync(file, { force: true });
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      let pid = Number.NaN;
      try {
        pid = Number.parseInt(readFileSync(file, 'utf8').split(' ')[0] ?? '', 10);
      } catch {
        // vanished meanwhile: retry
      }
      if (Number.isInteger(pid) && pid !== process.pid && pidAlive(pid))
        throw inUse(`another process (pid ${pid})`);
      rmSync(file, { force: true }); // stale: its process is gone (or it was ours and not released)
    }
  }
  throw inUse('another process');
}

/** Wraps a driver error as `memory_store` (connection problems get a reason sentence). */
export function storeError(error: unknown, displayName: string): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const state = sqlStateOf(error);
  if (isConnectionError(error)) {
    return new SqlrecallError(
      'memory_store',
      `Cannot reach the memory store at ${displayName}: ${connectionReason(error).replace(/\.?$/, '.')}`,
      { cause: error, details: { url: displayName, retryable: true, ...(state ? { sqlState: state } : {}) } },
    );
  }
  const message = redactSecrets(error instanceof Error ? error.message : String(error)).replace(/\.?$/, '');
  return new SqlrecallError(
    'memory_store',
    `The memory store failed: ${message}${state ? ` (SQLSTATE ${state})` : ''}.`,
    { cause: error, details: state ? { sqlState: state } : {} },
  );
}

/**
 * Embedded PGlite with pgvector in `dataDir` (created if missing); opened lazily on first query,
 * ≈1–3.5 s. `dataDir` undefined means an in-memory database (tests).
 */
export function createPgliteClient(dataDir: string | undefined): SqlClient {
  const dir = dataDir === undefined ? undefined : resolve(dataDir);
  const displayName = `pglite:${dir ?? 'memory:'}`;
  let opened: Promise<{ db: PGlite; release: () => void }> | undefined;

  const open = (): Promise<PGlite> => {
    opened ??= (async () => {
      const release = dir === undefined ? () => {} : lockDataDir(dir);
      try {
        // PGlite ignores the options argument when the data dir argument is undefined.
        const db =
          dir === undefined
            ? new PGlite({ extensions: { vector } })
            : new PGlite(dir, { extensions: { vector } });
        await db.waitReady;
        return { db, release };
      } catch (error) {
        release();
        throw error;
      }
    })();
    return opened.then(
      (value) => value.db,
      (error: unknown) => {
        opened = undefined;
        throw storeError(error, displayName);
      },
    );
  };

  return {
    engine: 'pglite',
    displayName,
    async query<R extends Row>(text: string, params: unknown[] = []): Promise<R[]> {
      const db = await open();
      return (await db.query<R>(text, params)).rows;
    },
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      const db = await open();
      return db.transaction((tx) =>
        fn({
          query: async <R extends Row>(text: string, params: unknown[] = []) =>
            (await tx.query<R>(text, params)).rows,
        }),
      );
    },
    async close(): Promise<void> {
      const current = opened;
      opened = undefined;
      if (!current) return;
      const value = await current.catch(() => undefined);
      if (!value) return;
      try {
        if (!value.db.closed) await value.db.close();
      } finally {
        value.release();
      }
    },
  };
}

/** A server PostgreSQL (needs the `vector` extension available) through a small `pg` pool. */
export function createPostgresClient(url: string, options: { maxConnections?: number } = {}): SqlClient {
  const displayName = maskUrl(url);
  const pool = new pg.Pool({
    connectionString: url,
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
  });
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    engine: 'postgres',
    displayName,
    async query<R extends Row>(text: string, params: unknown[] = []): Promise<R[]> {
      return (await pool.query(text, params)).rows as R[];
    },
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken = false;
      try {
        await client.query('BEGIN');
        const result = await fn({
          query: async <R extends Row>(text: string, params: unknown[] = []) =>
            (await client.query(text, params)).rows as R[],
        });
        await client.query('COMMIT');
        return result;
      } catch (error) {
        try {
          await client.query('ROLLBACK');
        } catch {
          broken = true;
        }
        throw error;
      } finally {
        client.release(broken);
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
