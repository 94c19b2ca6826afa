#!/usr/bin/env node
/**
 * Loads the defog benchmark databases into MySQL or MariaDB, one database each (`defog_<name>` by
 * default). The dumps are PostgreSQL SQL whose INSERTs compute values (`CURRENT_DATE - INTERVAL
 * '5 months'`, `::text` casts): rather than translate every expression, each dump runs in an
 * embedded PostgreSQL (PGlite) first, and the tables are re-created in MySQL with mapped types and
 * the evaluated values copied row by row, so both engines hold the same data on the same day.
 *
 * Usage: node scripts/load-defog-mysql.mjs [--url mysql://root@127.0.0.1:3306] [--prefix defog_]
 *          [--dumps DIR] [name ...]
 * DIR defaults to ../shared/benchmarks/defog/dbs beside the checkout; names default to every dump.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import mysql from 'mysql2/promise';

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
 * them first). Returns the databases' names and row counts.
 */
export async function loadDefogIntoMysql({ url, names, prefix = 'defog_', dumpsDir }) {
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
      const pglite = new PGlite();
      try {
        await pglite.exec(readFileSync(join(dumpsDir, `${name}.sql`), 'utf8'));
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
        const database = `${prefix}${name}`;
        await admin.query(`DROP DATABASE IF EXISTS ${quote(database)}`);
        await admin.query(`CREATE DATABASE ${quote(database)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
        const tables = new Map();
        for (const column of columns) {
          const key = `${column.table_schema}.${column.table_name}`;
          if (!tables.has(key))
            tables.set(key, { schema: column.table_schema, name: column.table_name, columns: [] });
          tables.get(key).columns.push(column);
        }
        let rowsLoaded = 0;
        for (const table of tables.values()) {
          const primary = keys
            .filter((k) => k.table_schema === table.schema && k.table_name === table.name)
            .map((k) => k.column_name);
          const definitions = table.columns.map(
            (c) => `${quote(c.column_name)} ${mysqlType(c, primary.includes(c.column_name))}`,
          );
          if (primary.length > 0) definitions.push(`PRIMARY KEY (${primary.map(quote).join(', ')})`);
          await admin.query(
            `CREATE TABLE ${quote(database)}.${quote(table.name)} (${definitions.join(', ')})`,
          );
          const list = table.columns.map((c) => `"${c.column_name.replace(/"/g, '""')}"::text`).join(', ');
          const { rows } = await pglite.query(
            `SELECT ${list} FROM "${table.schema}"."${table.name.replace(/"/g, '""')}"`,
            [],
            { rowMode: 'array' },
          );
          const marks = `(${table.columns.map(() => '?').join(', ')})`;
          for (let i = 0; i < rows.length; i += 200) {
            const batch = rows.slice(i, i + 200);
            if (batch.length === 0) continue;
            await admin.query(
              `INSERT INTO ${quote(database)}.${quote(table.name)} VALUES ${batch.map(() => marks).join(', ')}`,
              batch.flatMap((row) => row.map((value, j) => mysqlValue(value, table.columns[j]))),
            );
          }
          rowsLoaded += rows.length;
        }
        loaded.push({ name, database, tables: tables.size, rows: rowsLoaded });
      } finally {
        await pglite.close();
      }
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
