/**
 * The `pg` (node-postgres) driver of the PostgreSQL dialect: a small pool on a server, or on the
 * Unix socket of another sqlrecall process serving its embedded database. The model's SQL always
 * goes over the extended query protocol (one statement per round trip); rows are measured on the
 * wire before pg decodes them (`gated-client.ts`).
 */
import pg from 'pg';
import { SqlrecallError } from '../../core/errors.js';
import { maskUrl } from '../../core/redact.js';
import { withRetry } from '../../core/retry.js';
import type { Driver } from '../engine.js';
import { pgConnectionString } from './connection-string.js';
import { isRefusedOrReset, unreachableError } from './errors.js';
import type { PgSession, RawResult } from './execute.js';
import { gatedClient, withRowBudget } from './gated-client.js';
import { MAX_DECODED_ROW_BYTES } from './wire-gate.js';

/** Options of {@link createPgDriver}. */
export interface PgDriverOptions {
  /** `postgres://user:password@host:port/database?sslmode=…` */
  url: string;
  /** `application_name` shown in `pg_stat_activity`; default `sqlrecall`. */
  applicationName?: string;
  /**
   * Connect to the Unix socket `<socketDir>/.s.PGSQL.5432` as user `postgres` to database
   * `postgres` instead of `url` (which then only has to be a `postgres://` URL): another sqlrecall
   * process serving its embedded database (`../pglite/sharing.ts`). Default: undefined (use `url`).
   */
  socketDir?: string;
  /** Shown in messages instead of the masked `url`; default `maskUrl(url)`. */
  displayName?: string;
  /**
   * Cancel a statement that outlives its timeout or whose signal aborts with `pg_cancel_backend`
   * from a second connection; default true. False for an embedded database served over a socket:
   * it is one session that cannot be interrupted (a cancelling connection would only queue behind it).
   */
  cancel?: boolean;
  /**
   * Most calls waiting at once for a pooled connection (one more gets `db_busy` at once); default
   * {@link POOL_QUEUE_MAX}. An embedded database served over a socket runs one statement at a time
   * whatever the pool, so its driver lets more wait (`../pglite/driver.ts`).
   */
  queueMax?: number;
}

/** Pool size: one statement at a time per question, plus a spare for introspection. */
const POOL_MAX = 3;
/** Connection attempts give up after this many milliseconds (then `db_unreachable`). */
const CONNECT_TIMEOUT_MS = 5_000;
/** Cancels sent (this many, {@link CANCEL_REPEAT_MS} apart) while the execution still runs. */
const CANCEL_REPEATS = 4;
const CANCEL_REPEAT_MS = 200;
/** Most calls waiting for a free pooled connection; one more is refused at once with `db_busy`. */
export const POOL_QUEUE_MAX = 16;
/** Longest wait for a free pooled connection (then `db_busy`); the statement timeout if longer. */
const POOL_WAIT_MS = 30_000;

/** Returns every value as the server's text; conversion happens in `values.ts`. */
const RAW_TYPES: pg.CustomTypesConfig = {
  getTypeParser: (() => (value: string) => value) as pg.CustomTypesConfig['getTypeParser'],
};

/** pg's QueryConfig plus `queryMode`, which @types/pg 8.15 does not declare (pg lib/query.js does). */
type ExtendedQueryConfig = pg.QueryArrayConfig & { queryMode: 'extended' };

/**
 * Creates the driver; connects lazily (the first session opens the pool's first connection).
 * @param cancelSql the dialect's statement that cancels a backend given its pid as `$1`
 *   (`Dialect.cancellation`); undefined: statements are never cancelled from outside
 * @throws SqlrecallError `config` when `url` is not a postgres:// URL
 */
