#!/usr/bin/env node
/**
 * Loads the defog benchmark databases into SQLite, one file each (`<out>/<name>.db`). The dumps are
 * PostgreSQL SQL whose INSERTs compute values (`CURRENT_DATE - INTERVAL '5 months'`, `::text`
 * casts): as for MySQL (scripts/load-defog-mysql.mjs), each dump runs in an embedded PostgreSQL
 * (PGlite) first (once for all the loaders, scripts/lib/defog-dumps.mjs), then the tables are created in SQLite with mapped types and the evaluated values
 * copied, so every engine holds the same data on the same day. Dates and timestamps are stored as
 * ISO text, booleans as 1/0, as SQLite applications do.
 *
 * Usage: node scripts/load-defog-sqlite.mjs [--out DIR] [--dumps DIR] [name ...]
 * --out defaults to $TMPDIR/sqlrecall-defog/sqlite (never inside the checkout or the shared data);
 * --dumps to ../shared/benchmarks/defog/dbs beside the checkout; names default to every dump.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { evaluatedDefogDump } from './lib/defog-dumps.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** Where the files go unless `--out` says otherwise. */
export const DEFAULT_SQLITE_DEFOG_DIR = join(tmpdir(), 'sqlrecall-defog', 'sqlite');

/** The SQLite column type for a PostgreSQL column of `information_schema.columns`. */
function sqliteType(column) {
  switch (column.data_type) {
    case 'smallint':
    case 'integer':
    case 'bigint':
      return 'INTEGER';
    case 'numeric':
      return column.numeric_precision
        ? `DECIMAL(${column.numeric_precision}, ${column.numeric_scale ?? 0})`
        : 'NUMERIC';
    case 'real':
    case 'double precision':
      return 'REAL';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'timestamp without time zone':
    case 'timestamp with time zone':
      return 'TIMESTAMP';
    case 'character varying':
    case 'character':
      return `VARCHAR(${column.character_maximum_length ?? 255})`;
    default:
      return 'TEXT';
  }
}

const quote = (name) => `"${String(name).replace(/"/g, '""')}"`;

/** A PostgreSQL value's text as SQLite stores it (the column's affinity makes numbers of numbers). */
function sqliteValue(text, column) {
  if (text === null) return null;
  if (column.data_type === 'boolean') return text === 't' || text === 'true' ? 1 : 0;
  if (column.data_type === 'timestamp with time zone') return text.replace(/[+-]\d\d(:\d\d)?$/, '');
  return text;
}

/**
 * Loads `names` from `dumpsDir` into `<outDir>/<name>.db` (replacing any file there). `cacheDir` is
 * where the evaluated dumps are shared (false: no cache). Returns the files' names and row counts.
 */
export async function loadDefogIntoSqlite({ names, dumpsDir, outDir = DEFAULT_SQLITE_DEFOG_DIR, cacheDir }) {
  const { default: Database } = await import('better-sqlite3');
  mkdirSync(outDir, { recursive: true });
  const loaded = [];
  for (const name of names) {
    const { tables } = await evaluatedDefogDump({ dumpsDir, name, cacheDir });
    const file = join(outDir, `${name}.db`);
    rmSync(file, { force: true });
    const db = new Database(file);
    try {
      let rowsLoaded = 0;
      for (const table of tables) {
        const definitions = table.columns.map((c) => `${quote(c.column_name)} ${sqliteType(c)}`);
        if (table.primary.length > 0)
          definitions.push(`PRIMARY KEY (${table.primary.map(quote).join(', ')})`);
        db.exec(`CREATE TABLE ${quote(table.name)} (${definitions.join(', ')})`);
        const insert = db.prepare(
          `INSERT INTO ${quote(table.name)} VALUES (${table.columns.map(() => '?').join(', ')})`,
        );
        db.transaction(() => {
          for (const row of table.rows)
            insert.run(row.map((value, j) => sqliteValue(value, table.columns[j])));
        })();
        rowsLoaded += table.rows.length;
      }
      loaded.push({ name, file, tables: tables.length, rows: rowsLoaded });
    } finally {
      db.close();
    }
  }
  return loaded;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (flag, fallback) => {
    const i = args.indexOf(flag);
    if (i === -1) return fallback;
    const [value] = args.splice(i, 2).slice(1);
    return value;
  };
  const outDir = resolve(option('--out', DEFAULT_SQLITE_DEFOG_DIR));
  const dumpsDir = resolve(option('--dumps', join(here, '..', '..', 'shared', 'benchmarks', 'defog', 'dbs')));
  const names =
    args.length > 0
      ? args
      : readdirSync(dumpsDir)
          .filter((file) => file.endsWith('.sql'))
          .map((file) => file.slice(0, -4));
  const loaded = await loadDefogIntoSqlite({ names, dumpsDir, outDir });
  for (const db of loaded) console.log(`${db.file}: ${db.tables} tables, ${db.rows} rows`);
}
