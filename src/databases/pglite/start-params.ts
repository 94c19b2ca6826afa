/**
 * PostgreSQL settings for the embedded PGlite instances sqlrecall opens (the user's `pglite:`
 * database and the embedded memory store), chosen for a fast start.
 *
 * A data directory made by PGlite's initdb says `shared_buffers = 128MB`, and PGlite zero-fills
 * that buffer pool inside its WASM memory at start, so every instance costs ~130 MB of resident
 * memory and ~0.25 s of CPU before the first query. Measured on this project's 2-core machine
 * (Node 20.20, PGlite 0.5.14, the 300-row demo shop and a memory store with pgvector, both data
 * directories already existing): opening both in one process
 * peaked at 482 MB RSS / 1.85 s CPU with 128MB, 259 MB / 1.61 s with 16MB.
 * A smaller pool costs little here: PGlite's data files are read through the host file system,
 * so a page evicted from the pool comes back from the OS page cache, not from disk.
 */

/** Shared buffer pool of an embedded instance: 16MB (see the module comment for the figures). */
export const PGLITE_SHARED_BUFFERS = '16MB';

/**
 * PGlite's own start parameters (`PGlite.defaultStartParams`, passed in so this module does not
 * load the WASM package) plus {@link PGLITE_SHARED_BUFFERS}. Pass the result as the
 * `startParams` option: that option REPLACES PGlite's defaults, which must therefore be kept.
 * A later `-c` wins in PostgreSQL, so the pool size given here overrides `postgresql.conf`.
 */
export function pgliteStartParams(defaults: readonly string[]): string[] {
  return [...defaults, '-c', `shared_buffers=${PGLITE_SHARED_BUFFERS}`];
}
