/**
 * Runs once before the test files:
 * - builds dist/ when it is missing or older than src/, so subprocess tests run the current code;
 * - in CI (`CI=true`) the server PostgreSQL named by TEST_DATABASE_URL must be reachable: a silent
 *   skip would hide a broken setup.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function ensureBuilt(): void {
  const entry = join('dist', 'cli', 'main.js');
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
}

export default async function setup(): Promise<void> {
  ensureBuilt();
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