export function createPgDriver(options: PgDriverOptions, cancelSql: string | undefined): Driver<PgSession> {
  if (!/^postgres(ql)?:\/\//i.test(options.url)) {
    throw new SqlrecallError('config', `Not a PostgreSQL URL: "${maskUrl(options.url)}".`);
  }
  const displayName = options.displayName ?? maskUrl(options.url);
  const target: pg.PoolConfig =
    options.socketDir === undefined
      ? { connectionString: pgConnectionString(options.url) }
      : { host: options.socketDir, port: 5432, user: 'postgres', database: 'postgres' };
  const pool = new pg.Pool({
    ...target,
    // Rows are measured on the wire before pg decodes them (gated-client.ts).
    Client: gatedClient(pg),
    max: POOL_MAX,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 10_000,
    application_name: options.applicationName ?? 'sqlrecall',
  });
  // An idle client losing its connection emits 'error' on the pool; without a listener Node exits.
  pool.on('error', () => {});
  const slots = new PoolSlots(POOL_MAX, options.queueMax ?? POOL_QUEUE_MAX);

  /**
   * A pooled connection: first a free slot (waiting in a bounded queue → `db_busy` when it is
   * full or the wait ends), then the connection itself (→ `db_unreachable` when the server does
   * not answer within {@link CONNECT_TIMEOUT_MS}). Call the returned `release` exactly once.
   */
  const connect = async (
    waitMs = POOL_WAIT_MS,
    signal?: AbortSignal,
  ): Promise<{ client: pg.PoolClient; release: (broken?: boolean) => void }> => {
    await slots.acquire(waitMs, signal);
    let client: pg.PoolClient;
    try {
      // Nothing has been sent yet: a refused or reset connection is retried (core/retry.ts); a
      // timeout, a DNS failure or a refused login is not (see isRefusedOrReset).
      client = await withRetry(
        async () => {
          try {
            return await pool.connect();
          } catch (error) {
            throw unreachableError(displayName, error);
          }
        },
        { signal, retryIf: (error) => isRefusedOrReset(error) },
      );
    } catch (error) {
      slots.release();
      throw error;
    }
    let released = false;
    // While checked out, pg-pool listens no more: a connection lost between two statements (the
    // owner of a shared `pglite:` directory exiting, a server restart) would be an unhandled 'error'
    // event, a crash. The statement in flight, or the next one, fails with the connection error.
    let lost = false;
    const onError = () => {
      lost = true;
    };
    client.on('error', onError);
    return {
      client,
      release: (broken = false) => {
        if (released) return;
        released = true;
        client.removeListener('error', onError);
        client.release(broken || lost);
        slots.release();
      },
    };
  };

  const cancels = options.cancel !== false && cancelSql !== undefined ? cancelSql : undefined;

  return {
    displayName,

    async ping(): Promise<void> {
      const { client, release } = await connect();
      try {
        await client.query('SELECT 1');
        release();
      } catch (error) {
        release(true);
        throw unreachableError(displayName, error);
      }
    },

    async withSession(work, sessionOptions = {}) {
      const { client, release } = await connect(
        Math.max(POOL_WAIT_MS, sessionOptions.timeoutMs ?? 0),
        sessionOptions.signal,
      );
      let broken = false;
      let active = true;
      const session: PgSession = {
        enforcesTimeout: true,
        query: (text, params) => client.query(text, params),
        begin: async (statements) => {
          await client.query(['BEGIN', ...statements].join('; '));
        },
        queryRaw: async (text, limitBytes = MAX_DECODED_ROW_BYTES, params): Promise<RawResult> => {
          const config: ExtendedQueryConfig = {
            text,
            ...(params && params.length > 0 ? { values: [...params] } : {}),
            rowMode: 'array',
            types: RAW_TYPES,
            queryMode: 'extended',
          };
          const { value: result, heldBack } = await withRowBudget(client, limitBytes, () =>
            client.query<(string | null)[]>(config),
          );
          return {
            fields: result.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
            rows: result.rows,
            ...(heldBack ? { heldBack } : {}),
          };
        },
        rollback: async () => {
          try {
            await client.query('ROLLBACK');
          } catch (error) {
            broken = true;
            throw error;
          }
        },
        cancel: () => {
          if (cancels !== undefined) void cancelBackend(target, client, cancels, () => active);
        },
      };
      try {
        return await work(session);
      } finally {
        active = false;
        release(broken);
      }
    },

    async close(): Promise<void> {
      await pool.end();
    },
  };
}

