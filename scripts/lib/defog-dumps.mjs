/**
 * The defog dumps evaluated once in an embedded PostgreSQL (PGlite) and shared by the loaders
 * (scripts/load-defog-mysql.mjs, load-defog-sqlite.mjs, export-defog-parquet.mjs). The dumps are
 * PostgreSQL SQL whose INSERTs compute values (`CURRENT_DATE - INTERVAL '5 months'`), so every
 * loader needs them evaluated by PostgreSQL first; starting PGlite for each dump in each loader
 * cost most of their time. The evaluated tables (columns, primary keys, every value as PostgreSQL
 * text) are kept as JSON under `$TMPDIR/sqlrecall-defog/dumps`, one file per dump, named by the
 * SHA-256 of the dump's text, the cache format and the UTC day (PGlite's clock runs in UTC, and a
 * dump evaluated yesterday holds yesterday's dates).
 *
 * Loaders started side by side do not race: the first to need a dump takes its lock file
 * (created exclusively) and evaluates it; the others wait for the finished file, which appears
 * whole through an atomic rename. A lock whose owner has died or that is older than a few minutes
 * is taken over. Entries expire after a short while (30 minutes by default) and expired files are
 * removed as new ones are written, so the cache never serves stale data to a later run.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/** The version of the cached JSON's shape; a change gives every entry a new name. */
export const DUMPS_CACHE_FORMAT = 'sqlrecall-defog-dump/1';

/** How long an evaluated dump is served from the cache. */
export const DUMPS_CACHE_TTL_MS = 30 * 60_000;

/** A lock older than this is taken to be abandoned (evaluating a dump takes seconds). */
const LOCK_STALE_MS = 3 * 60_000;

/** How long a loader waits for another one's evaluation before doing it itself. */
const WAIT_LIMIT_MS = 5 * 60_000;

/** The cache folder for the current temporary directory (read when called, so TMPDIR applies). */
export function defaultDumpsCacheDir() {
  return join(tmpdir(), 'sqlrecall-defog', 'dumps');
}

/** Today's date in UTC, as PGlite's `CURRENT_DATE` gives it. */
const utcDay = () => new Date().toISOString().slice(0, 10);

/** The cache entry's name for a dump's text on a given day. */
export function dumpCacheKey(text, day = utcDay()) {
  return createHash('sha256').update(`${DUMPS_CACHE_FORMAT}\0${day}\0`).update(text).digest('hex');
}

