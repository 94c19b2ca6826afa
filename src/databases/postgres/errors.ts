/**
 * Maps driver errors (pg, PGlite, Node sockets) to {@link SqlrecallError}s. Shared by both
 * connectors; SQLSTATE codes from PostgreSQL's errcodes.txt.
 */
import { SqlrecallError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';
import { ROW_LIMIT_ROUTINE } from './wire-gate.js';

/** Fields a driver error may carry (pg's DatabaseError, PGlite's DatabaseError, Node's SystemError). */
interface DriverErrorFields {
  code?: unknown;
  message?: unknown;
  errors?: unknown;
}

/** SQLSTATE (5 characters) of a database error, or undefined for anything else. */
export function sqlStateOf(error: unknown): string | undefined {
  const code = (error as DriverErrorFields | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

function messageOf(error: unknown): string {
  const fields = error as DriverErrorFields | null;
  if (typeof fields?.message === 'string' && fields.message.length > 0) return fields.message;
  // Node's AggregateError (IPv4 + IPv6 attempts) has an empty message: use the first inner one.
  if (Array.isArray(fields?.errors) && fields.errors.length > 0) return messageOf(fields.errors[0]);
  return String(error);
}

function nodeCodeOf(error: unknown): string | undefined {
  const fields = error as DriverErrorFields | null;
  if (typeof fields?.code === 'string' && !sqlStateOf(error)) return fields.code;
  if (Array.isArray(fields?.errors) && fields.errors.length > 0) return nodeCodeOf(fields.errors[0]);
  return undefined;
}

/** SQLSTATE classes and codes that mean "the connection itself is gone or refused". */
function isConnectionSqlState(state: string): boolean {
  return (
    state.startsWith('08') || // connection_exception
    state.startsWith('28') || // invalid_authorization_specification (bad password)
    state === '3D000' || // invalid_catalog_name (database does not exist)
    state === '53300' || // too_many_connections
    state === '57P01' || // admin_shutdown
    state === '57P02' || // crash_shutdown
    state === '57P03' // cannot_connect_now
  );
}

/** True when `error` says the server cannot be reached or the connection broke. */
export function isConnectionError(error: unknown): boolean {
  const state = sqlStateOf(error);
  if (state) return isConnectionSqlState(state);
  if (nodeCodeOf(error)) return true; // ECONNREFUSED, ENOTFOUND, ECONNRESET, ETIMEDOUT, EPIPE…
  const message = messageOf(error);
  return /connection terminated|connection timeout|timeout expired|not queryable|Connection refused|password must be a string/i.test(
    message,
  );
}

/**
 * True when a connection attempt failed before any statement was sent on it and a new attempt may
 * succeed: refused or reset by the peer (`ECONNREFUSED`, `ECONNRESET`), or a server that is
 * starting or restarting (SQLSTATE 57P03 cannot_connect_now, 57P01 admin_shutdown). Timeouts, DNS
 * failures, a bad password or a missing database are not: repeating them only makes the user wait.
 * Looks through a {@link SqlrecallError} to its `cause`.
 */
export function isRefusedOrReset(error: unknown): boolean {
  const raw = error instanceof SqlrecallError && error.cause !== undefined ? error.cause : error;
  const state = sqlStateOf(raw);
  if (state) return state === '57P03' || state === '57P01';
  const code = nodeCodeOf(raw);
  return code === 'ECONNREFUSED' || code === 'ECONNRESET';
}

/** Short human reason for a connection failure, e.g. `connection refused. Is PostgreSQL running?` */
export function connectionReason(error: unknown): string {
  switch (nodeCodeOf(error)) {
    case 'ECONNREFUSED':
      return 'connection refused. Is PostgreSQL running?';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'the host name could not be resolved';
    case 'ETIMEDOUT':
      return 'the server did not answer in time';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'the connection was reset by the server';
    default:
      break;
  }
  const message = messageOf(error);
  // The driver's words when the server asks for a password and none was given (SCRAM or md5/cleartext).
  if (/client password must be a string|password must be a string/i.test(message))
    return 'the server asks for a password and none was given. Set PGPASSWORD, or put it in the URL as user:password@host';
  if (/timeout/i.test(message)) return 'the server did not answer within 5 s';
  return redactSecrets(message).replace(/\.$/, '');
}

/**
 * `db_unreachable` error naming the (masked) target and the reason.
 * @param displayName the connection target, already masked
 */
export function unreachableError(displayName: string, error: unknown): SqlrecallError {
  const state = sqlStateOf(error);
  const reason = connectionReason(error);
  const sentence = /[.?!]$/.test(reason) ? reason : `${reason}.`;
  return new SqlrecallError('db_unreachable', `Cannot connect to ${displayName}: ${sentence}`, {
    cause: error,
    details: { url: displayName, retryable: true, ...(state ? { sqlState: state } : {}) },
  });
}

/** Formats a duration for messages: `300 ms`, `30 s`, `1.5 s`. */
function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/**
 * Maps an error thrown while running a statement.
 * - 57014 (query_canceled) → `db_timeout` (or `db_query` "cancelled" when the caller aborted)
 * - connection failures → `db_unreachable`
 * - a row the driver refused to decode (`wire-gate.ts`, SQLSTATE 54000) → `result_too_large`
 * - anything else → `db_query` with `"<server message> (SQLSTATE xxxxx)"` and `details.sqlState`
 */
export function queryError(
  error: unknown,
  context: { displayName: string; timeoutMs?: number; aborted?: boolean },
): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const state = sqlStateOf(error);
  if (state === '57014') {
    if (context.aborted) {
      return new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
        cause: error,
        details: { sqlState: state, cancelled: true },
      });
    }
    const limit = context.timeoutMs === undefined ? '' : ` ${formatMs(context.timeoutMs)}`;
    return new SqlrecallError(
      'db_timeout',
      `The query ran longer than the${limit} statement timeout and was cancelled.`,
      { cause: error, details: { sqlState: state, retryable: false } },
    );
  }
  if (isConnectionError(error)) return unreachableError(context.displayName, error);
  if (state === '54000' && (error as { routine?: unknown }).routine === ROW_LIMIT_ROUTINE) {
    return new SqlrecallError('result_too_large', `${messageOf(error)}.`, {
      cause: error,
      details: { hint: 'Select fewer or shorter columns (e.g. left(col, 1000)).' },
    });
  }
  const message = redactSecrets(messageOf(error));
  return new SqlrecallError('db_query', state ? `${message} (SQLSTATE ${state})` : message, {
    cause: error,
    details: state ? { sqlState: state } : {},
  });
}
