#!/usr/bin/env node
/**
 * Loads the defog benchmark databases into MySQL or MariaDB, one database each (`defog_<name>` by
 * default). The dumps are PostgreSQL SQL whose INSERTs compute values (`CURRENT_DATE - INTERVAL
 * '5 months'`, `::text` casts): rather than translate every expression, each dump runs in an
 * embedded PostgreSQL (PGlite) first (once for all the loaders, scripts/lib/defog-dumps.mjs), and
 * the tables are re-created in MySQL with mapped types and the evaluated values copied row by row,
 * so both engines hold the same data on the same day.
 *
 * Usage: node scripts/load-defog-mysql.mjs [--url mysql://root@127.0.0.1:3306] [--prefix defog_]
 *          [--dumps DIR] [name ...]
 * DIR defaults to ../shared/benchmarks/defog/dbs beside the checkout; names default to every dump.
 */
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import mysql from 'mysql2/promise';
import { evaluatedDefogDump } from './lib/defog-dumps.mjs';

const here = dirname(fileURLToPath(import.meta.url));

/** The MySQL column type for a PostgreSQL column of `information_schema.columns`. */
function mysqlType(column, key) {
  const type = column.data_type;
  switch (type) {
    case 'smallint':
      return 'SMALLINT';
    case 'integer':
      return 'INT';
    case 'bigint':
      return 'BIGINT';
    case 'numeric':
      return column.numeric_precision
        ? `DECIMAL(${column.numeric_precision}, ${column.numeric_scale ?? 0})`
        : 'DECIMAL(38, 10)';
    case 'real':
    case 'double precision':
      return 'DOUBLE';
    case 'boolean':
      return 'BOOLEAN';
    case 'date':
      return 'DATE';
    case 'timestamp without time zone':
    case 'timestamp with time zone':
      return 'DATETIME(6)';
    case 'time without time zone':
      return 'TIME';
    case 'character varying':
    case 'character':
      return `VARCHAR(${column.character_maximum_length ?? 255})`;
    default:
      // text, interval and anything else travel as text; a key column needs a bounded length.
      return key ? 'VARCHAR(255)' : 'TEXT';
  }
}

const quote = (name) => `\`${String(name).replace(/`/g, '``')}\``;

/** A PostgreSQL value's text as MySQL takes it. */
function mysqlValue(text, column) {
  if (text === null) return null;
  if (column.data_type === 'boolean') return text === 't' || text === 'true' ? 1 : 0;
  if (column.data_type === 'timestamp with time zone') return text.replace(/[+-]\d\d(:\d\d)?$/, '');
  return text;
}

/**
 * Loads `names` from `dumpsDir` into `<prefix><name>` databases on the server at `url` (dropping
 * them first). `cacheDir` is where the evaluated dumps are shared (false: no cache). Returns the
 * databases' names and row counts.
 */
export async function loadDefogIntoMysql({ url, names, prefix = 'defog_', dumpsDir, cacheDir }) {
  const target = new URL(url.replace(/^(mysql|mariadb):/, 'http:'));
  const admin = await mysql.createConnection({
    host: target.hostname,
    port: Number(target.port || 3306),
    user: decodeURIComponent(target.username || 'root'),
    password: decodeURIComponent(target.password),
    multipleStatements: false,
  });
  const loaded = [];
  try {
    for (const name of names) {
      const { tables } = await evaluatedDefogDump({ dumpsDir, name, cacheDir });
      const database = `${prefix}${name}`;
      await admin.query(`DROP DATABASE IF EXISTS ${quote(database)}`);
      await admin.query(`CREATE DATABASE ${quote(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
      let rowsLoaded = 0;
      for (const table of tables) {
        const definitions = table.columns.map(
          (c) => `${quote(c.column_name)} ${mysqlType(c, table.primary.includes(c.column_name))}`,
        );
        if (table.primary.length > 0)
          definitions.push(`PRIMARY KEY (${table.primary.map(quote).join(', ')})`);
        await admin.query(`CREATE TABLE ${quote(database)}.${quote(table.name)} (${definitions.join(', ')})`);
        const marks = `(${table.columns.map(() => '?').join(', ')})`;
        for (let i = 0; i < table.rows.length; i += 200) {
          const batch = table.rows.slice(i, i + 200);
          await admin.query(
            `INSERT INTO ${quote(database)}.${quote(table.name)} VALUES ${batch.map(() => marks).join(', ')}`,
            batch.flatMap((row) => row.map((value, j) => mysqlValue(value, table.columns[j]))),
          );
        }
        rowsLoaded += table.rows.length;
      }
      loaded.push({ name, database, tables: tables.length, rows: rowsLoaded });
    }
  } finally {
    await admin.end();
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
  const url = option('--url', 'mysql://root@127.0.0.1:3306');
  const prefix = option('--prefix', 'defog_');
  const dumpsDir = resolve(option('--dumps', join(here, '..', '..', 'shared', 'benchmarks', 'defog', 'dbs')));
  const names =
    args.length > 0
      ? args
      : readdirSync(dumpsDir)
          .filter((file) => file.endsWith('.sql'))
          .map((file) => file.slice(0, -4));
  const loaded = await loadDefogIntoMysql({ url, names, prefix, dumpsDir });
  for (const db of loaded) console.log(`${db.database}: ${db.tables} tables, ${db.rows} rows`);
}