/**
 * Counts pooled connections in use and queues callers for a free one, with a bound on the queue
 * and on the wait. pg's own pool queue would wait up to `connectionTimeoutMillis` and then report
 * a timeout indistinguishable from an unreachable server; here a busy pool is `db_busy`.
 */
export class PoolSlots {
  private inUse = 0;
  private readonly waiting: { grant: () => void }[] = [];

  /**
   * @param size connections of the pool
   * @param queueMax most callers waiting at once
   */
  constructor(
    private readonly size: number,
    private readonly queueMax: number,
  ) {}

  /** Slots in use now. */
  get busy(): number {
    return this.inUse;
  }

  /**
   * Takes a slot, waiting up to `waitMs` for one.
   * @throws SqlrecallError `db_busy` when the queue is full or the wait ends; the signal's abort
   *   rejects with `db_busy` too (the caller maps it)
   */
  async acquire(waitMs: number, signal?: AbortSignal): Promise<void> {
    if (this.inUse < this.size && this.waiting.length === 0) {
      this.inUse += 1;
      return;
    }
    if (this.waiting.length >= this.queueMax) throw this.busyError(waitMs);
    await new Promise<void>((resolve, reject) => {
      const entry = {
        grant: () => {
          cleanup();
          this.inUse += 1;
          resolve();
        },
      };
      const drop = (): void => {
        const index = this.waiting.indexOf(entry);
        if (index >= 0) this.waiting.splice(index, 1);
        cleanup();
        reject(this.busyError(waitMs));
      };
      const timer = setTimeout(drop, waitMs);
      const cleanup = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', drop);
      };
      signal?.addEventListener('abort', drop, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Returns a slot; the longest waiter gets it. */
  release(): void {
    this.inUse = Math.max(0, this.inUse - 1);
    const next = this.waiting.shift();
    if (next) next.grant();
  }

  private busyError(waitMs: number): SqlrecallError {
    const queued = this.waiting.length;
    return new SqlrecallError(
      'db_busy',
      `The database connection pool is busy: ${this.inUse} queries running${
        queued > 0 ? `, ${queued} waiting` : ''
      }.`,
      {
        details: {
          running: this.inUse,
          waiting: queued,
          waitMs,
          retryable: true,
          hint: 'Try again when the running queries finish.',
        },
      },
    );
  }
}

/**
 * Cancels the statement running on `client` (`cancelSql`, `pg_cancel_backend`, from a separate, short-lived
 * connection, so a full pool cannot block the cancellation). Best effort: failures are ignored.
 * `isActive` is checked just before cancelling, so a client already back in the pool (and maybe
 * running someone else's statement) is left alone; a tiny race window remains.
 */
async function cancelBackend(
  target: pg.ClientConfig,
  client: pg.PoolClient,
  cancelSql: string,
  isActive: () => boolean,
): Promise<void> {
  // `processID` is set by pg's Client after the startup handshake; @types/pg does not declare it.
  const pid: unknown = Reflect.get(client, 'processID');
  if (typeof pid !== 'number' || pid === 0) return;
  const canceller = new pg.Client({ ...target, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  // The server may end this short-lived session (shutdown, dropped database): never an unhandled error.
  canceller.on('error', () => {});
  try {
    await canceller.connect();
    // A cancel that lands between two statements of the execution stops nothing; the execution
    // checks its signal before each statement, and this repeats the cancel while it still runs.
    for (let i = 0; i < CANCEL_REPEATS && isActive(); i += 1) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, CANCEL_REPEAT_MS));
      if (isActive()) await canceller.query(cancelSql, [pid]);
    }
  } catch {
    // the statement may have finished already, or the server is gone: nothing to cancel
  } finally {
    await canceller.end().catch(() => {});
  }
}
