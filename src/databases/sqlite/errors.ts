/**
 * Maps errors of the SQLite worker (`worker-protocol.ts`) to {@link SqlrecallError}s. SQLite has
 * no SQLSTATE; its two unknown-name errors (`no such table`, `no such column`) carry the standard
 * codes (42P01, 42703) so that the "did you mean" hint of the SQL path works as on the other engines.
 */
import { SqlrecallError } from '../../core/errors.js';
import { guardRefusal } from '../../core/refusal.js';
import { SQLITE_BUSY_TIMEOUT_MS, type SqliteErrorData } from './worker-protocol.js';

/** The error when the optional driver is not installed (or not built for this Node.js). */
export function sqliteDriverMissing(cause?: unknown): SqlrecallError {
  return new SqlrecallError(
    'config',
    'SQLite support needs the better-sqlite3 package: npm install better-sqlite3@12.11.1',
    {
      ...(cause !== undefined ? { cause } : {}),
      details: {
        hint: 'It is an optional dependency: it compiles from source where no prebuilt binary fits.',
      },
    },
  );
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** The statement outlived its time limit: the worker was stopped. */
export function sqliteTimeout(timeoutMs: number): SqlrecallError {
  return new SqlrecallError(
    'db_timeout',
    `The query ran longer than the ${formatMs(timeoutMs)} statement timeout and was cancelled.`,
    { details: { retryable: false } },
  );
}

/** The caller cancelled the statement (before or while it ran). */
export function sqliteCancelled(): SqlrecallError {
  return new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
    details: { cancelled: true },
  });
}

/** The child process holding the connection ended without answering (it crashed or was killed). */
export function sqliteWorkerLost(displayName: string, reason: string): SqlrecallError {
  return new SqlrecallError(
    'db_unreachable',
    `The SQLite database ${displayName} stopped answering: ${reason}.`,
    {
      details: { url: displayName, retryable: true },
    },
  );
}

/** One error reported by the worker. */
export function sqliteError(error: SqliteErrorData, displayName: string): SqlrecallError {
  if (error.refusal === 'not_readonly')
    return guardRefusal('refused: SQLite reports that this statement is not read-only', 'engine-readonly');
  if (error.refusal === 'not_reader')
    return guardRefusal(
      'refused: SQLite reports that this statement returns no rows; only reads run',
      'engine-readonly',
    );
  if (error.refusal === 'not_allowed') return guardRefusal(`refused: ${error.message}`, 'allowlist');
  if (error.wal)
    return new SqlrecallError(
      'db_unreachable',
      `Cannot read the SQLite database ${displayName}: it is in WAL mode, and a reader needs the shared-memory file ${displayName.replace(/^sqlite:/, '')}-shm beside it, which could not be opened or created (${error.message}).`,
      {
        details: {
          url: displayName,
          retryable: false,
          hint: 'Let sqlrecall write to the folder holding the database (it only creates the -shm file), open the database once with the program that writes it, or switch it out of WAL mode (PRAGMA journal_mode = DELETE).',
        },
      },
    );
  if (error.open) {
    if (
      error.code === undefined &&
      /better-sqlite3|bindings|\.node\b|NODE_MODULE_VERSION/i.test(error.message)
    )
      return sqliteDriverMissing(new Error(error.message));
    return new SqlrecallError(
      'db_unreachable',
      `Cannot open the SQLite database ${displayName}: ${error.message}.`,
      {
        details: { url: displayName, retryable: false },
      },
    );
  }
  if (error.code?.startsWith('SQLITE_BUSY') || error.code?.startsWith('SQLITE_LOCKED'))
    return new SqlrecallError(
      'db_busy',
      `The SQLite database ${displayName} is locked by another connection; it stayed locked for the ${SQLITE_BUSY_TIMEOUT_MS / 1000} s sqlrecall waits (${error.message}).`,
      {
        details: {
          retryable: true,
          hint: 'Another program is writing to it: try again when it finishes, or switch the database to WAL mode (PRAGMA journal_mode = WAL) so readers and a writer do not wait for each other.',
        },
      },
    );
  if (error.code === 'SQLITE_NOTADB' || error.code === 'SQLITE_CORRUPT' || error.code === 'SQLITE_CANTOPEN')
    return new SqlrecallError(
      'db_unreachable',
      `The SQLite database ${displayName} cannot be read: ${error.message}.`,
      {
        details: { url: displayName, retryable: false },
      },
    );
  const sqlState = /^no such table\b/i.test(error.message)
    ? '42P01'
    : /^no such column\b/i.test(error.message)
      ? '42703'
      : undefined;
  return new SqlrecallError('db_query', error.message, { details: sqlState ? { sqlState } : {} });
}
