/**
 * {@link DatabaseConnector} for a SQLite file through better-sqlite3 (an optional dependency).
 *
 * better-sqlite3 is synchronous and offers no interrupt, so the connection lives in a child process
 * (`sqlite-worker.ts`): this process's event loop never blocks, and a statement that outlives its
 * time limit, or whose signal aborts, is stopped by killing the child; the next call opens the file
 * again in a fresh one. A worker thread cannot do this: terminating a thread stops JavaScript only,
 * and a statement that computes inside SQLite without returning a row (an aggregate over a runaway
 * recursive CTE) keeps its thread, and a core, busy until it ends. Calls run one at a time, in order.
 *
 * Read-only three times on the engine's side: the file is opened read-only, `PRAGMA query_only` is
 * on, and a statement SQLite does not report as a read-only query is refused before it runs. The
 * SQL guard for this dialect (`src/sql/sqlite/`) is checked before anything reaches here.
 */

import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { SqlrecallError } from '../../core/errors.js';
import {
  type DatabaseConnector,
  DEFAULT_MAX_RESULT_BYTES,
  type ExecuteOptions,
  type QueryResult,
} from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import {
  sqliteCancelled,
  sqliteDriverMissing,
  sqliteError,
  sqliteTimeout,
  sqliteWorkerLost,
} from './errors.js';
import { SQLITE_CATALOG_SQL, schemaFromCatalog } from './introspect.js';
import { existingSqliteFile } from './url.js';
import type { SqliteReply, SqliteRequest, SqliteRows, SqliteTask } from './worker-protocol.js';

/** Options of {@link createSqliteConnector}. */
export interface SqliteConnectorOptions {
  /** `sqlite:PATH` (relative, absolute or `~/…`); the file must exist. */
  url: string;
  /**
   * The table allowlist (`--allow-tables`): when not empty, every statement's compiled program is
   * checked to read only these tables and their indexes before it runs.
   */
  allowTables?: readonly string[];
}

/** Time limit of our own calls (ping, catalog) that take no timeout from the caller. */
const OWN_CALL_TIMEOUT_MS = 30_000;

/**
 * Starts the child on `path`: the compiled `sqlite-worker.js` beside this file, or under tsx/vitest
 * the `.ts` source with tsx's loader. Values cross as structured clones (`advanced` serialization).
 */
