/**
 * A fresh PGlite cluster without running initdb again. PGlite runs initdb (the WASM bootstrap) for
 * every new data directory or in-memory instance; on the 2-core CI machine that is most of the cost
 * of a new database (measured: ~14–18 s fresh vs ~4–6 s from a copy under load ~15). The global setup (test/global-setup.ts) runs initdb once and
 * leaves the pristine cluster in a directory named by {@link TEMPLATE_ENV}; these helpers copy it.
 *
 * The copy is the very cluster initdb produced (same PostgreSQL, no objects added), so tests still
 * create every table, extension and migration themselves. Outside vitest (bench scripts that import
 * test support) the variable is unset and the helpers fall back to a plain new cluster.
 */
import { cpSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { PGliteOptions } from '@electric-sql/pglite';
import { tempDir } from './temp-dir.js';

/** Environment variable holding the template directory (set by the global setup). */
export const TEMPLATE_ENV = 'SQLRECALL_TEST_PGLITE_TEMPLATE';

/** Name of the template's data directory and of its tarball inside the template directory. */
export const TEMPLATE_DATA = 'pgdata';
export const TEMPLATE_TAR = 'pgdata.tar';

function templateDir(): string | undefined {
  const dir = process.env[TEMPLATE_ENV];
  return dir && existsSync(join(dir, TEMPLATE_DATA, 'PG_VERSION')) ? dir : undefined;
}

/**
 * Copies the pristine cluster into `dir` (which must be empty or absent), so `new PGlite(dir)`, or
 * sqlrecall opening `pglite:<dir>`, starts on an existing cluster instead of running initdb.
 * Returns `dir`. Without a template, does nothing (the opener then runs initdb as usual).
 */
export function seedPgliteDataDir(dir: string): string {
  const template = templateDir();
  if (template) cpSync(join(template, TEMPLATE_DATA), dir, { recursive: true });
  return dir;
}

/** A new temporary directory holding a pristine cluster (see {@link seedPgliteDataDir}). */
export function freshPgliteDataDir(prefix: string): string {
  return seedPgliteDataDir(tempDir(prefix));
}

let tarball: Blob | undefined;

/**
 * Options for an in-memory `new PGlite(...)` that loads the pristine cluster from the template's
 * tarball (`loadDataDir`) instead of running initdb; `options` are merged in. Without a template,
 * returns `options` unchanged.
 */
export function inMemoryPgliteOptions<O extends PGliteOptions>(options: O = {} as O): O {
  const template = templateDir();
  if (!template || !existsSync(join(template, TEMPLATE_TAR))) return options;
  tarball ??= new Blob([readFileSync(join(template, TEMPLATE_TAR))]);
  return { ...options, loadDataDir: tarball };
}