/** Whether the process `pid` still runs (a lock of a dead process is abandoned). */
function alive(pid) {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** The entry at `file` when it is whole, of this format and younger than `ttlMs`; otherwise undefined. */
function readFresh(file, ttlMs, day) {
  let age;
  try {
    age = Date.now() - statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
  if (age > ttlMs) return undefined;
  try {
    const entry = JSON.parse(readFileSync(file, 'utf8'));
    if (entry.format !== DUMPS_CACHE_FORMAT || entry.day !== day || !Array.isArray(entry.tables))
      return undefined;
    return entry;
  } catch {
    return undefined;
  }
}

/** Removes entries, locks and unfinished files older than `ttlMs` (or than a stale lock). */
function sweep(dir, ttlMs) {
  let names;
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  for (const name of names) {
    const file = join(dir, name);
    try {
      const age = Date.now() - statSync(file).mtimeMs;
      const limit = name.endsWith('.json') ? ttlMs : Math.max(ttlMs, LOCK_STALE_MS);
      if (age > limit) rmSync(file, { force: true });
    } catch {
      // removed by another loader meanwhile
    }
  }
}

/** Takes the lock file, or returns false when another live loader holds it. */
function tryLock(lock) {
  try {
    const fd = openSync(lock, 'wx');
    writeFileSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return true;
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
  }
  try {
    const owner = Number.parseInt(readFileSync(lock, 'utf8'), 10);
    const age = Date.now() - statSync(lock).mtimeMs;
    // An empty file is a lock being written this instant: only age makes it abandoned.
    const abandoned = age > LOCK_STALE_MS || (!Number.isNaN(owner) && !alive(owner));
    if (abandoned) rmSync(lock, { force: true });
  } catch {
    // the owner finished and removed it meanwhile: the next attempt takes it
  }
  return false;
}

/**
 * Options for a new in-memory PGlite that starts from the build's initialized cluster
 * (dist/pglite-template, through the compiled template module) instead of running initdb, which
 * costs several times longer on a busy machine; without a build, PGlite runs initdb as before.
 */
async function pgliteOptions() {
  try {
    const { templateBlob } = await import('../../dist/databases/pglite/template.js');
    const loadDataDir = templateBlob();
    return loadDataDir ? { loadDataDir } : {};
  } catch {
    return {};
  }
}

/**
 * Runs the dump's SQL in a fresh in-memory PGlite and reads back every base table: its columns (as
 * `information_schema.columns` describes them), its primary key columns in key order, and its rows
 * with each value as PostgreSQL text (`NULL` as null).
 */
export async function evaluateDump(text) {
  const pglite = new PGlite(await pgliteOptions());
  try {
    await pglite.exec(text);
    const {
      rows: [{ day }],
    } = await pglite.query('SELECT CURRENT_DATE::text AS day');
    const { rows: columns } = await pglite.query(
      `SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.character_maximum_length,
              c.numeric_precision, c.numeric_scale
         FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
        WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema') AND t.table_type = 'BASE TABLE'
        ORDER BY c.table_schema, c.table_name, c.ordinal_position`,
    );
    const { rows: keys } = await pglite.query(
      `SELECT k.table_schema, k.table_name, k.column_name FROM information_schema.table_constraints c
         JOIN information_schema.key_column_usage k USING (constraint_schema, constraint_name)
        WHERE c.constraint_type = 'PRIMARY KEY' ORDER BY k.ordinal_position`,
    );
    const quote = (name) => `"${String(name).replace(/"/g, '""')}"`;
    const tables = new Map();
    for (const column of columns) {
      const key = `${column.table_schema}.${column.table_name}`;
      if (!tables.has(key))
        tables.set(key, { schema: column.table_schema, name: column.table_name, columns: [], primary: [] });
      tables.get(key).columns.push(column);
    }
    for (const table of tables.values()) {
      table.primary = keys
        .filter((k) => k.table_schema === table.schema && k.table_name === table.name)
        .map((k) => k.column_name);
      const list = table.columns.map((c) => `${quote(c.column_name)}::text`).join(', ');
      const { rows } = await pglite.query(
        `SELECT ${list} FROM ${quote(table.schema)}.${quote(table.name)}`,
        [],
        { rowMode: 'array' },
      );
      table.rows = rows;
    }
    return { day, tables: [...tables.values()] };
  } finally {
    await pglite.close();
  }
}

/**
 * The evaluated tables of `<dumpsDir>/<name>.sql`: from the cache when a fresh entry exists,
 * otherwise evaluated (once across loaders running side by side) and stored. `cached` tells which.
 * `cacheDir: false` evaluates without the cache.
 */
export async function evaluatedDefogDump({
  dumpsDir,
  name,
  cacheDir = defaultDumpsCacheDir(),
  ttlMs = DUMPS_CACHE_TTL_MS,
}) {
  const text = readFileSync(join(dumpsDir, `${name}.sql`), 'utf8');
  if (cacheDir === false) return { name, cached: false, ...(await evaluateDump(text)) };
  mkdirSync(cacheDir, { recursive: true });
  const day = utcDay();
  const key = dumpCacheKey(text, day);
  const file = join(cacheDir, `${key}.json`);
  const lock = join(cacheDir, `${key}.lock`);
  const deadline = Date.now() + WAIT_LIMIT_MS;
  for (;;) {
    const hit = readFresh(file, ttlMs, day);
    if (hit) return { name, cached: true, day: hit.day, tables: hit.tables };
    if (tryLock(lock)) break;
    if (Date.now() > deadline) {
      // The holder is alive but stuck: evaluate here rather than fail the run.
      return { name, cached: false, ...(await evaluateDump(text)) };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  try {
    // Another loader may have finished between the last look and taking the lock.
    const hit = readFresh(file, ttlMs, day);
    if (hit) return { name, cached: true, day: hit.day, tables: hit.tables };
    const evaluated = await evaluateDump(text);
    const partial = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    writeFileSync(partial, JSON.stringify({ format: DUMPS_CACHE_FORMAT, name, ...evaluated }));
    renameSync(partial, file);
    sweep(cacheDir, ttlMs);
    return { name, cached: false, ...evaluated };
  } finally {
    rmSync(lock, { force: true });
  }
}
