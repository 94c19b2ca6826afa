/**
 * Test access to a server PostgreSQL. `TEST_DATABASE_URL` (set by CI) points at a database on a
 * server where the test role may CREATE DATABASE; each test suite gets throw-away databases.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** The server URL, or undefined when no server is configured (PGlite-only run). */
export const TEST_DATABASE_URL: string | undefined = process.env.TEST_DATABASE_URL || undefined;

/** Returns `url` with its database name replaced. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

/** A database created for one test suite; `drop()` removes it. */
export interface TempDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/**
 * Creates an empty database on the test server with a unique name starting with `prefix`.
 * @throws when TEST_DATABASE_URL is not set
 */
export async function createTempDatabase(prefix: string): Promise<TempDatabase> {
  if (!TEST_DATABASE_URL) throw new Error('TEST_DATABASE_URL is not set');
  const name = `${prefix}_${randomBytes(4).toString('hex')}`.toLowerCase();
  await adminQuery(`CREATE DATABASE "${name}"`);
  return {
    name,
    url: withDatabase(TEST_DATABASE_URL, name),
    drop: () => adminQuery(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`),
  };
}

/** Runs one statement on the TEST_DATABASE_URL database (e.g. CREATE/DROP DATABASE). */
export async function adminQuery(sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}
