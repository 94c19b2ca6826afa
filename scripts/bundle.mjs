#!/usr/bin/env node
// Part of `npm run build` (after tsc): bundles the compiled CLI (dist/main.js and everything it
// imports, statically or lazily) into dist/bundle/, the code `bin/sqlrecall.js` runs.
//
// Why: Node 20 loads ES modules file by file, and `ask` loads several hundred of them (zod alone
// is ~80 files: ~110 ms, nearly all of it module loading, not zod's own code). One bundle with one
// chunk per lazily loaded part brings `ask`'s first model request 0.06–0.16 s sooner and uses ~15 MB
// less (bench/process-start.ts on a quiet 2-core machine;
// docs/perf/2026-12-01-baseline-wasm-tier-and-bundle.md).
// Lazy `import()`s stay lazy: each becomes its own chunk.
//
// Left out of the bundle (imported from node_modules at run time, as before):
// - packages that load files beside their own code (PGlite's .wasm and data bundle, the pgvector
//   extension archive, libpg-query's .wasm): they find those files through their own location;
// - `pg`: the memory store also loads it with `createRequire`, so it must stay one copy;
// - `pino`: its transports run its own files in worker threads; `piscina` likewise starts its own
//   worker file, which then loads our `check-worker.js`;
// - tools never used by the CLI at run time (vite, playwright-core);
// - `@duckdb/node-api`, an optional dependency whose native binding is picked per platform at run time.
// dist/server/app.js finds the web UI at `../../dist/web` from its own URL; dist/bundle/ sits at the
// same depth, so that path still holds.
import { rmSync } from 'node:fs';
import { build } from 'esbuild';

const outdir = 'dist/bundle';
rmSync(outdir, { recursive: true, force: true }); // chunk names are content hashes: no stale ones left
await build({
  // The statement checker's worker thread is its own entry: the pool starts it from a file beside
  // the chunk that runs the pool (src/sql/check-pool.ts).
  // The SQLite connector forks its child process from a file beside its own chunk, likewise.
  entryPoints: {
    main: 'dist/main.js',
    'check-worker': 'dist/sql/check-worker.js',
    'sqlite-worker': 'dist/databases/sqlite/sqlite-worker.js',
  },
  outdir,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true, // `node --enable-source-maps bin/sqlrecall.js …` for positions in dist/*.js
  logLevel: 'warning',
  external: [
    '@duckdb/node-api',
    '@electric-sql/pglite',
    '@electric-sql/pglite/*',
    '@electric-sql/pglite-pgvector',
    '@electric-sql/pglite-socket',
    'libpg-query',
    // A native addon, and an optional dependency: loaded from node_modules when a sqlite: URL is opened.
    'better-sqlite3',
    'pg',
    'pg-native',
    'pino',
    'piscina',
    'playwright-core',
    'vite',
  ],
  // CommonJS packages inside an ES module bundle call `require` for Node's built-ins.
  banner: {
    js: "import { createRequire as __sqlrecallRequire } from 'node:module';\nconst require = __sqlrecallRequire(import.meta.url);",
  },
});
