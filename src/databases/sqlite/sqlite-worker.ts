/**
 * The child process that holds one read-only better-sqlite3 connection (see `worker-protocol.ts`);
 * the database file's path is its first argument.
 * The file is opened with `readonly: true` and `fileMustExist: true` and a busy timeout of
 * {@link SQLITE_BUSY_TIMEOUT_MS}, then `PRAGMA query_only = ON`;
 * every statement is prepared first and refused unless SQLite itself reports it read-only and
 * returning rows (`stmt.readonly`, `stmt.reader`): the engine's verdict is the last word after the
 * text guard's. With a table allowlist, the compiled program is also checked against it
 * (`table-access.ts`) in the read transaction the statement runs in.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { checkTableAccess } from './table-access.js';
import { convertSqliteValue, type SqliteRawValue, sqliteStorageClass, sqliteValueBytes } from './values.js';
import {
  SQLITE_BUSY_TIMEOUT_MS,
  type SqliteErrorData,
  type SqliteRefusal,
  type SqliteReply,
  type SqliteRows,
  type SqliteTask,
} from './worker-protocol.js';

const path = process.argv[2] ?? '';
let db: BetterSqlite3.Database | undefined;

class Refused extends Error {
  constructor(
    readonly refusal: SqliteRefusal,
    message: string = refusal,
  ) {
    super(message);
  }
}

class OpenFailed extends Error {
  constructor(readonly reason: unknown) {
    super(reason instanceof Error ? reason.message : String(reason));
  }
}

function open(): BetterSqlite3.Database {
  if (db) return db;
  try {
    const Database = createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3;
    const opened = new Database(path, {
      readonly: true,
      fileMustExist: true,
      timeout: SQLITE_BUSY_TIMEOUT_MS,
    });
    opened.pragma('query_only = ON');
    opened.defaultSafeIntegers(true);
    db = opened;
    return opened;
  } catch (error) {
    throw new OpenFailed(error);
  }
}

function execute(task: Extract<SqliteTask, { op: 'execute' }>): SqliteRows {
  const conn = open();
  if (!task.allowTables || task.allowTables.length === 0) return run(conn.prepare(task.sql), task);
  // The allowlist is checked on the program SQLite compiled, in the read transaction the
  // statement then runs in: the root pages checked are those of the snapshot it reads.
  conn.prepare('BEGIN').run();
  try {
    const stmt = conn.prepare(task.sql);
    const denied = checkTableAccess(conn, task.sql, task.allowTables);
    if (denied) throw new Refused('not_allowed', denied);
    return run(stmt, task);
  } finally {
    if (conn.inTransaction) conn.prepare('ROLLBACK').run();
  }
}

function run(stmt: BetterSqlite3.Statement, task: Extract<SqliteTask, { op: 'execute' }>): SqliteRows {
  if (!stmt.readonly) throw new Refused('not_readonly');
  if (!stmt.reader) throw new Refused('not_reader');
  stmt.safeIntegers(true);
  stmt.raw(true);
  const declared = stmt.columns();
  const types: (string | undefined)[] = declared.map((column) => column.type?.toLowerCase() || undefined);
  const rows: SqliteRows['rows'] = [];
  let bytes = 0;
  let truncatedReason: SqliteRows['truncatedReason'];
  let firstRowBytes: number | undefined;
  const started = performance.now();
  for (const row of stmt.iterate() as IterableIterator<SqliteRawValue[]>) {
    if (rows.length >= task.maxRows) {
      truncatedReason = 'max_rows';
      break;
    }
    let size = 0;
    for (const value of row) size += sqliteValueBytes(value);
    if (bytes + size > task.maxBytes) {
      if (rows.length === 0) firstRowBytes = size;
      truncatedReason = 'max_bytes';
      break;
    }
    bytes += size;
    rows.push(
      row.map((value, i) => {
        // An expression has no declared type: the first stored value's class names it.
        if (types[i] === undefined && value !== null) types[i] = sqliteStorageClass(value);
        return convertSqliteValue(value);
      }),
    );
  }
  return {
    columns: declared.map((column, i) => ({ name: column.name, type: types[i] ?? 'null' })),
    rows,
    ...(truncatedReason ? { truncatedReason } : {}),
    ...(firstRowBytes !== undefined ? { firstRowBytes } : {}),
    durationMs: performance.now() - started,
  };
}

/** Our own catalog statements, in one read transaction (one snapshot); rows as objects of cells. */
function catalog(statements: readonly string[]): Record<string, unknown>[][] {
  const conn = open();
  conn.prepare('BEGIN').run();
  try {
    return statements.map((sql) =>
      (conn.prepare(sql).all() as Record<string, SqliteRawValue>[]).map((row) =>
        Object.fromEntries(Object.entries(row).map(([key, value]) => [key, convertSqliteValue(value)])),
      ),
    );
  } finally {
    conn.prepare('ROLLBACK').run();
  }
}

/** True when the file's header says WAL mode (bytes 18 and 19, the read and write versions, are 2). */
function inWalMode(): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const header = Buffer.alloc(20);
    return readSync(fd, header, 0, 20, 0) === 20 && header[18] === 2 && header[19] === 2;
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Codes of a reader that could not open or set up the shared-memory file beside a WAL database. */
const SHARED_MEMORY_CODES =
  /^SQLITE_(CANTOPEN|READONLY_CANTINIT|READONLY_CANTLOCK|READONLY_RECOVERY|IOERR_SHMOPEN|IOERR_SHMSIZE|IOERR_SHMMAP)/;

function errorData(error: unknown): SqliteErrorData {
  if (error instanceof Refused) return { message: error.message, refusal: error.refusal };
  const open = error instanceof OpenFailed;
  const cause = error instanceof OpenFailed ? error.reason : error;
  const code = (cause as { code?: unknown } | null)?.code;
  return {
    message: cause instanceof Error ? cause.message : String(cause),
    ...(typeof code === 'string' ? { code } : {}),
    ...(open ? { open: true } : {}),
    ...(typeof code === 'string' && SHARED_MEMORY_CODES.test(code) && inWalMode() ? { wal: true } : {}),
  };
}

// The connector gone (its process ended or closed the channel): nothing is left to answer.
process.on('disconnect', () => process.exit(0));

// A statement runs synchronously on this thread, so while one runs the 'disconnect' above cannot
// fire: a parent killed then would leave this process computing (an endless recursive CTE spins
// forever). A watchdog thread, which runs beside a busy main thread, ends this process as soon as
// its parent is gone (the parent id changes when the parent dies).
const watchdog = new Worker(
  `const { workerData } = require('node:worker_threads');
   setInterval(() => { if (process.ppid !== workerData) process.kill(process.pid, 'SIGKILL'); }, 500);`,
  { eval: true, workerData: process.ppid },
);
watchdog.unref();

process.on('message', (task: SqliteTask) => {
  let reply: SqliteReply;
  try {
    const value =
      task.op === 'ping'
        ? open().prepare('SELECT sqlite_version() AS v').get()
        : task.op === 'execute'
          ? execute(task)
          : catalog(task.statements);
    reply = { id: task.id, ok: true, value };
  } catch (error) {
    reply = { id: task.id, ok: false, error: errorData(error) };
  }
  process.send?.(reply);
});
