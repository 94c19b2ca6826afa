#!/usr/bin/env node
// Part of `npm run build` (and so of `npm install` from a clone and of `npm pack`): runs PGlite's
// initdb once and keeps the initialized cluster as dist/pglite-template/pgdata.tar.gz, with
// manifest.json naming the PGlite version that made it. Every new embedded data directory (the
// memory store, the demo shop, a new pglite: database) is then a copy of it instead of another
// initdb (src/databases/pglite/template.ts; figures in docs/perf/first-run.md). Skipped when the
// manifest already names the installed PGlite version (delete dist/pglite-template to rebuild).
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';

const out = join('dist', 'pglite-template');
const require = createRequire(import.meta.url);
let dir = dirname(require.resolve('@electric-sql/pglite'));
while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
const version = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')).version;

const manifestFile = join(out, 'manifest.json');
if (existsSync(manifestFile) && existsSync(join(out, 'pgdata.tar.gz'))) {
  const made = JSON.parse(readFileSync(manifestFile, 'utf8'));
  if (made.pglite === version) process.exit(0);
}

const started = Date.now();
const { PGlite } = await import('@electric-sql/pglite');
const work = mkdtempSync(join(tmpdir(), 'sqlrecall-template-build-'));
try {
  const db = new PGlite(join(work, 'pgdata'));
  let tar;
  try {
    await db.waitReady;
    tar = Buffer.from(await (await db.dumpDataDir('none')).arrayBuffer());
  } finally {
    await db.close();
  }
  mkdirSync(out, { recursive: true });
  // Written beside, then renamed: an interrupted build never leaves a half archive in place.
  writeFileSync(join(out, 'pgdata.tar.gz.partial'), gzipSync(tar, { level: 9 }));
  renameSync(join(out, 'pgdata.tar.gz.partial'), join(out, 'pgdata.tar.gz'));
  writeFileSync(
    manifestFile,
    `${JSON.stringify({ pglite: version, madeAt: new Date().toISOString() }, null, 2)}\n`,
  );
  process.stderr.write(
    `PGlite template cluster made in ${((Date.now() - started) / 1000).toFixed(1)} s (${out})\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
