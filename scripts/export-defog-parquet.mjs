#!/usr/bin/env node
/**
 * Exports the defog benchmark databases as folders of Parquet files, one folder per database and
 * one file per table (`<out>/<name>/<table>.parquet`), for the DuckDB folder path
 * (test/e2e-defog-duckdb.test.ts). The dumps are PostgreSQL SQL whose INSERTs compute values
 * (`CURRENT_DATE - INTERVAL '5 months'`): each dump runs in an embedded PostgreSQL (PGlite) first,
 * once for all the loaders (scripts/lib/defog-dumps.mjs), and every table's rows travel as PostgreSQL text into a
 * DuckDB staging table, then out to Parquet cast to the mapped types, so PostgreSQL and DuckDB
 * hold the same values on the same day.
 *
 * Usage: node scripts/export-defog-parquet.mjs [--out DIR] [--dumps DIR] [name ...]
 * --out defaults to $TMPDIR/sqlrecall-defog/parquet (never the repository or the shared data);
 * --dumps to ../shared/benchmarks/defog/dbs beside the checkout; names to every dump.
 */
import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DuckDBInstance } from '@duckdb/node-api';
import { evaluatedDefogDump } from './lib/defog-dumps.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The default output folder. */
export const DEFAULT_PARQUET_DIR = join(tmpdir(), 'sqlrecall-defog', 'parquet');

/** The DuckDB type for a PostgreSQL column of `information_schema.columns`. */
function duckdbType(column) {
  switch (column.data_type) {
    case 'smallint':
      return 'SMALLINT';
    case 'integer':
      return 'INTEGER';
    case 'bigint':
      return 'BIGINT';
    case 'numeric':
      return column.numeric_precision && column.numeric_precision <= 38
        ? `DECIMAL(${column.numeric_precision}, ${column.numeric_scale ?? 0})`
        : 'DOUBLE';
    case 'real':
      return 'REAL';
    case 'double precision':
      return 'DOUBLE';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'timestamp without time zone':
      return 'TIMESTAMP';
    case 'timestamp with time zone':
      return 'TIMESTAMPTZ';
    case 'time without time zone':
      return 'TIME';
    case 'json':
    case 'jsonb':
      return 'JSON';
    default:
      // text, character varying, interval, arrays and anything else travel as text.
      return 'VARCHAR';
  }
}

const quote = (name) => `"${String(name).replace(/"/g, '""')}"`;
const literal = (text) => `'${String(text).replace(/'/g, "''")}'`;

/**
 * Exports `names` from `dumpsDir` into `<outDir>/<name>/` (each folder emptied first). `cacheDir` is
 * where the evaluated dumps are shared (false: no cache). Returns the folders with their table and
 * row counts.
 */
export async function exportDefogParquet({ names, dumpsDir, outDir = DEFAULT_PARQUET_DIR, cacheDir }) {
  const exported = [];
  const duck = await DuckDBInstance.create(':memory:');
  const connection = await duck.connect();
  try {
    for (const name of names) {
      const folder = join(outDir, name);
      rmSync(folder, { recursive: true, force: true });
      mkdirSync(folder, { recursive: true });
      const { tables } = await evaluatedDefogDump({ dumpsDir, name, cacheDir });
      let rowsExported = 0;
      for (const table of tables) {
        await connection.run('DROP TABLE IF EXISTS staging');
        await connection.run(
          `CREATE TABLE staging (${table.columns.map((c) => `${quote(c.column_name)} VARCHAR`).join(', ')})`,
        );
        const appender = await connection.createAppender('staging');
        for (const row of table.rows) {
          for (const value of row) {
            if (value === null) appender.appendNull();
            else appender.appendVarchar(String(value));
          }
          appender.endRow();
        }
        appender.closeSync();
        const casts = table.columns
          .map((c) => `CAST(${quote(c.column_name)} AS ${duckdbType(c)}) AS ${quote(c.column_name)}`)
          .join(', ');
        await connection.run(
          `COPY (SELECT ${casts} FROM staging) TO ${literal(join(folder, `${table.name}.parquet`))} (FORMAT parquet)`,
        );
        rowsExported += table.rows.length;
      }
      exported.push({ name, folder, tables: tables.length, rows: rowsExported });
    }
  } finally {
    connection.closeSync();
    duck.closeSync();
  }
  return exported;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const option = (flag, fallback) => {
    const i = args.indexOf(flag);
    if (i === -1) return fallback;
    const [value] = args.splice(i, 2).slice(1);
    return value;
  };
  const outDir = resolve(option('--out', DEFAULT_PARQUET_DIR));
  const dumpsDir = resolve(option('--dumps', join(here, '..', '..', 'shared', 'benchmarks', 'defog', 'dbs')));
  const names =
    args.length > 0
      ? args
      : readdirSync(dumpsDir)
          .filter((file) => file.endsWith('.sql'))
          .map((file) => file.slice(0, -4));
  const exported = await exportDefogParquet({ names, dumpsDir, outDir });
  for (const db of exported) console.log(`${db.folder}: ${db.tables} tables, ${db.rows} rows`);
}
