/**
 * Temporary folders for tests, removed after the test file (its last `afterAll`, passed or
 * failed) and, failing that, when the process exits: vitest ends its workers without an exit
 * event, so `process.on('exit')` alone left `sqlrecall-*` folders behind. Outside vitest (bench
 * scripts import test support) and in the global setup only the exit hook applies.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made = new Set<string>();
let hooked = false;

function removeAll(): void {
  for (const d of made) rmSync(d, { recursive: true, force: true });
  made.clear();
}

if (process.env.VITEST_WORKER_ID) {
  // Registered while the importing test file is collected: runs once that file is done.
  const { afterAll } = await import('vitest');
  afterAll(removeAll);
}

/** Removes `dir` when this process exits (synchronously, in the 'exit' event). */
export function removeAtExit(dir: string): string {
  made.add(dir);
  if (!hooked) {
    hooked = true;
    process.once('exit', removeAll);
  }
  return dir;
}

/** A new folder `<tmp>/<prefix>XXXXXX`, removed when this process exits (see {@link removeAtExit}). */
export function tempDir(prefix: string): string {
  return removeAtExit(mkdtempSync(join(tmpdir(), prefix)));
}
