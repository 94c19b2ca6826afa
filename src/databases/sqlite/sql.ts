/**
 * The SQL sqlrecall writes for itself on SQLite (a {@link SqlWriter}): bounded samples of a
 * column's values and the stored spellings of a value. Identifiers in double quotes, strings with
 * doubled quotes (SQLite has no backslash escapes). There is no TABLESAMPLE: a sample is the first
 * rows a LIMIT gives, inside a subquery (never a full scan). Values are read as TEXT under the
 * BINARY collation, so `EMEA` and `emea` stay two values even in a NOCASE column.
 */
import type { SqlWriter } from '../sql-writer.js';

/** `name` in double quotes (a quote inside doubled). */
export function quoteSqliteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string literal: quotes doubled, everything else literal. */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const asText = (column: string) => `CAST(${quoteSqliteIdent(column)} AS TEXT)`;

/** The SQL sqlrecall writes for itself on SQLite (see the module comment). */
export const sqliteSql: SqlWriter = {
  relation: (table) => `${quoteSqliteIdent(table.schema)}.${quoteSqliteIdent(table.name)}`,
  // No TABLESAMPLE: the caller's LIMIT bounds the read.
  sampledFrom: (table) => sqliteSql.relation(table),
  quote: quoteSqliteIdent,
  literal,
  limit: (rows) => ` LIMIT ${Math.floor(rows)}`,
  textCut: (column, length) => `substr(${asText(column)}, 1, ${Math.floor(length)}) COLLATE BINARY`,
  // lower() folds ASCII letters only: SQLite has no Unicode case table without ICU.
  sameIgnoringCase: (column, value) => `lower(${asText(column)}) = lower(${literal(value)})`,
  listOf: (expression) => `json_group_array(${expression})`,
  rowFilters: false,
  sampleViews: false,

  columnSampleSql(table, column, rows, maxLength) {
    const c = quoteSqliteIdent(column);
    return `SELECT DISTINCT ${sqliteSql.textCut(column, maxLength)} AS v FROM (SELECT ${c} FROM ${sqliteSql.relation(table)} LIMIT ${Math.floor(rows)}) s WHERE ${c} IS NOT NULL`;
  },

  sameSpellingSql(table, column, value, limit) {
    return `SELECT DISTINCT ${asText(column)} COLLATE BINARY AS v FROM ${sqliteSql.relation(table)} WHERE ${sqliteSql.sameIgnoringCase(column, value)} LIMIT ${Math.floor(limit)}`;
  },
};
