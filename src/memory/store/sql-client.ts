/**
 * The one small query interface the memory store runs its SQL through, with two implementations:
 * embedded PGlite (+ pgvector) in a data directory (`createPgliteClient` in `shared-pglite.ts`,
 * which builds on this module, so this one must not import it back), and a server PostgreSQL
 * through `pg` (here). Both get the same statements with `$n` parameters (extended protocol, one
 * statement per call).
 */
import { createRequire } from 'node:module';
import type pg from 'pg';
import { SqlrecallError } from '../../core/errors.js';
import { maskUrl, redactSecrets } from '../../core/redact.js';
import { withRetry } from '../../core/retry.js';
import { DISK_FULL, DiskFullError, isDiskFull } from '../../databases/pglite/disk-guard.js';
import { pgConnectionString } from '../../databases/postgres/connection-string.js';
import {
  connectionReason,
  isConnectionError,
  isRefusedOrReset,
  sqlStateOf,
} from '../../databases/postgres/errors.js';
import { gatedClient } from '../../databases/postgres/gated-client.js';

let pgModule: typeof pg | undefined;
/**
 * The `pg` driver, loaded on first use (an embedded-store owner never needs it, and
 * loading it costs ≈0.1–0.2 s of process start). `pg` is CommonJS, so a synchronous `require`.
 */
export function loadPg(): typeof pg {
  pgModule ??= createRequire(import.meta.url)('pg') as typeof pg;
  return pgModule;
}

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
  /**
   * Embedded store only: true when this process opened the data directory itself (it owns it and
   * serves it to others), false when it reaches another process's store through its socket.
   * Undefined for a server PostgreSQL.
   */
  ownsStore?(): Promise<boolean>;
}

export { LOCK_FILE_NAME } from '../../databases/pglite/sharing.js';

/** The text of any thrown value: its `message` when it has one (never "[object Object]"). */
function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message === 'string' && message !== '') return message;
  if (typeof error === 'string') return error;
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? `error ${code}` : 'an unknown error';
}

/**
 * Wraps a driver error: the store unreachable (its connection refused or broken, its owner process
 * gone mid-request) or its disk full is `memory_unavailable` (exit 6, HTTP 503); any other
 * failure of a statement is `memory_store`.
 */
export function storeError(error: unknown, displayName: string): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const state = sqlStateOf(error);
  if (isDiskFull(error)) {
    const dir = error instanceof DiskFullError ? error.dir : displayName;
    const text = error instanceof DiskFullError ? error.message : `No space left on device for ${dir}.`;
    return new SqlrecallError('memory_unavailable', `The memory store cannot write: ${text}`, {
      cause: error,
      details: {
        url: displayName,
        sqlState: DISK_FULL,
        hint: `Free space on the disk that holds ${dir}.`,
      },
    });
  }
  if (isConnectionError(error)) {
    return new SqlrecallError(
      'memory_unavailable',
      `Cannot reach the memory store at ${displayName}: ${connectionReason(error).replace(/\.?$/, '.')}`,
      { cause: error, details: { url: displayName, retryable: true, ...(state ? { sqlState: state } : {}) } },
    );
  }
  const message = redactSecrets(messageOf(error)).replace(/\.?$/, '');
  return new SqlrecallError(
    'memory_store',
    `The memory store failed: ${message}${state ? ` (SQLSTATE ${state})` : ''}.`,
    { cause: error, details: state ? { sqlState: state } : {} },
  );
}

/** A server PostgreSQL (needs the `vector` extension available) through a small `pg` pool. */
export function createPostgresClient(url: string, options: { maxConnections?: number } = {}): SqlClient {
  const pg = loadPg();
  const pool = new pg.Pool({
    connectionString: pgConnectionString(url),
    // A row too large to decode fails its statement instead of the process (gated-client.ts).
    Client: gatedClient(pg),
    max: options.maxConnections ?? 4,
    connectionTimeoutMillis: 10_000,
    idleTimeoutMillis: 10_000,
  });
  return poolSqlClient(pool, 'postgres', maskUrl(url));
}

/**
 * The {@link SqlClient} over a `pg` pool (a server, or another process's shared embedded store).
 * `close()` ends the pool.
 */
export function poolSqlClient(pool: pg.Pool, engine: SqlClient['engine'], displayName: string): SqlClient {
  // An idle client losing its connection must not crash the process; the next query reports it.
  pool.on('error', () => {});
  return {
    engine,
    displayName,
    async query<R extends Row>(text: string, params: unknown[] = []): Promise<R[]> {
      return (await pool.query(text, params)).rows as R[];
    },
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      // Opening the connection sends nothing: a refused or reset one is retried (core/retry.ts).
      // The transaction itself is never repeated (its statements may have run).
      const client = await withRetry(() => pool.connect(), { retryIf: isRefusedOrReset });
      let broken = false;
      // While checked out, pg-pool listens no more: a connection lost between two statements (the
      // owner of a shared store exiting) would be an unhandled 'error' event, a crash. The
      // statement in flight, or the next one, fails with the connection error instead.
      const onError = () => {
        broken = true;
      };
      client.on('error', onError);
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
        client.removeListener('error', onError);
        client.release(broken);
      }
    },
    async close(): Promise<void> {
      await pool.end();
    },
  };
}