function startChild(path: string): ChildProcess {
  const here = import.meta.url;
  const source = here.endsWith('.ts') ? './sqlite-worker.ts' : './sqlite-worker.js';
  return fork(new URL(source, here), [path], {
    serialization: 'advanced',
    execArgv: here.endsWith('.ts') ? ['--import', 'tsx'] : [],
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
}

/** True when better-sqlite3 can be found (it is optional: installing it needs a compiler where no binary fits). */
export function sqliteDriverInstalled(): boolean {
  try {
    createRequire(import.meta.url).resolve('better-sqlite3');
    return true;
  } catch {
    return false;
  }
}

/** Limits of one call to the child. */
interface CallLimits {
  timeoutMs: number;
  signal?: AbortSignal;
}

/**
 * Creates a connector on an existing SQLite file; the child process starts on the first call.
 * @throws SqlrecallError `config` when the URL names no existing file, or better-sqlite3 is not installed
 */
export function createSqliteConnector(options: SqliteConnectorOptions): DatabaseConnector {
  const path = existingSqliteFile(options.url);
  if (!sqliteDriverInstalled()) throw sqliteDriverMissing();
  const displayName = `sqlite:${path}`;
  let worker: ChildProcess | undefined;
  let nextId = 1;
  let closed = false;
  /** The call in flight: its id and how to settle it. */
  let pending:
    | {
        id: number;
        worker: ChildProcess;
        resolve: (value: unknown) => void;
        reject: (error: unknown) => void;
      }
    | undefined;
  /** Calls run one after another: each waits for the previous one to settle. */
  let queue: Promise<unknown> = Promise.resolve();

  const start = (): ChildProcess => {
    const started = startChild(path);
    started.on('message', (reply: SqliteReply) => {
      if (!pending || pending.id !== reply.id) return;
      const { resolve, reject } = pending;
      pending = undefined;
      if (reply.ok) resolve(reply.value);
      else reject(sqliteError(reply.error, displayName));
    });
    const lost = (reason: string): void => {
      if (worker === started) worker = undefined;
      if (pending?.worker !== started) return;
      const { reject } = pending;
      pending = undefined;
      reject(sqliteWorkerLost(displayName, reason));
    };
    started.on('error', (error) => lost(error.message));
    started.on('exit', (code, signal) => lost(`its process ended (${signal ?? `exit code ${code}`})`));
    return started;
  };

  /** Kills the child (a statement cannot be interrupted otherwise); the next call starts a new one. */
  const stop = (): void => {
    const stopping = worker;
    worker = undefined;
    stopping?.kill('SIGKILL');
  };
  /** Whether the child keeps this process alive: only while a call waits for it. */
  const hold = (child: ChildProcess, busy: boolean): void => {
    if (busy) {
      child.ref();
      child.channel?.ref();
    } else {
      child.unref();
      child.channel?.unref();
    }
  };

  const send = (task: SqliteRequest, limits: CallLimits): Promise<unknown> => {
    const run = async (): Promise<unknown> => {
      if (closed)
        throw new SqlrecallError('db_unreachable', `The SQLite connector for ${displayName} is closed.`);
      if (limits.signal?.aborted) throw sqliteCancelled();
      worker ??= start();
      const current = worker;
      const id = nextId++;
      hold(current, true);
      return new Promise((resolve, reject) => {
        const settle = (): void => {
          clearTimeout(timer);
          limits.signal?.removeEventListener('abort', onAbort);
          // An idle child must not keep a one-shot command's process alive.
          hold(current, false);
        };
        pending = {
          id,
          worker: current,
          resolve: (value) => {
            settle();
            resolve(value);
          },
          reject: (error) => {
            settle();
            reject(error);
          },
        };
        const interrupt = (error: SqlrecallError): void => {
          if (pending?.id !== id) return;
          const { reject: fail } = pending;
          pending = undefined;
          stop();
          fail(error);
        };
        const onAbort = (): void => interrupt(sqliteCancelled());
        const timer = setTimeout(() => interrupt(sqliteTimeout(limits.timeoutMs)), limits.timeoutMs);
        limits.signal?.addEventListener('abort', onAbort, { once: true });
        current.send({ ...task, id } satisfies SqliteTask);
      });
    };
    const result = queue.then(run, run);
    queue = result.catch(() => undefined);
    return result;
  };

  return {
    dialect: 'sqlite',
    displayName,

    async ping(): Promise<void> {
      await send({ op: 'ping' }, { timeoutMs: OWN_CALL_TIMEOUT_MS });
    },

    async introspect(): Promise<Schema> {
      const results = (await send(
        { op: 'catalog', statements: SQLITE_CATALOG_SQL },
        { timeoutMs: OWN_CALL_TIMEOUT_MS },
      )) as Record<string, unknown>[][];
      return schemaFromCatalog(basename(path), results);
    },

    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      if (executeOptions.params && executeOptions.params.length > 0)
        throw new SqlrecallError(
          'config',
          'Data policies with attribute values are not supported on SQLite yet.',
        );
      const maxBytes = Math.max(0, Math.floor(executeOptions.maxBytes ?? DEFAULT_MAX_RESULT_BYTES));
      const gathered = (await send(
        {
          op: 'execute',
          sql,
          maxRows: Math.max(0, Math.floor(executeOptions.maxRows)),
          maxBytes,
          ...(options.allowTables?.length ? { allowTables: [...options.allowTables] } : {}),
        },
        {
          timeoutMs: executeOptions.timeoutMs,
          ...(executeOptions.signal ? { signal: executeOptions.signal } : {}),
        },
      )) as SqliteRows;
      return toResult(gathered, maxBytes);
    },

    async close(): Promise<void> {
      closed = true;
      const stopping = worker;
      worker = undefined;
      if (pending) {
        const { reject } = pending;
        pending = undefined;
        reject(sqliteCancelled());
      }
      if (stopping && stopping.exitCode === null && stopping.signalCode === null) {
        const exited = new Promise((resolve) => stopping.once('exit', resolve));
        hold(stopping, true);
        stopping.kill('SIGKILL');
        await exited;
      }
    },
  };
}

function toResult(gathered: SqliteRows, maxBytes: number): QueryResult {
  const { truncatedReason } = gathered;
  if (truncatedReason === 'max_bytes' && gathered.rows.length === 0)
    throw new SqlrecallError(
      'result_too_large',
      `The first row alone (${gathered.firstRowBytes ?? '?'} bytes) is larger than the result budget of ${maxBytes} bytes; it was not kept.`,
      {
        details: {
          hint: 'Select fewer or shorter columns (e.g. substr(col, 1, 1000)), or raise --max-result-bytes.',
        },
      },
    );
  return {
    columns: gathered.columns,
    rows: gathered.rows,
    rowCount: gathered.rows.length,
    truncated: truncatedReason !== undefined,
    ...(truncatedReason !== undefined ? { truncatedReason } : {}),
    durationMs: Math.round(gathered.durationMs * 100) / 100,
  };
}
