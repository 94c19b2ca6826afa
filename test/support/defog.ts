/**
 * Loads the defog benchmark databases (read in place from ../shared/benchmarks) into throw-away
 * databases: server PostgreSQL (TEST_DATABASE_URL) or embedded PGlite.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { seedPgliteDataDir } from './pglite-template.js';
import { createTempDatabase, type TempDatabase } from './server-db.js';
import { benchmarkPath } from './shared-data.js';

/** The eleven defog databases. */
export const DEFOG_DATABASES = [
  'academic',
  'advising',
  'atis',
  'broker',
  'car_dealership',
  'derm_treatment',
  'ewallet',
  'geography',
  'restaurants',
  'scholar',
  'yelp',
] as const;

/** The dump of one defog database (plain SQL: CREATE TABLE + INSERT). */
export function defogDump(name: string): string {
  return readFileSync(benchmarkPath('defog', 'dbs', `${name}.sql`), 'utf8');
}

/** Creates a temp server database and loads the named dump into it. */
export async function loadDefogOnServer(name: string): Promise<TempDatabase> {
  const db = await createTempDatabase(`sqlrecall_defog_${name}`);
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    await client.query(defogDump(name));
  } finally {
    await client.end();
  }
  return db;
}

/** Loads the named dump into a PGlite data directory (created if needed) and closes it. */
export async function loadDefogIntoPglite(name: string, dataDir: string): Promise<void> {
  if (!existsSync(join(dataDir, 'PG_VERSION')) && (!existsSync(dataDir) || readdirSync(dataDir).length === 0))
    seedPgliteDataDir(dataDir);
  const db = new PGlite(dataDir);
  try {
    await db.exec(defogDump(name));
  } finally {
    await db.close();
  }
}
