/**
 * {@link DatabaseConnector} for embedded PostgreSQL (PGlite: PostgreSQL 18 compiled to WASM). The
 * catalog queries, the read-only recipe and the value conversion are the server connector's
 * (`../postgres/`), so both engines answer alike.
 *
 * Differences from a server, by PGlite's design: one connection (statements run one after
 * another), and `statement_timeout` is NOT enforced — a runaway query runs until it ends.
 * `SET TRANSACTION READ ONLY` is enforced, so writes are still refused (SQLSTATE 25006).
 *
 * A data directory is shared by every local process (`sharing.ts`): the first to use it
 * opens it and serves it on a Unix socket; while it runs, others (an `ask` beside a `chat` on the
 * same database) reach it through that socket with the server connector, so they never open a
 * second PGlite on the same files (which could corrupt them) and start without loading PGlite.
 */
import { resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../../core/errors.js';
import type { DatabaseConnector, ExecuteOptions, IntrospectOptions, QueryResult } from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import { queryError, unreachableError } from '../postgres/errors.js';
import {
  beginForced,
  executeReadOnly,
  PARSING_SETTINGS,
  type RawResult,
  type ReadOnlySession,
} from '../postgres/execute.js';
import { introspectCatalog } from '../postgres/introspect.js';
import { TypeNameCache } from '../postgres/type-names.js';
import { MAX_DECODED_ROW_BYTES } from '../postgres/wire-gate.js';
import { queryRawStreamed } from './raw-stream.js';
import { acquireSharedPglite, brokenConnection, openPglite, sharedAccess } from './sharing.js';

/** Options of {@link createPgliteConnector}. */
export interface PgliteConnectorOptions {
  /**
   * Data directory, shared with other local processes (module comment); default (undefined): a
   * fresh in-memory database. Ignored when `pglite` is given.
   */
  dataDir?: string;
  /** An instance owned by the caller; {@link DatabaseConnector.close} then leaves it open. */
  pglite?: PGlite;
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
  /**
   * Longest wait for a data directory another process holds but does not serve (its socket does
   * not answer); default `SHARED_PGLITE_WAIT_MS` (30 s, `sharing.ts`).
   */
  waitMs?: number;
}

/** Runs `fn` with the instance: directly, or inside the gate it shares with socket clients. */
type Run = <T>(fn: (db: PGlite) => Promise<T>) => Promise<T>;

/** The connector on an instance this process holds (private, or owned and shared). */
function instanceConnector(
  displayName: string,
  run: Run,
  schemas: string[] | undefined,
  close: () => Promise<void>,
) {
  const types = new TypeNameCache();
  const connector: DatabaseConnector = {
    dialect: 'postgres',
    displayName,

    async ping(): Promise<void> {
      try {
        await run((db) => db.query('SELECT 1'));
      } catch (error) {
        throw unreachableError(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      try {
        return await run((db) =>
          db.transaction(async (tx) => {
            await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
            const schema = await introspectCatalog(tx, { schemas: introspectOptions.schemas ?? schemas });
            await tx.rollback();
            return schema;
          }),
        );
      } catch (error) {
        throw queryError(error, { displayName });
      }
    },

    /**
     * Runs one guarded statement read-only. `timeoutMs` is NOT enforced (PGlite ignores
     * `statement_timeout`), and `signal` cannot stop a running statement.
     * TODO: honour `signal` between statements once PGlite offers a way to interrupt one.
     */
    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      if (executeOptions.signal?.aborted) throw queryError({ code: '57014' }, { displayName, aborted: true });
      try {
        return await run(async (db) =>
          db.transaction((tx) => {
            const session: ReadOnlySession = {
              query: (text, params) => tx.query(text, params),
              begin: async (settings) => {
                await tx.exec(['SET TRANSACTION READ ONLY', ...settings].join('; '));
              },
              // Protocol bytes through the wire gate: a row past the budget is never decoded.
              queryRaw: (text, limitBytes = MAX_DECODED_ROW_BYTES, params): Promise<RawResult> =>
                queryRawStreamed(db, text, limitBytes, params),
              rollback: () => tx.rollback(),
            };
            return executeReadOnly(session, sql, executeOptions, types, false);
          }),
        );
      } catch (error) {
        throw queryError(error, { displayName, timeoutMs: executeOptions.timeoutMs });
      }
    },

    async probe(statements, probeOptions): Promise<Record<string, string | null>[]> {
      try {
        return await run((db) =>
          db.transaction(async (tx) => {
            await beginForced({ begin: (settings) => tx.exec(settings.join('; ')).then(() => {}) }, [
              ...PARSING_SETTINGS,
            ]);
            let rows: Record<string, string | null>[] = [];
            for (const text of statements) {
              // tx.query: extended protocol, exactly one statement per message.
              const result = await tx.query<Record<string, unknown>>(text);
              rows = result.rows.map((row) =>
                Object.fromEntries(
                  Object.entries(row).map(([key, value]) => [
                    key,
                    value === null || value === undefined ? null : String(value),
                  ]),
                ),
              );
            }
            await tx.rollback();
            return rows;
          }),
        );
      } catch (error) {
        throw queryError(error, { displayName, timeoutMs: probeOptions.timeoutMs });
      }
    },

    close,
  };
  return connector;
}

/**
 * Creates a connector on an embedded database. Nothing starts until the first call. With a
 * `dataDir`, the first call either opens it (≈1–3 s, a 16MB buffer pool, `start-params.ts`) and
 * serves it to other local processes, or — while another process holds it — connects to that
 * process's socket (`sharing.ts`); when that process exits, the next call takes over. Without
 * one, a private in-memory instance; with `pglite`, the caller's instance (left open by `close`).
 * @throws SqlrecallError `db_unreachable` from the first call when the database cannot be opened,
 *   or stays held by a process that does not answer on its socket for 30 s
 */
export function createPgliteConnector(options: PgliteConnectorOptions = {}): DatabaseConnector {
  if (options.pglite === undefined && options.dataDir !== undefined)
    return sharedConnector(resolve(options.dataDir), options.schemas, options.waitMs);
  const given = options.pglite;
  const displayName = given ? `pglite:${given.dataDir ?? 'memory:'}` : 'pglite:memory:';
  let started: Promise<PGlite> | undefined;
  const db = (): Promise<PGlite> => {
    started ??= given ? given.waitReady.then(() => given) : openPglite(undefined, false);
    return started.catch((error: unknown) => {
      started = undefined;
      throw unreachableError(displayName, error);
    });
  };
  return instanceConnector(
    displayName,
    async (fn) => fn(await db()),
    options.schemas,
    async () => {
      if (given || !started) return;
      const instance = await started.catch(() => undefined);
      started = undefined;
      if (instance && !instance.closed) await instance.close();
    },
  );
}

type Mode = { connector: DatabaseConnector; owner: boolean };

/**
 * Calls a socket client lets wait for its pool (3 connections): the server connector's 16
 * (`POOL_QUEUE_MAX`) suits a server with a backend per connection; here the owner runs one
 * statement at a time whatever the pool (its gate queues without a bound), and a `serve` beside a
 * `chat` owning the shop got `db_busy` from its 20th concurrent statement.
 */
const SOCKET_QUEUE_MAX = 1024;

/**
 * True for a failure of the connection to another process's socket (its owner went away), while
 * connecting or mid-statement: a statement here is read-only (and an analysis is rolled back), so
 * running it again on the next owner repeats nothing.
 */
function ownerGone(error: unknown): boolean {
  return (
    error instanceof SqlrecallError &&
    (error.code === 'db_unreachable' || error.code === 'db_query') &&
    brokenConnection(error.cause)
  );
}

/** The connector on a data directory shared between processes (see the module comment). */
function sharedConnector(
  dir: string,
  schemas: string[] | undefined,
  waitMs: number | undefined,
): DatabaseConnector {
  const displayName = `pglite:${dir}`;

  const resolveMode = async (): Promise<Mode> => {
    const shared = await acquireSharedPglite(dir, {
      waitMs,
      connect: async (runDir) => {
        // Loaded only here: an owner never needs `pg` (≈0.1–0.2 s of start).
        const { createPostgresConnector } = await import('../postgres/connector.js');
        const connector = createPostgresConnector({
          url: 'postgres://postgres@localhost/postgres',
          socketDir: runDir,
          displayName,
          schemas,
          cancel: false,
          queueMax: SOCKET_QUEUE_MAX,
        });
        try {
          await connector.ping();
          return connector;
        } catch (error) {
          await connector.close().catch(() => undefined);
          // The socket is not there (yet) or refused: unwrap, so the wait-and-retry recognizes it.
          throw ownerGone(error) ? (error as SqlrecallError).cause : error;
        }
      },
      unavailable: (pid, cause) =>
        new SqlrecallError(
          'db_unreachable',
          `The database ${displayName} is held by ${pid > 0 ? `process ${pid}` : 'another process'} but does not answer on its socket; wait for it or stop that process.`,
          { cause, details: { url: displayName, retryable: true } },
        ),
    });
    if (shared.kind === 'client') return { connector: shared.client, owner: false };
    const run: Run = (fn) => shared.gate.run(() => fn(shared.db));
    return { connector: instanceConnector(displayName, run, schemas, shared.release), owner: true };
  };

  const access = sharedAccess<Mode>({
    resolve: resolveMode,
    error: (cause) => (cause instanceof SqlrecallError ? cause : unreachableError(displayName, cause)),
    isClient: (m) => !m.owner,
    ownerGone,
    dropClient: (m) => m.connector.close(),
  });
  const withMode = <T>(fn: (connector: DatabaseConnector) => Promise<T>): Promise<T> =>
    access.run((m) => fn(m.connector));

  return {
    dialect: 'postgres',
    displayName,
    ping: () => withMode((c) => c.ping()),
    introspect: (introspectOptions) => withMode((c) => c.introspect(introspectOptions)),
    execute: (sql, executeOptions) => withMode((c) => c.execute(sql, executeOptions)),
    probe: (statements, probeOptions) =>
      withMode((c) => {
        if (!c.probe) throw new SqlrecallError('db_query', 'This connection cannot analyse statements.');
        return c.probe(statements, probeOptions);
      }),
    async close(): Promise<void> {
      await (await access.detach())?.connector.close();
    },
  };
}
