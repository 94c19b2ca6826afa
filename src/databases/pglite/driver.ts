/**
 * The PGlite drivers of the PostgreSQL dialect (PGlite: PostgreSQL 18 compiled to WASM).
 *
 * - {@link createPgliteDriver}: an instance in this process — a private one, the caller's, or a
 *   shared data directory this process owns (then every session runs inside the gate it shares
 *   with socket clients). One connection: sessions run one after another, and `statement_timeout`
 *   is NOT enforced (a runaway statement runs until it ends; nothing can interrupt it).
 *   `SET TRANSACTION READ ONLY` is, so writes are still refused (SQLSTATE 25006).
 * - {@link createSharedPgliteDriver}: a data directory shared by every local process
 *   (`sharing.ts`). The first process to use it opens it and serves it on a Unix socket; while it
 *   runs, others reach it through that socket with the `pg` driver (the shared-socket client), so
 *   they never open a second PGlite on the same files and start without loading PGlite. When the
 *   owner exits mid-call, the call follows the directory to its next owner (maybe this process).
 */
import type { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../../core/errors.js';
import type { Driver } from '../engine.js';
import { unreachableError } from '../postgres/errors.js';
import type { PgSession } from '../postgres/execute.js';
import { MAX_DECODED_ROW_BYTES } from '../postgres/wire-gate.js';
import { queryRawStreamed } from './raw-stream.js';
import { acquireSharedPglite, brokenConnection, sharedAccess } from './sharing.js';

/** Runs `fn` with the instance: directly, or inside the gate it shares with socket clients. */
export type PgliteRun = <T>(fn: (db: PGlite) => Promise<T>) => Promise<T>;

/**
 * The driver on an instance this process holds. Each session is one PGlite transaction (its
 * lock keeps other callers' statements out of it); `cancel` does nothing.
 * @param run gives the instance to a function (and may start it: its errors are thrown as they are)
 * @param close called by {@link Driver.close}
 */
export function createPgliteDriver(
  displayName: string,
  run: PgliteRun,
  close: () => Promise<void>,
): Driver<PgSession> {
  return {
    displayName,
    async ping(): Promise<void> {
      await run((db) => db.query('SELECT 1'));
    },
    withSession: (work) =>
      run((db) =>
        db.transaction((tx) =>
          work({
            enforcesTimeout: false,
            query: (text, params) => tx.query(text, params),
            // PGlite's transaction has begun already: the statements follow its BEGIN.
            begin: async (statements) => {
              await tx.exec(statements.join('; '));
            },
            // Protocol bytes through the wire gate: a row past the budget is never decoded.
            queryRaw: (text, limitBytes = MAX_DECODED_ROW_BYTES, params) =>
              queryRawStreamed(db, text, limitBytes, params),
            rollback: () => tx.rollback(),
            cancel: () => {},
          }),
        ),
      ),
    close,
  };
}

/**
 * Calls a socket client lets wait for its pool (3 connections): the server driver's 16
 * (`POOL_QUEUE_MAX`) suits a server with a backend per connection; here the owner runs one
 * statement at a time whatever the pool (its gate queues without a bound), and a `serve` beside a
 * `chat` owning the shop got `db_busy` from its 20th concurrent statement.
 */
const SOCKET_QUEUE_MAX = 1024;

/**
 * True for a failure of the connection to another process's socket (its owner went away), while
 * connecting or mid-statement: a session here is read-only or rolled back, so running it again
 * on the next owner repeats nothing. Driver errors arrive as thrown by `pg`; the driver's own
 * connection failures as `db_unreachable` with the socket error as cause.
 */
function ownerGone(error: unknown): boolean {
  if (error instanceof SqlrecallError)
    return (error.code === 'db_unreachable' || error.code === 'db_query') && brokenConnection(error.cause);
  return brokenConnection(error);
}

type Mode = { driver: Driver<PgSession>; owner: boolean };

/**
 * The driver on a data directory shared between processes (see the module comment): nothing
 * happens until the first call, which either opens the directory (≈1–3 s) and serves it, or —
 * while another process holds it — connects to that process's socket.
 * @param dir absolute path of the data directory
 * @param waitMs longest wait for a directory held by a process that does not answer on its socket
 */
export function createSharedPgliteDriver(dir: string, waitMs: number | undefined): Driver<PgSession> {
  const displayName = `pglite:${dir}`;

  const resolveMode = async (): Promise<Mode> => {
    const shared = await acquireSharedPglite(dir, {
      waitMs,
      connect: async (runDir) => {
        // Loaded only here: an owner never needs `pg` (≈0.1–0.2 s of start).
        const { createPgDriver } = await import('../postgres/pg-driver.js');
        // One session that cannot be interrupted: a cancelling connection would only queue behind it.
        const driver = createPgDriver(
          {
            url: 'postgres://postgres@localhost/postgres',
            socketDir: runDir,
            displayName,
            cancel: false,
            queueMax: SOCKET_QUEUE_MAX,
          },
          undefined,
        );
        try {
          await driver.ping();
          return driver;
        } catch (error) {
          await driver.close().catch(() => undefined);
          // The socket is not there (yet) or refused: unwrap, so the wait-and-retry recognizes it.
          throw error instanceof SqlrecallError && ownerGone(error) ? error.cause : error;
        }
      },
      unavailable: (pid, cause) =>
        new SqlrecallError(
          'db_unreachable',
          `The database ${displayName} is held by ${pid > 0 ? `process ${pid}` : 'another process'} but does not answer on its socket; wait for it or stop that process.`,
          { cause, details: { url: displayName, retryable: true } },
        ),
    });
    if (shared.kind === 'client') return { driver: shared.client, owner: false };
    const run: PgliteRun = (fn) => shared.gate.run(() => fn(shared.db));
    return { driver: createPgliteDriver(displayName, run, shared.release), owner: true };
  };

  const access = sharedAccess<Mode>({
    resolve: resolveMode,
    error: (cause) => (cause instanceof SqlrecallError ? cause : unreachableError(displayName, cause)),
    isClient: (m) => !m.owner,
    ownerGone,
    dropClient: (m) => m.driver.close(),
  });

  return {
    displayName,
    ping: () => access.run((m) => m.driver.ping()),
    withSession: (work, options) => access.run((m) => m.driver.withSession(work, options)),
    async close(): Promise<void> {
      await (await access.detach())?.driver.close();
    },
  };
}
