/**
 * One embedded memory store for every local process (issue 15).
 *
 * PGlite is one PostgreSQL session inside one process and does not stop a second process from
 * opening (and corrupting) the same data directory. So: the first process to open a data
 * directory writes `<dir>/sqlrecall-memory.lock` (its pid), opens PGlite and serves it on the Unix
 * socket `<dir>/.run/.s.PGSQL.5432` (directory 0700, socket 0600, never TCP) through the
 * serializing multiplexer of `wire-mux.ts`. Every later process finds the lock held by a live pid
 * and connects to that socket with `pg`, running the same SQL. When the owner exits (or is
 * killed), its lock's pid is dead: the next process to open removes the stale lock and socket
 * and becomes the owner; clients whose connection broke re-resolve on their next call.
 * Stores opened twice in one process share one PGlite (reference-counted).
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../../core/errors.js';
import { pgliteStartParams } from '../../databases/pglite/start-params.js';
import { isConnectionError } from '../../databases/postgres/errors.js';
import {
  LOCK_FILE_NAME,
  loadPg,
  poolSqlClient,
  type Row,
  type SqlClient,
  type SqlSession,
  storeError,
} from './sql-client.js';
import { Gate, startWireMux, type WireMux } from './wire-mux.js';

/**
 * Default wait for a store another process is opening or handing over: 30 s (PGlite's own start
 * is 1–3.5 s, LIBRARIES.md; a takeover adds one more start).
 */
export const SHARED_STORE_WAIT_MS = 30_000;

/** Default connections a non-owner process opens to the owner's socket (they are served one at a time). */
const CLIENT_POOL_SIZE = 2;

/** An open PGlite owned by this process, shared by its stores. */
interface Owner {
  db: PGlite;
  gate: Gate;
  mux: WireMux | undefined;
  refs: number;
  release: () => void;
}

/** Data directories this process owns (absolute path → owner being opened or open). */
const owners = new Map<string, Promise<Owner>>();

/** The data directory's run directory, where the socket lives. */
export function runDirOf(dir: string): string {
  return join(dir, '.run');
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === 'EPERM';
  }
}

/**
 * Tries to take the lock file: a release function when taken, else the live owner's pid.
 * A lock whose pid is dead (crash, SIGKILL) is removed with the socket it left.
 */
function tryLock(dir: string): { release: () => void } | { pid: number } {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE_NAME);
  const token = `${process.pid} ${randomUUID()}`;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(file, token, { flag: 'wx', mode: 0o600 });
      return {
        release: () => {
          try {
            if (readFileSync(file, 'utf8') === token) rmSync(file, { force: true });
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      let pid = Number.NaN;
      try {
        pid = Number.parseInt(readFileSync(file, 'utf8').split(' ')[0] ?? '', 10);
      } catch {
        continue; // vanished meanwhile: retry
      }
      // A lock just created may not hold its pid yet (empty file): treat as live, wait and retry.
      if (!Number.isInteger(pid)) return { pid: -1 };
      if (pid !== process.pid && pidAlive(pid)) return { pid };
      rmSync(file, { force: true }); // stale: its process is gone (or ours, not released)
      rmSync(join(runDirOf(dir), '.s.PGSQL.5432'), { force: true });
    }
  }
  return { pid: -1 };
}

async function openPglite(dir: string | undefined): Promise<PGlite> {
  // Loaded only by commands that open an embedded store as its owner (fast start of the others).
  const [{ PGlite }, { vector }] = await Promise.all([
    import('@electric-sql/pglite'),
    import('@electric-sql/pglite-pgvector'),
  ]);
  // Object form (PGlite ignores the options argument when the data dir argument is undefined);
  // a 16MB buffer pool instead of initdb's 128MB (start-params.ts: −120 MB RSS per instance).
  const db = new PGlite({
    dataDir: dir,
    extensions: { vector },
    startParams: pgliteStartParams(PGlite.defaultStartParams),
  });
  await db.waitReady;
  return db;
}

async function openOwner(dir: string, release: () => void): Promise<Owner> {
  let db: PGlite | undefined;
  try {
    db = await openPglite(dir);
    const gate = new Gate();
    const mux = await startWireMux(db, gate, runDirOf(dir));
    return { db, gate, mux, refs: 0, release };
  } catch (error) {
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}

async function closeOwner(owner: Owner): Promise<void> {
  try {
    await owner.mux?.close();
    // Let a client's transaction in flight finish (or be rolled back) before closing.
    await owner.gate.run(async () => {
      if (!owner.db.closed) await owner.db.close();
    });
  } finally {
    owner.release();
  }
}

/** The `SqlClient` methods on an owned PGlite, every call through the gate. */
function ownerSession(owner: Owner): Pick<SqlClient, 'query' | 'transaction'> {
  return {
    async query<R extends Row>(text: string, params: unknown[] = []): Promise<R[]> {
      return owner.gate.run(async () => (await owner.db.query<R>(text, params)).rows);
    },
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      return owner.gate.run(() =>
        owner.db.transaction((tx) =>
          fn({
            query: async <R extends Row>(text: string, params: unknown[] = []) =>
              (await tx.query<R>(text, params)).rows,
          }),
        ),
      );
    },
  };
}

