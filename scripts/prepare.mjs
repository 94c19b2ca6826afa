#!/usr/bin/env node
// `npm install` runs `prepare`, and so does `npx sqlrecall …` inside a checkout: npm installs the
// checkout into its own cache as a folder dependency and prepares it again. A full build takes
// 15–20 s (compile, bundle, web app, PGlite template), which a user would wait through before every
// first command of an npx session. So the build runs only when it is missing or older than its
// inputs; `npm run build` always builds. `--stamp` only records that a build just finished.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const STAMP = join(ROOT, 'dist', '.build-stamp');
/** What the build reads; a change to any of them makes the build stale. */
const INPUTS = [
  'src',
  'web',
  'scripts',
  'bin',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];
/** What the build must have left behind for the CLI to run. */
const OUTPUTS = ['dist/bundle/main.js', 'dist/web/index.html', 'dist/pglite-template'];
const SKIP = new Set(['node_modules', 'dist', '.vite']);

/** Newest modification time (ms) under `path`. */
function newest(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const entry of readdirSync(path)) {
    if (!SKIP.has(entry)) latest = Math.max(latest, newest(join(path, entry)));
  }
  return latest;
}

if (process.argv.includes('--stamp')) {
  mkdirSync(dirname(STAMP), { recursive: true });
  writeFileSync(STAMP, `${new Date().toISOString()}\n`);
  process.exit(0);
}

const upToDate =
  existsSync(STAMP) &&
  OUTPUTS.every((output) => existsSync(join(ROOT, output))) &&
  statSync(STAMP).mtimeMs >= Math.max(...INPUTS.map((input) => newest(join(ROOT, input))));
if (upToDate) {
  console.log('sqlrecall: the build is up to date (npm run build rebuilds it)');
  process.exit(0);
}
const build = spawnSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' });
process.exit(build.status ?? 1);
