/**
 * The embedded memory store shared by every local process: the data directory is opened
 * through `databases/pglite/sharing.ts` — this process owns it (and serves it on a Unix socket) or
 * reaches its owner's socket with `pg`, running the same SQL either way. Clients whose connection
 * broke (the owner exited) re-resolve on their next call, possibly becoming the owner.
 */
import { resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../../core/errors.js';
import { DiskGuard } from '../../databases/pglite/disk-guard.js';
import { Gate, type Setting } from '../../databases/pglite/session-gate.js';
import {
  acquireSharedPglite,
  brokenConnection,
  type OwnedPglite,
  openPglite,
  SHARED_PGLITE_WAIT_MS,
  sharedAccess,
} from '../../databases/pglite/sharing.js';
import { gatedClient } from '../../databases/postgres/gated-client.js';
import { queryPrepared } from './prepared.js';
import {
  loadPg,
  poolSqlClient,
  type Row,
  type SqlClient,
  type SqlSession,
  storeError,
} from './sql-client.js';

/** Default wait for a store another process is opening or handing over (see `sharing.ts`). */
export const SHARED_STORE_WAIT_MS = SHARED_PGLITE_WAIT_MS;

/** Default connections a non-owner process opens to the owner's socket (they are served one at a time). */
const CLIENT_POOL_SIZE = 2;

/**
 * What the store's SQL relies on in the session, stated instead of inherited (the data directory's
 * defaults, or what another client of the shared session SET): its tables and pgvector's type and
 * operators are found unqualified in `public`. Applied on each turn of this process on the session
 * (as owner) and as the connection `options` of a socket client (`session-gate.ts`).
 */
export const STORE_SESSION_SETTINGS: Setting[] = [['search_path', 'public']];

/** {@link STORE_SESSION_SETTINGS} as a connection's `options` (`-c name=value …`). */
const STORE_CONNECTION_OPTIONS = STORE_SESSION_SETTINGS.map(([name, value]) => `-c ${name}=${value}`).join(
  ' ',
);

/** Statements that only read: they skip the free-space check (`disk-guard.ts`). */
const READ_ONLY = /^\s*select\b/i;

/**
 * The `SqlClient` methods on an owned PGlite, every call through the gate and the disk guard: a
 * write is refused while the disk has too little free space, and after a disk-full error the
 * instance is never entered again (not even for the ROLLBACK), so a full disk is an error, never a
 * backend that spins.
 */
function ownerSession(db: PGlite, gate: Gate, disk: DiskGuard): Pick<SqlClient, 'query' | 'transaction'> {
  const guarded = async <T>(run: () => Promise<T>): Promise<T> => {
    try {
      return await run();
    } catch (error) {
      throw disk.note(error);
    }
  };
  return {
    async query<R extends Row>(text: string, params: unknown[] = []): Promise<R[]> {
      return gate.run(() => {
        disk.check(!READ_ONLY.test(text));
        // A parameterized statement keeps its plan in this session (prepared.ts) until the session
        // is reset for another client.
        return guarded(() => queryPrepared<R>(db, text, params, gate.resets));
      });
    },
    async transaction<T>(fn: (tx: SqlSession) => Promise<T>): Promise<T> {
      return gate.run(async () => {
        disk.check(true);
        // BEGIN/COMMIT by hand rather than `db.transaction`, whose ROLLBACK after a failed write
        // would enter a backend the disk stopped.
        await guarded(() => db.exec('BEGIN'));
        try {
          const result = await fn({
            query: <R extends Row>(text: string, params: unknown[] = []) =>
              guarded(async () => (await db.query<R>(text, params)).rows),
          });
          await guarded(() => db.exec('COMMIT'));
          return result;
        } catch (error) {
          if (!disk.stopped) await db.exec('ROLLBACK').catch(() => undefined);
          throw error;
        }
      });
    },
  };
}

type Mode =
  | { kind: 'owner'; session: Pick<SqlClient, 'query' | 'transaction'>; close: () => Promise<void> }
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

function ownerMode(owned: OwnedPglite): Mode {
  return { kind: 'owner', session: ownerSession(owned.db, owned.gate, owned.disk), close: owned.release };
}

/**
 * Embedded PGlite with pgvector in `dataDir` (created if missing), shared by every local process:
 * the first to open it owns it and serves it on `<dataDir>/.run/.s.PGSQL.5432`, later ones connect
 * there with `pg` (see `shared-pglite.ts`). Opened lazily on first query (≈1–3.5 s as owner).
 * `dataDir` undefined means a private in-memory database (tests).
 * @throws SqlrecallError `memory_unavailable` (from the first query) when the store stays locked or
 *   unreachable for `options.waitMs`
 */
export function createPgliteClient(
  dataDir: string | undefined,
  options: { waitMs?: number; maxConnections?: number } = {},
): SqlClient {
  return createSharedPgliteClient(dataDir === undefined ? undefined : resolve(dataDir), options);
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

  const resolveMode = async (): Promise<Mode> => {
    if (dir === undefined) {
      const db = await openPglite(undefined, true);
      return {
        kind: 'owner',
        session: ownerSession(db, new Gate(), new DiskGuard('memory:')),
        close: async () => {
          if (!db.closed) await db.close();
        },
      };
    }
    const shared = await acquireSharedPglite(dir, {
      vector: true,
      settings: STORE_SESSION_SETTINGS,
      template: 'memory-store', // a new store starts migrated (`template.ts`)
      waitMs: options.waitMs,
      connect: async (runDir) => {
        const pg = loadPg();
        const pool = new pg.Pool({
          // A row too large to decode fails its statement instead of the process (gated-client.ts).
          Client: gatedClient(pg),
          host: runDir,
          port: 5432,
          user: 'postgres',
          database: 'postgres',
          options: STORE_CONNECTION_OPTIONS,
          max: options.maxConnections ?? CLIENT_POOL_SIZE,
          connectionTimeoutMillis: 5_000,
          idleTimeoutMillis: 10_000,
          allowExitOnIdle: true,
        });
        const client = poolSqlClient(pool, 'pglite', displayName);
        try {
          await client.query('SELECT 1');
          return client;
        } catch (error) {
          await pool.end().catch(() => undefined);
          throw error;
        }
      },
      unavailable: (pid, cause) => unavailable(dir, pid, cause),
    });
    return shared.kind === 'owner' ? ownerMode(shared) : { kind: 'client', client: shared.client };
  };

  const access = sharedAccess<Mode>({
    resolve: resolveMode,
    error: (cause) => storeError(cause, displayName),
    isClient: (m) => m.kind === 'client',
    ownerGone: brokenConnection,
    dropClient: (m) => (m.kind === 'client' ? m.client.close() : Promise.resolve()),
  });
  /** Runs `fn` on the owner's session or the socket client (see `SharedAccess.run`). */
  const withMode = <T>(fn: (session: Pick<SqlClient, 'query' | 'transaction'>) => Promise<T>): Promise<T> =>
    access.run((m) => fn(m.kind === 'owner' ? m.session : m.client));

  return {
    engine: 'pglite',
    displayName,
    query: <R extends Row>(text: string, params: unknown[] = []) => withMode((s) => s.query<R>(text, params)),
    transaction: <T>(fn: (tx: SqlSession) => Promise<T>) => withMode((s) => s.transaction(fn)),
    async ownsStore(): Promise<boolean> {
      return (await access.current()).kind === 'owner';
    },
    async close(): Promise<void> {
      const value = await access.detach();
      if (value?.kind === 'client') await value.client.close();
      else await value?.close();
    },
  };
}
