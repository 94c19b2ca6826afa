/**
 * The messages between a SQLite connector (`connector.ts`) and its child process
 * (`sqlite-worker.ts`, which holds the better-sqlite3 connection). better-sqlite3 runs a statement
 * synchronously and has no interrupt, so it runs in the child: the connector's event loop stays
 * free, and a statement that outlives its time limit or is cancelled is stopped by killing the child.
 */
import type { CellValue } from '../../core/ports.js';

/**
 * How long a statement waits for another connection's lock (a writer in rollback-journal mode, a
 * checkpoint) before it fails with SQLITE_BUSY, which the connector reports as `db_busy`.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 3_000;

/** What the worker is asked to do. */
export type SqliteRequest =
  | { op: 'ping' }
  | {
      op: 'execute';
      sql: string;
      maxRows: number;
      maxBytes: number;
      /** The table allowlist: when not empty, the compiled program is checked against it first. */
      allowTables?: readonly string[];
    }
  | { op: 'catalog'; statements: readonly string[] };

/** One task for the worker: a request and the `id` that pairs its reply. */
export type SqliteTask = SqliteRequest & { id: number };

/** Rows of an `execute` task, already converted to cells. */
export interface SqliteRows {
  columns: { name: string; type: string }[];
  rows: CellValue[][];
  truncatedReason?: 'max_rows' | 'max_bytes';
  /** Bytes of the first row when not even it fitted the budget. */
  firstRowBytes?: number;
  durationMs: number;
}

/**
 * Why the worker refused a statement before running it: better-sqlite3's own verdict, or the
 * program reads outside the table allowlist (`table-access.ts`).
 */
export type SqliteRefusal = 'not_readonly' | 'not_reader' | 'not_allowed';

/** An error as it crosses the thread boundary. */
export interface SqliteErrorData {
  message: string;
  /** better-sqlite3's `SQLITE_*` code, when SQLite raised the error. */
  code?: string;
  /** Set when the worker refused the statement itself. */
  refusal?: SqliteRefusal;
  /** Set when the database could not be opened (or the driver not loaded). */
  open?: boolean;
  /** Set when the file is in WAL mode and the error is about its shared-memory (`-shm`) file. */
  wal?: boolean;
}

/** The worker's reply to one task. */
export type SqliteReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: SqliteErrorData };
