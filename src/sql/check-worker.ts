/**
 * The worker thread side of `check-pool.ts`: statement extraction and the guard, run off the
 * server's main thread. Its default export is what the pool's threads call with each task; the
 * results are plain data (structured-cloned back).
 */
import { type ExtractResult, extractSql } from './extract.js';
import { type GuardOptions, type GuardVerdict, guardSql } from './guard.js';

/** One task for a worker thread. */
export type CheckTask =
  | { kind: 'extract'; text: string }
  | { kind: 'guard'; sql: string; options: GuardOptions };

/** Runs one task; the same functions as on the main thread. */
export default async function runCheckTask(task: CheckTask): Promise<ExtractResult | GuardVerdict> {
  return task.kind === 'extract' ? extractSql(task.text) : guardSql(task.sql, task.options);
}
