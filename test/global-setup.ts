/**
 * Runs once before the test files:
 * - builds dist/ (tsc, then the bundle `bin/sqlrecall.js` runs) when it is missing or older than
 *   src/, so subprocess tests run the current code;
 * - makes a template cluster (directory + tarball) that the test helpers of
 *   test/support/pglite-template.ts copy instead of running initdb for every new database: from the
 *   build's initialized cluster (dist/pglite-template, made when missing), else by initdb here;
 * - in CI (`CI=true`) the server PostgreSQL named by TEST_DATABASE_URL must be reachable: a silent
 *   skip would hide a broken setup.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import pg from 'pg';
import { seedFromTemplate, templateArchive } from '../src/databases/pglite/template.js';
import { TEMPLATE_DATA, TEMPLATE_ENV, TEMPLATE_TAR } from './support/pglite-template.js';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function ensureBuilt(): void {
  const entry = join('dist', 'bundle', 'main.js');
  if (existsSync(entry) && statSync(entry).mtimeMs >= newestMtime('src')) return;
  process.stderr.write('building dist/ for subprocess tests…\n');
  try {
    execFileSync(
      process.execPath,
      [join('node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
      {
        stdio: 'inherit',
      },
    );
  } catch {
    // tsc still emits JavaScript on type errors; the type-check step of `npm test` reports them.
    process.stderr.write('warning: the build reported type errors (see above)\n');
  }
  execFileSync(process.execPath, [join('scripts', 'bundle.mjs')], { stdio: 'inherit' });
}

/** The build's initialized cluster (`npm run build` makes it; made here when missing). */
function ensureShippedTemplate(): void {
  if (templateArchive()) return;
  execFileSync(process.execPath, [join('scripts', 'make-pglite-template.mjs')], { stdio: 'inherit' });
}

/**
 * Creates the pristine PGlite cluster once (initdb) and publishes it to the test workers through
 * the environment (forks inherit it). Returns the teardown that removes it.
 */
function createPgliteTemplate(): () => void {
  // `SQLRECALL_TEST_PGLITE_TEMPLATE=off`: every new database runs initdb (for timing comparisons).
  if (process.env[TEMPLATE_ENV] === 'off') return () => {};
  const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-pglite-template-'));
  // The build's cluster when there is one (no second initdb), else initdb here.
  const shipped = templateArchive();
  if (shipped && seedFromTemplate(join(dir, TEMPLATE_DATA))) {
    writeFileSync(join(dir, TEMPLATE_TAR), gunzipSync(readFileSync(shipped)));
  } else {
    execFileSync(process.execPath, [join('test', 'support', 'make-pglite-template.mjs'), dir], {
      stdio: 'inherit',
    });
  }
  if (!existsSync(join(dir, TEMPLATE_DATA, 'PG_VERSION')) || !existsSync(join(dir, TEMPLATE_TAR)))
    throw new Error(`the PGlite template was not created in ${dir}`);
  process.env[TEMPLATE_ENV] = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}

export default async function setup(): Promise<() => void> {
  ensureBuilt();
  ensureShippedTemplate();
  const teardown = createPgliteTemplate();
  try {
    await checkServer();
  } catch (error) {
    teardown();
    throw error;
  }
  return teardown;
}

async function checkServer(): Promise<void> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) {
    if (process.env.CI)
      throw new Error('CI is set but TEST_DATABASE_URL is not: the server PostgreSQL tests would not run.');
    process.stderr.write(
      'TEST_DATABASE_URL is not set: server PostgreSQL tests are skipped (PGlite tests still run).\n',
    );
    return;
  }
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch (error) {
    throw new Error(`TEST_DATABASE_URL is set but the server is unreachable: ${(error as Error).message}`);
  } finally {
    await client.end().catch(() => {});
  }
}
