/**
 * {@link DatabaseConnector} for a PostgreSQL server through `pg` (node-postgres). A small pool;
 * the model's SQL always goes over the extended query protocol (one statement per round trip).
 */
import pg from 'pg';
import { SqlrecallError } from '../../core/errors.js';
import type { DatabaseConnector, ExecuteOptions, IntrospectOptions, QueryResult } from '../../core/ports.js';
import { maskUrl } from '../../core/redact.js';
import type { Schema } from '../../core/schema.js';
import { queryError, unreachableError } from './errors.js';
import { executeReadOnly, type RawResult, type ReadOnlySession } from './execute.js';
import { introspectCatalog } from './introspect.js';
import { TypeNameCache } from './type-names.js';

/** Options of {@link createPostgresConnector}. */
export interface PostgresConnectorOptions {
  /** `postgres://user:password@host:port/database?sslmode=…` */
  url: string;
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
  /** `application_name` shown in `pg_stat_activity`; default `sqlrecall`. */
  applicationName?: string;
}

/** Pool size: one statement at a time per question, plus a spare for introspection. */
const POOL_MAX = 3;
/** Connection attempts give up after this many milliseconds (then `db_unreachable`). */
const CONNECT_TIMEOUT_MS = 5_000;

/**
 * Extra time after `timeoutMs` before the client cancels the backend itself (the server's
 * statement_timeout normally fires first; this covers the whole BEGIN…FETCH round trip).
 */
const WATCHDOG_GRACE_MS = 500;

/** Returns every value as the server's text; conversion happens in `values.ts`. */
const RAW_TYPES: pg.CustomTypesConfig = {
  getTypeParser: (() => (value: string) => value) as unknown as pg.CustomTypesConfig['getTypeParser'],
};

/** pg's QueryConfig plus `queryMode`, which @types/pg 8.15 does not declare (pg lib/query.js does). */
type ExtendedQueryConfig = pg.QueryArrayConfig & { queryMode: 'extended' };

/**
 * Creates a connector; connects lazily (the first call opens the pool's first connection).
 * @throws SqlrecallError `config` when `url` is not a postgres:// URL
 */
export function createPostgresConnector(options: PostgresConnectorOptions): DatabaseConnector {
  if (!/^postgres(ql)?:\/\//i.test(options.url)) {
    throw new SqlrecallError('config', `Not a PostgreSQL URL: "${maskUrl(options.url)}".`);
  }
  const displayName = maskUrl(options.url);
  const pool = new pg.Pool({
    connectionString: options.url,
    max: POOL_MAX,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    idleTimeoutMillis: 10_000,
    application_name: options.applicationName ?? 'sqlrecall',
  });
  // An idle client losing its connection emits 'error' on the pool; without a listener Node exits.
  pool.on('error', () => {});
  const types = new TypeNameCache();

  const connect = async (): Promise<pg.PoolClient> => {
    try {
      return await pool.connect();
    } catch (error) {
      throw unreachableError(displayName, error);
    }
  };

  return {
    dialect: 'postgres',
    displayName,

    async ping(): Promise<void> {
      const client = await connect();
      try {
        await client.query('SELECT 1');
        client.release();
      } catch (error) {
        client.release(true);
        throw unreachableError(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      const client = await connect();
      let broken = false;
      try {
        await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY');
        const schema = await introspectCatalog(client, {
          schemas: introspectOptions.schemas ?? options.schemas,
        });
        await client.query('ROLLBACK');
        return schema;
      } catch (error) {
        broken = await client.query('ROLLBACK').then(
          () => false,
          () => true,
        );
        throw queryError(error, { displayName });
      } finally {
        client.release(broken);
      }
    },

    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      const { signal } = executeOptions;
      if (signal?.aborted) throw queryError({ code: '57014' }, { displayName, aborted: true });
      const client = await connect();
      let broken = false;
      const session: ReadOnlySession = {
        query: (text, params) => client.query(text, params),
        begin: async (settings) => {
          await client.query(['BEGIN TRANSACTION READ ONLY', ...settings].join('; '));
        },
        queryRaw: async (text): Promise<RawResult> => {
          const config: ExtendedQueryConfig = {
            text,
            rowMode: 'array',
            types: RAW_TYPES,
            queryMode: 'extended',
          };
          const result = await client.query<(string | null)[]>(config);
          return {
            fields: result.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
            rows: result.rows,
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
      };
      let active = true;
      let timedOut = false;
      const onAbort = (): void => {
        void cancelBackend(options.url, client, () => active);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      // statement_timeout cancels on the server; this watchdog covers the whole round trip
      // (BEGIN, DECLARE, FETCH) and a server that does not honour it, then cancels the backend.
      const watchdog = setTimeout(() => {
        timedOut = true;
        void cancelBackend(options.url, client, () => active);
      }, executeOptions.timeoutMs + WATCHDOG_GRACE_MS);
      try {
        return await executeReadOnly(session, sql, executeOptions, types, true);
      } catch (error) {
        throw queryError(error, {
          displayName,
          timeoutMs: executeOptions.timeoutMs,
          aborted: signal?.aborted && !timedOut,
        });
      } finally {
        active = false;
        clearTimeout(watchdog);
        signal?.removeEventListener('abort', onAbort);
        client.release(broken);
      }
    },

    async close(): Promise<void> {
      await pool.end();
    },
  };
}

/**
 * Cancels the statement running on `client` (`pg_cancel_backend` from a separate, short-lived
 * connection, so a full pool cannot block the cancellation). Best effort: failures are ignored.
 * `isActive` is checked just before cancelling, so a client already back in the pool (and maybe
 * running someone else's statement) is left alone; a tiny race window remains.
 */
async function cancelBackend(url: string, client: pg.PoolClient, isActive: () => boolean): Promise<void> {
  const pid = (client as unknown as { processID?: number | null }).processID;
  if (!pid) return;
  const canceller = new pg.Client({ connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS });
  try {
    await canceller.connect();
    if (isActive()) await canceller.query('SELECT pg_cancel_backend($1)', [pid]);
  } catch {
    // the statement may have finished already, or the server is gone: nothing to cancel
  } finally {
    await canceller.end().catch(() => {});
  }
}
