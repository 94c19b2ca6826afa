/**
 * Locates `../shared/benchmarks` (read in place, never copied into the repository). Tests that need
 * it skip with a visible line when it is absent (a fresh clone without shared/) and fail in CI.
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Absolute path of the benchmarks folder (may not exist). */
export const BENCHMARKS_DIR =
  process.env.SQLRECALL_BENCHMARKS_DIR ?? join(root, '..', 'shared', 'benchmarks');

/** True when the benchmark data is present. */
export const HAS_BENCHMARKS = existsSync(join(BENCHMARKS_DIR, 'defog', 'dbs'));

if (!HAS_BENCHMARKS) {
  if (process.env.CI) throw new Error(`CI is set but the benchmark data is missing at ${BENCHMARKS_DIR}`);
  process.stderr.write(
    `SKIP: benchmark data not found at ${BENCHMARKS_DIR}; tests that read it are skipped.\n`,
  );
}

/** Path inside the benchmarks folder. */
export function benchmarkPath(...parts: string[]): string {
  return join(BENCHMARKS_DIR, ...parts);
}
