/**
 * Maps mysql2 and socket errors to {@link SqlrecallError}s. Server errors carry a MySQL error
 * number (`errno`) and a SQLSTATE (`sqlState`); the numbers used here are the same on MySQL and
 * MariaDB unless noted.
 */
import { SqlrecallError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';

/** Fields of a mysql2 error (a server error, a protocol error or Node's SystemError). */
interface MysqlErrorFields {
  code?: unknown;
  errno?: unknown;
  sqlState?: unknown;
  sqlMessage?: unknown;
  message?: unknown;
  fatal?: unknown;
  errors?: unknown;
}

/** MySQL error numbers this module decides on. */
export const MYSQL_ERRNO = {
  /** ER_CON_COUNT_ERROR: too many connections. */
  tooManyConnections: 1040,
  /** ER_DBACCESS_DENIED_ERROR. */
  dbAccessDenied: 1044,
  /** ER_ACCESS_DENIED_ERROR: bad user or password. */
  accessDenied: 1045,
  /** ER_BAD_DB_ERROR: unknown database. */
  badDb: 1049,
  /** ER_QUERY_INTERRUPTED: KILL QUERY (our cancellation, or the watchdog). */
  queryInterrupted: 1317,
  /** ER_STATEMENT_TIMEOUT (MariaDB): max_statement_time exceeded. */
  mariadbStatementTimeout: 1969,
  /** ER_QUERY_TIMEOUT (MySQL 5.7+): max_execution_time exceeded. */
  mysqlQueryTimeout: 3024,
  /** ER_CANT_EXECUTE_IN_READ_ONLY_TRANSACTION. */
  readOnlyTransaction: 1792,
} as const;

function fieldsOf(error: unknown): MysqlErrorFields {
  return (typeof error === 'object' && error !== null ? error : {}) as MysqlErrorFields;
}

/** The server's error number, or undefined for a client-side or socket error. */
export function errnoOf(error: unknown): number | undefined {
  const { errno, sqlState } = fieldsOf(error);
  // Node's SystemError has a (negative) errno too; only server errors carry a SQLSTATE.
  return typeof errno === 'number' && typeof sqlState === 'string' ? errno : undefined;
}

function sqlStateOf(error: unknown): string | undefined {
  const { sqlState } = fieldsOf(error);
  return typeof sqlState === 'string' && /^[0-9A-Z]{5}$/.test(sqlState) ? sqlState : undefined;
}

function messageOf(error: unknown): string {
  const fields = fieldsOf(error);
  if (typeof fields.sqlMessage === 'string' && fields.sqlMessage !== '') return fields.sqlMessage;
  if (typeof fields.message === 'string' && fields.message !== '') return fields.message;
  if (Array.isArray(fields.errors) && fields.errors.length > 0) return messageOf(fields.errors[0]);
  return String(error);
}

function nodeCodeOf(error: unknown): string | undefined {
  const fields = fieldsOf(error);
  if (errnoOf(error) !== undefined) return undefined;
  if (typeof fields.code === 'string') return fields.code;
  if (Array.isArray(fields.errors) && fields.errors.length > 0) return nodeCodeOf(fields.errors[0]);
  return undefined;
}

/** True when the server cannot be reached, refused the login, or the connection broke. */
export function isMysqlConnectionError(error: unknown): boolean {
  const errno = errnoOf(error);
  if (errno !== undefined)
    return (
      errno === MYSQL_ERRNO.tooManyConnections ||
      errno === MYSQL_ERRNO.accessDenied ||
      errno === MYSQL_ERRNO.dbAccessDenied ||
      errno === MYSQL_ERRNO.badDb
    );
  if (fieldsOf(error).fatal === true) return true;
  return nodeCodeOf(error) !== undefined;
}

function connectionReason(error: unknown): string {
  switch (nodeCodeOf(error)) {
    case 'ECONNREFUSED':
      return 'connection refused. Is MySQL/MariaDB running?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name could not be resolved';
    case 'ETIMEDOUT':
      return 'the server did not answer in time';
    case 'ECONNRESET':
    case 'EPIPE':
    case 'PROTOCOL_CONNECTION_LOST':
      return 'the connection was closed by the server';
    default:
      return redactSecrets(messageOf(error)).replace(/\.$/, '');
  }
}

/** `db_unreachable` naming the (masked) target and the reason. */
export function mysqlUnreachableError(displayName: string, error: unknown): SqlrecallError {
  const reason = connectionReason(error);
  const state = sqlStateOf(error);
  return new SqlrecallError(
    'db_unreachable',
    `Cannot connect to ${displayName}: ${/[.?!]$/.test(reason) ? reason : `${reason}.`}`,
    { cause: error, details: { url: displayName, retryable: true, ...(state ? { sqlState: state } : {}) } },
  );
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * Maps an error of a running statement: the time limit (MariaDB 1969, MySQL 3024, or our own
 * watchdog's KILL QUERY) → `db_timeout`; the caller's cancellation → `db_query` with `cancelled`;
 * connection failures → `db_unreachable`; anything else → `db_query` with the server's message,
 * `(SQLSTATE xxxxx)` and `details.sqlState`.
 */
export function mysqlQueryError(
  error: unknown,
  context: { displayName: string; timeoutMs?: number; aborted?: boolean; timedOut?: boolean },
): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const errno = errnoOf(error);
  const state = sqlStateOf(error);
  if (errno === MYSQL_ERRNO.queryInterrupted && context.aborted && !context.timedOut)
    return new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
      cause: error,
      details: { ...(state ? { sqlState: state } : {}), cancelled: true },
    });
  if (
    errno === MYSQL_ERRNO.mariadbStatementTimeout ||
    errno === MYSQL_ERRNO.mysqlQueryTimeout ||
    (errno === MYSQL_ERRNO.queryInterrupted && context.timedOut)
  ) {
    const limit = context.timeoutMs === undefined ? '' : ` ${formatMs(context.timeoutMs)}`;
    return new SqlrecallError(
      'db_timeout',
      `The query ran longer than the${limit} statement timeout and was cancelled.`,
      { cause: error, details: { ...(state ? { sqlState: state } : {}), retryable: false } },
    );
  }
  if (context.aborted && !context.timedOut && errno === undefined)
    return new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
      cause: error,
      details: { cancelled: true },
    });
  if (isMysqlConnectionError(error)) return mysqlUnreachableError(context.displayName, error);
  const message = redactSecrets(messageOf(error));
  return new SqlrecallError('db_query', state ? `${message} (SQLSTATE ${state})` : message, {
    cause: error,
    details: state ? { sqlState: state } : {},
  });
}
