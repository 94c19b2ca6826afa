/**
 * Benchmark databases for `sqlrecall eval`: each `<name>.sql` dump (plain SQL: CREATE + INSERT, as
 * defog ships them) is loaded once into its own database and reused while the dump is unchanged.
 * - On a PostgreSQL server (`--db postgres://…`): database `<prefix><name>` (default prefix
 *   `sqlrecall_eval_`), its dump's SHA-256 recorded in `COMMENT ON DATABASE` after a complete load;
 *   concurrent runs serialise on an advisory lock.
 * - Embedded: a PGlite data directory `<home>/eval/dbs/<name>`, the hash in `<name>.sha256` next
 *   to it, written after a complete load.
 * A database whose recorded hash differs (or is missing: a load that died half-way) is rebuilt.
 * This is the composition root's job: it picks the drivers (pg, PGlite).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { SqlrecallError } from '../core/errors.js';
import { maskUrl } from '../core/redact.js';
import { pgConnectionString } from '../databases/postgres/connection-string.js';

/** Default name prefix of server databases. */
export const EVAL_DATABASE_PREFIX = 'sqlrecall_eval_';

/** A loaded benchmark database. */
export interface EvalDatabaseLocation {
  name: string;
  /** `postgres://…/<prefix><name>` or `pglite:<dir>`. */
  url: string;
  /** True when the database was already loaded with the same dump. */
  reused: boolean;
}

/** Options of {@link prepareEvalDatabase}. */
export interface PrepareOptions {
  /** Folder with `<name>.sql` dumps. */
  dumpsDir: string;
  /** A server URL whose role may CREATE DATABASE; absent → embedded PGlite under `home`. */
  serverUrl?: string;
  /** sqlrecall's data folder (PGlite mode). */
  home: string;
  /** Server database name prefix; default {@link EVAL_DATABASE_PREFIX}. */
  prefix?: string;
}

const MARKER = 'sqlrecall-eval dump sha256:';

/** Reads a dump and its SHA-256. @throws SqlrecallError `usage` when the dump is missing */
async function readDump(dumpsDir: string, name: string): Promise<{ text: string; hash: string }> {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) {
    throw new SqlrecallError('usage', `The database name "${name}" in the dataset is not a plain name.`);
  }
  const path = join(dumpsDir, `${name}.sql`);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SqlrecallError('usage', `There is no dump for the database ${name}: ${path} cannot be read.`, {
      cause: error,
      details: { hint: 'Pass --dumps DIR with one <db_name>.sql file per database of the dataset.' },
    });
  }
  return { text, hash: createHash('sha256').update(text).digest('hex') };
}

/**
 * Makes sure database `name` is loaded from its dump and returns where it is.
 * @throws SqlrecallError `usage` (no dump), `db_unreachable`, `db_query` (the dump failed to load)
 */
export async function prepareEvalDatabase(
  name: string,
  options: PrepareOptions,
): Promise<EvalDatabaseLocation> {
  const dump = await readDump(options.dumpsDir, name);
  return options.serverUrl
    ? prepareOnServer(name, dump, options.serverUrl, options.prefix ?? EVAL_DATABASE_PREFIX)
    : prepareInPglite(name, dump, options.home);
}

async function prepareOnServer(
  name: string,
  dump: { text: string; hash: string },
  serverUrl: string,
  prefix: string,
): Promise<EvalDatabaseLocation> {
  const database = `${prefix}${name}`.toLowerCase();
  const parsed = new URL(serverUrl);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  const url = parsed.toString();
  const admin = new pg.Client({
    connectionString: pgConnectionString(serverUrl),
    application_name: 'sqlrecall-eval',
  });
  try {
    await admin.connect();
  } catch (error) {
    throw new SqlrecallError(
      'db_unreachable',
      `Cannot connect to ${maskUrl(serverUrl)} to load the benchmark.`,
      {
        cause: error,
      },
    );
  }
  const ident = `"${database.replace(/"/g, '""')}"`;
  try {
    await admin.query(`SELECT pg_advisory_lock(hashtext('sqlrecall-eval'))`);
    const found = await admin.query<{ comment: string | null }>(
      `SELECT shobj_description(oid, 'pg_database') AS comment FROM pg_database WHERE datname = $1`,
      [database],
    );
    const row = found.rows[0];
    if (row && row.comment === `${MARKER}${dump.hash}`) return { name, url, reused: true };
    if (row) await admin.query(`DROP DATABASE ${ident} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${ident}`);
    const loader = new pg.Client({
      connectionString: pgConnectionString(url),
      application_name: 'sqlrecall-eval',
    });
    await loader.connect();
    try {
      await loader.query(dump.text);
    } catch (error) {
      throw new SqlrecallError(
        'db_query',
        `The dump of ${name} failed to load: ${(error as Error).message}`,
        {
          cause: error,
        },
      );
    } finally {
      await loader.end().catch(() => {});
    }
    await admin.query(`COMMENT ON DATABASE ${ident} IS '${MARKER}${dump.hash}'`);
    return { name, url, reused: false };
  } catch (error) {
    if (error instanceof SqlrecallError) throw error;
    throw new SqlrecallError(
      'db_query',
      `Preparing the benchmark database ${database} failed: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  } finally {
    await admin.query(`SELECT pg_advisory_unlock(hashtext('sqlrecall-eval'))`).catch(() => {});
    await admin.end().catch(() => {});
  }
}

async function prepareInPglite(
  name: string,
  dump: { text: string; hash: string },
  home: string,
): Promise<EvalDatabaseLocation> {
  const dir = join(home, 'eval', 'dbs', name);
  const marker = `${dir}.sha256`;
  const url = `pglite:${dir}`;
  if (existsSync(dir) && existsSync(marker) && readFileSync(marker, 'utf8').trim() === dump.hash) {
    return { name, url, reused: true };
  }
  rmSync(marker, { force: true });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dirname(dir), { recursive: true });
  const { PGlite } = await import('@electric-sql/pglite');
  const db = new PGlite(dir);
  try {
    await db.exec(dump.text);
  } catch (error) {
    throw new SqlrecallError('db_query', `The dump of ${name} failed to load: ${(error as Error).message}`, {
      cause: error,
    });
  } finally {
    await db.close().catch(() => {});
  }
  writeFileSync(marker, `${dump.hash}\n`);
  return { name, url, reused: false };
}
