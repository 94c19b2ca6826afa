/**
 * {@link DatabaseConnector} for MySQL and MariaDB through `mysql2`. Read-only twice on the
 * engine's side (a READ ONLY session and a READ ONLY transaction, always rolled back) under the
 * server's own statement time limit (`max_statement_time` on MariaDB, `max_execution_time` on
 * MySQL) and a watchdog that sends `KILL QUERY` from a second connection; the SQL guard for this
 * dialect (`src/sql/mysql/`) is checked before anything reaches here.
 */
import mysql from 'mysql2';
import { SqlrecallError } from '../../core/errors.js';
import {
  type DatabaseConnector,
  DEFAULT_MAX_RESULT_BYTES,
  type ExecuteOptions,
  type IntrospectOptions,
  type QueryResult,
} from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import { mysqlQueryError, mysqlUnreachableError } from './errors.js';
import { introspectMysql } from './introspect.js';
import { type MysqlTarget, parseMysqlUrl } from './url.js';
import { convertMysqlValue, type MysqlField, mysqlTypeName } from './values.js';

/** Options of {@link createMysqlConnector}. */
export interface MysqlConnectorOptions {
  /** `mysql://user:password@host:port/database` or `mariadb://…`. */
  url: string;
  /** Databases to introspect by default; default: the URL's database, else every non-system one. */
  schemas?: string[];
}

/** Pool size: one statement at a time per question, plus a spare for introspection. */
const POOL_MAX = 3;
/** Most calls waiting for a pooled connection; one more gets `db_busy` at once. */
const POOL_QUEUE_MAX = 16;
/** Connection attempts give up after this many milliseconds (then `db_unreachable`). */
const CONNECT_TIMEOUT_MS = 5_000;
/** Extra time after `timeoutMs` before the watchdog sends KILL QUERY itself. */
const WATCHDOG_GRACE_MS = 500;

/**
 * The `sql_mode` of every execution: the modes that change how SQL text is read (`ANSI_QUOTES`,
 * `NO_BACKSLASH_ESCAPES`, `PIPES_AS_CONCAT`) are off, as the guard's parser assumes, so the
 * statement the server runs is the statement that was checked.
 */
export const EXECUTION_SQL_MODE = 'STRICT_TRANS_TABLES,ERROR_FOR_DIVISION_BY_ZERO,NO_ENGINE_SUBSTITUTION';

/** Which engine answers: the time-limit variable and its unit differ. */
type Flavour = 'mariadb' | 'mysql';

type PoolConnection = mysql.PoolConnection;

