#!/usr/bin/env node
// Part of `npm run build` (and so of `npm install` from a clone and of `npm pack`): runs PGlite's
// initdb once and keeps the initialized cluster as dist/pglite-template/pgdata.tar.gz, and the same
// with pgvector and every migration series of the store's database applied (memory store, schema
// index, users) as memory-store.tar.gz, with manifest.json naming the PGlite version and the
// migrations that made them. Every new embedded
// data directory (the memory store, the demo shop, a new pglite: database) is then a copy instead
// of another initdb (src/databases/pglite/template.ts; figures in docs/perf/first-run.md). Runs
// after tsc (it uses the compiled memory store). Skipped when the manifest already names the
// installed PGlite version and the current migrations (delete dist/pglite-template to rebuild).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';

const out = join('dist', 'pglite-template');
const require = createRequire(import.meta.url);
let dir = dirname(require.resolve('@electric-sql/pglite'));
while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

const dist = (path) => import(pathToFileURL(resolve('dist', path)).href);
const { createPgliteClient, migrate } = await dist('memory/store/index.js');
const { MEMORY_SERIES } = await dist('memory/store/migrations.js');
const { SCHEMA_INDEX_SERIES } = await dist('linking/pg-store.js');
const { USERS_SERIES } = await dist('app/users.js');
const { AUDIT_SERIES } = await dist('audit/store.js');
const { runMigrations } = await dist('databases/postgres/migrate.js');
const { seedFromTemplate } = await dist('databases/pglite/template.js');
// Each series with its versions, e.g. `memory:1,2,3 schema_index:1 users:1,2`: a new step, a new
// series or a new ledger shape changes it, and so rebuilds the template.
const migrations = [MEMORY_SERIES, SCHEMA_INDEX_SERIES, USERS_SERIES, AUDIT_SERIES]
  .map((series) => `${series.component}:${series.migrations.map((m) => m.version).join(',')}`)
  .join(' ');

const manifestFile = join(out, 'manifest.json');
if (['manifest.json', 'pgdata.tar.gz', 'memory-store.tar.gz'].every((f) => existsSync(join(out, f)))) {
  const made = JSON.parse(readFileSync(manifestFile, 'utf8'));
  if (made.pglite === version && made.migrations === migrations) process.exit(0);
}

const started = Date.now();
const { PGlite } = await import('@electric-sql/pglite');
const { vector } = await import('@electric-sql/pglite-pgvector');
const work = mkdtempSync(join(tmpdir(), 'sqlrecall-template-build-'));

/** Dumps the cluster in `dir` and writes it as `<name>.tar.gz` (beside, then renamed: never half). */
async function keep(dir, name, options = {}) {
  const db = new PGlite({ dataDir: dir, ...options });
  let tar;
  try {
    await db.waitReady;
    tar = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
  } finally {
    await db.close();
  }
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, `${name}.tar.gz.partial`), gzipSync(tar, { level: 9 }));
  renameSync(join(out, `${name}.tar.gz.partial`), join(out, `${name}.tar.gz`));
}

try {
  const pristine = join(work, 'pgdata');
  const initdb = new PGlite(pristine);
  await initdb.waitReady;
  await initdb.close();
  await keep(pristine, 'pgdata');
  // The memory store: a copy of the pristine cluster, migrated by the stores' own code.
  writeFileSync(manifestFile, `${JSON.stringify({ pglite: version }, null, 2)}\n`); // lets seedFromTemplate use pgdata
  const store = join(work, 'memory-store');
  if (!seedFromTemplate(store, {}, 'pgdata')) throw new Error('the pristine cluster could not be copied');
  const client = createPgliteClient(store);
  try {
    await migrate(client);
    await runMigrations(client, SCHEMA_INDEX_SERIES);
    await runMigrations(client, USERS_SERIES);
    await runMigrations(client, AUDIT_SERIES);
  } finally {
    await client.close();
  }
  for (const left of ['.run', 'sqlrecall-memory.lock'])
    rmSync(join(store, left), { recursive: true, force: true });
  await keep(store, 'memory-store', { extensions: { vector } });
  writeFileSync(
    manifestFile,
    `${JSON.stringify({ pglite: version, migrations, madeAt: new Date().toISOString() }, null, 2)}\n`,
  );
  process.stderr.write(
    `PGlite template clusters made in ${((Date.now() - started) / 1000).toFixed(1)} s (${out})\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