/** Socket-level failures (Node error codes look like SQLSTATEs to `isConnectionError`: EPIPE). */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ENOENT', 'ETIMEDOUT']);

/** True when the owner's socket is gone or the connection to it broke. */
function brokenConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  return isConnectionError(error);
}

type Mode =
  | { kind: 'owner'; owner: Owner; session: Pick<SqlClient, 'query' | 'transaction'> }
  | { kind: 'client'; client: SqlClient };

/** `memory_unavailable`: the store stayed locked or unreachable. */
function unavailable(dir: string, pid: number, cause: unknown): SqlrecallError {
  const by = pid > 0 ? `process ${pid}` : 'another process';
  return new SqlrecallError(
    'memory_unavailable',
    `The memory store in ${dir} is held by ${by} but does not answer on its socket; wait for it or stop that process.`,
    {
      cause,
      details: {
        retryable: true,
        hint: 'Close the other sqlrecall process, or set MEMORY_DATABASE_URL to a server PostgreSQL.',
      },
    },
  );
}

/**
 * The embedded store client behind `createPgliteClient`: owner or socket client, decided on first
 * use (see the module comment). `dir` undefined: a private in-memory PGlite.
 */
export function createSharedPgliteClient(
  dir: string | undefined,
  options: { waitMs?: number; maxConnections?: number },
): SqlClient {
  const displayName = `pglite:${dir ?? 'memory:'}`;
  const waitMs = options.waitMs ?? SHARED_STORE_WAIT_MS;
  let mode: Promise<Mode> | undefined;

  const resolveMode = async (): Promise<Mode> => {
    if (dir === undefined) {
      const db = await openPglite(undefined);
      const owner: Owner = { db, gate: new Gate(), mux: undefined, refs: 1, release: () => {} };
      return { kind: 'owner', owner, session: ownerSession(owner) };
    }
    const deadline = Date.now() + waitMs;
    let lastPid = -1;
    let lastError: unknown;
    for (;;) {
      const mine = owners.get(dir);
      if (mine) {
        const owner = await mine;
        owner.refs += 1;
        return { kind: 'owner', owner, session: ownerSession(owner) };
      }
      const lock = tryLock(dir);
      if ('release' in lock) {
        const opening = openOwner(dir, lock.release);
        owners.set(dir, opening);
        try {
          const owner = await opening;
          owner.refs += 1;
          return { kind: 'owner', owner, session: ownerSession(owner) };
        } catch (error) {
          owners.delete(dir);
          throw error;
        }
      }
      lastPid = lock.pid;
      const pool = new (loadPg().Pool)({
        host: runDirOf(dir),
        port: 5432,
        user: 'postgres',
        database: 'postgres',
        max: options.maxConnections ?? CLIENT_POOL_SIZE,
        connectionTimeoutMillis: 5_000,
        idleTimeoutMillis: 10_000,
        allowExitOnIdle: true,
      });
      const client = poolSqlClient(pool, 'pglite', displayName);
      try {
        await client.query('SELECT 1');
        return { kind: 'client', client };
      } catch (error) {
        await pool.end().catch(() => undefined);
        if (!brokenConnection(error)) throw error;
        lastError = error;
      }
      if (Date.now() >= deadline) throw unavailable(dir, lastPid, lastError);
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(Math.random() * 100)));
    }
  };

  const current = (): Promise<Mode> => {
    mode ??= resolveMode();
    return mode.catch((error: unknown) => {
      mode = undefined;
      throw storeError(error, displayName);
    });
  };

  /**
   * Runs `fn` on the current mode; when a socket client's connection broke (the owner exited),
   * drops it, re-resolves (possibly becoming the owner) and runs `fn` once more.
   */
  const withMode = async <T>(
    fn: (session: Pick<SqlClient, 'query' | 'transaction'>) => Promise<T>,
  ): Promise<T> => {
    const first = await current();
    if (first.kind === 'owner') return fn(first.session);
    try {
      return await fn(first.client);
    } catch (error) {
      if (!brokenConnection(error)) throw error;
      if (mode) {
        const stale = mode;
        mode = undefined;
        void stale.then((m) => (m.kind === 'client' ? m.client.close() : undefined)).catch(() => undefined);
      }
      const second = await current();
      return fn(second.kind === 'owner' ? second.session : second.client);
    }
  };

  return {
    engine: 'pglite',
    displayName,
    query: <R extends Row>(text: string, params: unknown[] = []) => withMode((s) => s.query<R>(text, params)),
    transaction: <T>(fn: (tx: SqlSession) => Promise<T>) => withMode((s) => s.transaction(fn)),
    async ownsStore(): Promise<boolean> {
      return (await current()).kind === 'owner';
    },
    async close(): Promise<void> {
      const closing = mode;
      mode = undefined;
      if (!closing) return;
      const value = await closing.catch(() => undefined);
      if (!value) return;
      if (value.kind === 'client') {
        await value.client.close();
        return;
      }
      value.owner.refs -= 1;
      if (value.owner.refs > 0) return;
      if (dir !== undefined) owners.delete(dir);
      if (dir === undefined) {
        if (!value.owner.db.closed) await value.owner.db.close();
        return;
      }
      await closeOwner(value.owner);
    },
  };
}
