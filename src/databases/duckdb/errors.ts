/**
 * Maps DuckDB errors to {@link SqlrecallError}s. DuckDB reports an error as a message that starts
 * with its kind (`Catalog Error: …`, `Parser Error: …`, `INTERRUPT Error: Interrupted!`); the
 * kind decides the code here.
 */
import { SqlrecallError } from '../../core/errors.js';
import { redactSecrets } from '../../core/redact.js';

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The kind a DuckDB message starts with (`Catalog`, `Parser`, `INTERRUPT`…), or undefined. */
export function duckdbErrorKind(error: unknown): string | undefined {
  return /^([A-Za-z ]+?) Error:/.exec(messageOf(error))?.[1];
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}

/** The error of a statement the caller cancelled. */
export function duckdbCancelled(cause?: unknown): SqlrecallError {
  return new SqlrecallError('db_query', 'The query was cancelled before it finished.', {
    ...(cause === undefined ? {} : { cause }),
    details: { cancelled: true },
  });
}

/**
 * The process holding a DuckDB file's lock, as the engine names it (`Conflicting lock is held in
 * /usr/bin/node (PID 4242)`), or undefined when the message is not about a lock.
 */
export function duckdbLockHolder(message: string): { locked: boolean; pid?: number; program?: string } {
  if (!/Could not set lock|Conflicting lock/i.test(message)) return { locked: false };
  const held = /Conflicting lock is held in (.+?) \(PID (\d+)\)/i.exec(message);
  return held ? { locked: true, pid: Number(held[2]), program: held[1]! } : { locked: true };
}

/**
 * The error of a database that could not be opened: `db_busy` when another process holds the
 * file's lock (naming its pid when the engine says it), `db_unreachable` otherwise (missing, not
 * DuckDB).
 */
export function duckdbOpenError(displayName: string, error: unknown): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const message = redactSecrets(messageOf(error)).replace(/\s+$/, '');
  const holder = duckdbLockHolder(message);
  if (holder.locked) {
    const who =
      holder.pid === undefined
        ? 'another process'
        : `another process (${holder.program ? `${holder.program}, ` : ''}pid ${holder.pid})`;
    return new SqlrecallError(
      'db_busy',
      `Cannot open ${displayName}: ${who} has the DuckDB file open for writing, and DuckDB lets no other process read it meanwhile.`,
      {
        cause: error,
        details: {
          retryable: true,
          ...(holder.pid === undefined ? {} : { pid: holder.pid }),
          hint: 'Close the program that writes it (or let it finish), or query a copy of the file.',
        },
      },
    );
  }
  const locked = /lock/i.test(message);
  return new SqlrecallError('db_unreachable', `Cannot open ${displayName}: ${message}`, {
    cause: error,
    details: {
      retryable: locked,
      hint: locked
        ? 'Another process has the DuckDB file open for writing; close it, or query a copy of the file.'
        : 'Give a DuckDB file (duckdb:PATH), a CSV/TSV/Parquet/JSON file, or a folder of them.',
    },
  });
}

/**
 * Maps an error of a running statement: an interruption by our watchdog → `db_timeout`; by the
 * caller → `db_query` with `cancelled`; a file outside the allowed folder → `db_query` saying
 * so; anything else → `db_query` with DuckDB's message.
 */
export function duckdbQueryError(
  error: unknown,
  context: { timeoutMs?: number; aborted?: boolean; timedOut?: boolean } = {},
): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  const kind = duckdbErrorKind(error);
  if (kind === 'INTERRUPT' || context.timedOut || context.aborted) {
    if (context.timedOut) {
      const limit = context.timeoutMs === undefined ? '' : ` ${formatMs(context.timeoutMs)}`;
      return new SqlrecallError(
        'db_timeout',
        `The query ran longer than the${limit} statement timeout and was cancelled.`,
        { cause: error, details: { retryable: false } },
      );
    }
    if (context.aborted || kind === 'INTERRUPT') return duckdbCancelled(error);
  }
  const message = redactSecrets(messageOf(error)).replace(/\s+$/, '');
  if (kind === 'Permission')
    return new SqlrecallError('db_query', message, {
      cause: error,
      details: {
        hint: 'Only the files of the folder sqlrecall was given are readable, and only as the tables named after them.',
      },
    });
  return new SqlrecallError('db_query', message, { cause: error });
}