function run(conn: mysql.Connection | PoolConnection, sql: string, values: unknown[] = []): Promise<unknown> {
  return new Promise((resolve, reject) => {
    conn.query({ sql, values }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/**
 * Creates a connector; connects lazily (the first call opens the pool's first connection).
 * @throws SqlrecallError `config` when `url` is not a MySQL/MariaDB URL
 */
export function createMysqlConnector(options: MysqlConnectorOptions): DatabaseConnector {
  const target = parseMysqlUrl(options.url);
  const { displayName } = target;
  const connectionOptions = connectionConfig(target);
  const pool = mysql.createPool({
    ...connectionOptions,
    connectionLimit: POOL_MAX,
    queueLimit: POOL_QUEUE_MAX,
    waitForConnections: true,
    maxIdle: POOL_MAX,
    idleTimeout: 10_000,
  });
  // A pooled connection that breaks while idle emits 'error'; without a listener Node exits.
  pool.on('connection', (conn) => conn.on('error', () => {}));
  let flavour: Promise<Flavour> | undefined;

  const connect = (): Promise<PoolConnection> =>
    new Promise((resolve, reject) => {
      pool.getConnection((error, conn) => {
        if (!error) return resolve(conn);
        if (/queue limit/i.test(error.message))
          return reject(
            new SqlrecallError('db_busy', 'The database connection pool is busy.', {
              details: { retryable: true, hint: 'Try again when the running queries finish.' },
            }),
          );
        reject(mysqlUnreachableError(displayName, error));
      });
    });

  const flavourOf = (conn: PoolConnection): Promise<Flavour> => {
    flavour ??= run(conn, 'SELECT VERSION() AS v').then(
      (rows) => (/mariadb/i.test(String((rows as { v: unknown }[])[0]?.v)) ? 'mariadb' : 'mysql'),
      (error) => {
        flavour = undefined;
        throw error;
      },
    );
    return flavour;
  };

  /** KILL QUERY (or the whole connection) from a short-lived second connection; best effort. */
  const kill = async (threadId: number | null, what: 'QUERY' | 'CONNECTION'): Promise<void> => {
    if (!threadId) return;
    const killer = mysql.createConnection(connectionOptions);
    killer.on('error', () => {});
    try {
      await run(killer, `KILL ${what} ${Number(threadId)}`);
    } catch {
      // the statement may have finished already, or the server is gone: nothing to stop
    } finally {
      killer.destroy();
    }
  };

  return {
    dialect: 'mysql',
    displayName,

    async ping(): Promise<void> {
      const conn = await connect();
      try {
        await run(conn, 'SELECT 1');
        conn.release();
      } catch (error) {
        conn.destroy();
        throw mysqlUnreachableError(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      const conn = await connect();
      try {
        // An empty list means "the default", as on PostgreSQL: the URL's database, else all of them.
        const given = introspectOptions.schemas?.length ? introspectOptions.schemas : options.schemas;
        const schemas = given?.length ? given : target.database ? [target.database] : undefined;
        const schema = await introspectMysql(
          (sql, params) => run(conn, sql, params) as Promise<Record<string, unknown>[]>,
          schemas ? { schemas } : {},
        );
        conn.release();
        return schema;
      } catch (error) {
        conn.destroy();
        throw mysqlQueryError(error, { displayName });
      }
    },

    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      const { signal } = executeOptions;
      const cancelled = () =>
        new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
          details: { cancelled: true },
        });
      if (signal?.aborted) throw cancelled();
      const conn = await connect();
      const threadId = conn.threadId;
      let timedOut = false;
      let finished = false;
      const onAbort = (): void => {
        if (!finished) void kill(threadId, 'QUERY');
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      const watchdog = setTimeout(() => {
        timedOut = true;
        if (!finished) void kill(threadId, 'QUERY');
      }, executeOptions.timeoutMs + WATCHDOG_GRACE_MS);
      let broken = false;
      try {
        const engine = await flavourOf(conn);
        await beginReadOnly(conn, engine, executeOptions.timeoutMs);
        if (signal?.aborted) throw cancelled();
        const started = performance.now();
        const gathered = await streamRows(conn, sql, executeOptions);
        if (gathered.stopped) {
          // Rows past the cap or the budget are still coming: the connection is dropped (the
          // server rolls the transaction back) and the statement killed, rather than read to its end.
          broken = true;
          void kill(threadId, 'CONNECTION');
        } else {
          await run(conn, 'ROLLBACK');
        }
        return toResult(gathered, executeOptions, performance.now() - started);
      } catch (error) {
        if (!broken)
          broken = await run(conn, 'ROLLBACK').then(
            () => false,
            () => true,
          );
        if (signal?.aborted && !timedOut && !(error instanceof SqlrecallError)) throw cancelled();
        throw mysqlQueryError(error, {
          displayName,
          timeoutMs: executeOptions.timeoutMs,
          aborted: signal?.aborted ?? false,
          timedOut,
        });
      } finally {
        finished = true;
        clearTimeout(watchdog);
        signal?.removeEventListener('abort', onAbort);
        if (broken) conn.destroy();
        else conn.release();
      }
    },

    async close(): Promise<void> {
      await new Promise<void>((resolve) => pool.end(() => resolve()));
    },
  };
}

/** mysql2 options of a target: raw values, one statement per call, no client files. */
function connectionConfig(target: MysqlTarget): mysql.ConnectionOptions {
  return {
    ...(target.socketPath ? { socketPath: target.socketPath } : { host: target.host, port: target.port }),
    user: target.user,
    ...(target.password !== undefined ? { password: target.password } : {}),
    ...(target.database !== undefined ? { database: target.database } : {}),
    ...(target.ssl ? { ssl: { rejectUnauthorized: true } } : {}),
    charset: 'UTF8MB4_UNICODE_CI',
    connectTimeout: CONNECT_TIMEOUT_MS,
    // One statement per call, whatever the text holds: the server refuses `a; b`.
    multipleStatements: false,
    // The server may ask the client for a local file (LOAD DATA LOCAL): never answered.
    flags: ['-LOCAL_FILES'],
    dateStrings: true,
    supportBigNumbers: true,
    bigNumberStrings: true,
    decimalNumbers: false,
  };
}

/**
 * Starts the READ ONLY transaction: the session's own settings first (sql_mode as the guard reads
 * SQL, UTC for TIMESTAMP values, the server-side time limit), then `SET SESSION TRANSACTION READ
 * ONLY` and `START TRANSACTION READ ONLY`.
 */
async function beginReadOnly(conn: PoolConnection, engine: Flavour, timeoutMs: number): Promise<void> {
  const ms = Math.max(1, Math.round(timeoutMs));
  const limit =
    engine === 'mariadb' ? `max_statement_time = ${(ms / 1000).toFixed(3)}` : `max_execution_time = ${ms}`;
  await run(conn, `SET SESSION sql_mode = '${EXECUTION_SQL_MODE}', time_zone = '+00:00', ${limit}`);
  await run(conn, 'SET SESSION TRANSACTION READ ONLY');
  await run(conn, 'START TRANSACTION READ ONLY');
}

/** Rows as the server sent them, under the cap and the budget. */
interface Gathered {
  fields: MysqlField[];
  rows: (Buffer | null)[][];
  truncatedReason?: 'max_rows' | 'max_bytes';
  /** Bytes of the first row that did not fit the budget, when it was the first row. */
  firstRowBytes?: number;
  /** True when reading stopped before the server's last row (the connection must be dropped). */
  stopped: boolean;
}

/** Streams the statement's rows, stopping at `maxRows` (+1 to detect truncation) or the byte budget. */
function streamRows(conn: PoolConnection, sql: string, options: ExecuteOptions): Promise<Gathered> {
  const maxRows = Math.max(0, Math.floor(options.maxRows));
  const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES));
  return new Promise((resolve, reject) => {
    const gathered: Gathered = { fields: [], rows: [], stopped: false };
    let bytes = 0;
    let settled = false;
    const stop = (reason: 'max_rows' | 'max_bytes'): void => {
      settled = true;
      gathered.truncatedReason = reason;
      gathered.stopped = true;
      conn.pause();
      resolve(gathered);
    };
    const query = conn.query({ sql, rowsAsArray: true, typeCast: false });
    query.on('fields', (fields: MysqlField[] | undefined) => {
      if (!settled && fields) gathered.fields = fields;
    });
    query.on('result', (row: unknown) => {
      if (settled || !Array.isArray(row)) return;
      if (gathered.rows.length === maxRows) return stop('max_rows');
      let size = 0;
      for (const value of row as (Buffer | null)[]) if (value) size += value.length;
      if (bytes + size > maxBytes) {
        if (gathered.rows.length === 0) gathered.firstRowBytes = size;
        return stop('max_bytes');
      }
      bytes += size;
      gathered.rows.push(row as (Buffer | null)[]);
    });
    query.on('error', (error: unknown) => {
      if (settled) return;
      settled = true;
      reject(error);
    });
    query.on('end', () => {
      if (settled) return;
      settled = true;
      resolve(gathered);
    });
  });
}

function toResult(gathered: Gathered, options: ExecuteOptions, durationMs: number): QueryResult {
  const { fields, rows, truncatedReason } = gathered;
  if (truncatedReason === 'max_bytes' && rows.length === 0) {
    const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES));
    throw new SqlrecallError(
      'result_too_large',
      `The first row alone (${gathered.firstRowBytes ?? '?'} bytes) is larger than the result budget of ${maxBytes} bytes; it was not kept.`,
      {
        details: {
          maxBytes,
          hint: 'Select fewer or shorter columns (e.g. LEFT(col, 1000)), or raise --max-result-bytes.',
        },
      },
    );
  }
  return {
    columns: fields.map((field) => ({ name: field.name, type: mysqlTypeName(field) })),
    rows: rows.map((row) => row.map((value, i) => convertMysqlValue(value, fields[i]!))),
    rowCount: rows.length,
    truncated: truncatedReason !== undefined,
    ...(truncatedReason !== undefined ? { truncatedReason } : {}),
    durationMs: Math.round(durationMs * 100) / 100,
  };
}
