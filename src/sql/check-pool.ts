/**
 * Statement extraction and guard checks off the main thread, for the long-running servers (HTTP,
 * MCP). A 100,000-character statement (a long `IN` list, within the input limit) takes 0.3–1 s of
 * the PostgreSQL parser (WebAssembly) and the guard's walks; on the main thread eight of them at
 * once stalled every other request (another user's `GET /api/me` went from 4 ms to 2.4 s at p95).
 * Here a text of {@link OFF_THREAD_MIN_CHARS} or more goes to a small pool of worker threads
 * (piscina); shorter ones, and every call before {@link configureCheckThreads} turned the pool on,
 * run in this thread: a one-shot command (`sql`, `ask`) never starts a thread.
 *
 * Results are the same values `extractSql` and `guardSql` return (a guard verdict never throws);
 * a worker that fails (out of memory, the pool closing) gives the guard's fail-closed `internal`
 * refusal, or an extraction failure.
 */
import { availableParallelism } from 'node:os';
import type { Piscina } from 'piscina';
import type { CheckTask } from './check-worker.js';
import { type ExtractResult, extractSql } from './extract.js';
import { type GuardOptions, type GuardVerdict, guardSql } from './guard.js';

/**
 * Texts shorter than this (4,000 characters) are checked in this thread: their parse and checks
 * take a few milliseconds, less than the hand-over to a thread would save.
 */
export const OFF_THREAD_MIN_CHARS = 4_000;

/**
 * Default pool size: one thread per CPU but one (the main thread keeps a core), at least 1, at
 * most 4; on the 2-core reference machine, one worker.
 */
export function defaultCheckThreads(): number {
  return Math.max(1, Math.min(4, availableParallelism() - 1));
}

/** Most tasks waiting for a thread (then the check runs in this thread rather than fail). */
const MAX_QUEUE = 256;

/** Heap of a worker thread: a parse tree of a 100,000-character statement is tens of MB. */
const WORKER_HEAP_MB = 512;

let threads = 0;
let pool: Promise<Piscina> | undefined;

/**
 * Turns the pool on with `count` threads (0: off, every check in this thread), started lazily on
 * the first long text; `warm` starts them now and loads the parser in each. A later call replaces
 * the pool (the old one finishes its tasks).
 */
export async function configureCheckThreads(count: number, options: { warm?: boolean } = {}): Promise<void> {
  const old = pool;
  threads = Math.max(0, Math.floor(count));
  pool = undefined;
  if (old) void old.then((p) => p.close()).catch(() => undefined);
  if (threads > 0 && options.warm) {
    const started = await startPool();
    await Promise.all(
      Array.from({ length: threads }, () =>
        started.run({ kind: 'guard', sql: 'SELECT 1', options: {} } satisfies CheckTask),
      ),
    );
  }
}

/** Threads configured (0: off) and tasks the pool has finished: for tests and benchmarks. */
export async function checkPoolStats(): Promise<{ threads: number; completed: number }> {
  const running = pool ? await pool.catch(() => undefined) : undefined;
  return { threads, completed: running?.completed ?? 0 };
}

/** Stops the pool's threads (tasks in flight finish first). */
export async function closeCheckPool(): Promise<void> {
  await configureCheckThreads(0);
}

/** The worker module: the compiled `.js` beside this file, or under tsx/vitest the `.ts` source. */
function workerFile(): { filename: string; execArgv: string[] } {
  const here = import.meta.url;
  if (here.endsWith('.ts'))
    return { filename: new URL('./check-worker.ts', here).href, execArgv: ['--import', 'tsx'] };
  return { filename: new URL('./check-worker.js', here).href, execArgv: [] };
}

function startPool(): Promise<Piscina> {
  pool ??= import('piscina').then(({ Piscina }) => {
    const { filename, execArgv } = workerFile();
    return new Piscina({
      filename,
      execArgv,
      minThreads: 0,
      maxThreads: threads,
      maxQueue: MAX_QUEUE,
      // Threads left idle this long exit (the next long text starts one again).
      idleTimeout: 60_000,
      resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB },
    });
  });
  const started = pool;
  started.catch(() => {
    if (pool === started) pool = undefined;
  });
  return started;
}

/** Runs `task` on a worker, or undefined when the pool is off, the text short, or the queue full. */
async function offThread(task: CheckTask, length: number): Promise<ExtractResult | GuardVerdict | undefined> {
  if (threads === 0 || length < OFF_THREAD_MIN_CHARS) return undefined;
  const running = await startPool();
  if (running.queueSize >= MAX_QUEUE) return undefined;
  return running.run(task) as Promise<ExtractResult | GuardVerdict>;
}

/** {@link extractSql}, off the main thread for a long text (see the module comment). */
export async function extractSqlOffThread(text: string): Promise<ExtractResult> {
  try {
    const result = await offThread({ kind: 'extract', text }, text.length);
    if (result) return result as ExtractResult;
  } catch (error) {
    return { ok: false, reason: `The text could not be read: ${messageOf(error)}.` };
  }
  return extractSql(text);
}

/**
 * {@link guardSql}, off the main thread for a long statement (see the module comment). Never
 * throws: a failed worker refuses with rule `internal`.
 */
export async function guardSqlOffThread(sql: string, options: GuardOptions = {}): Promise<GuardVerdict> {
  try {
    const verdict = await offThread({ kind: 'guard', sql, options }, sql.length);
    if (verdict) return verdict as GuardVerdict;
  } catch (error) {
    return {
      ok: false,
      rule: 'internal',
      reason: `refused: the statement could not be checked (${messageOf(error)})`,
    };
  }
  return guardSql(sql, options);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
