/**
 * The SQL sqlrecall writes for itself on DuckDB (a {@link SqlWriter}): bounded samples of a
 * column's values and the stored spellings of a value. Identifiers in double quotes, strings with
 * doubled quotes. A sample is the first rows a LIMIT gives, inside a subquery: on a view over a
 * CSV or Parquet file DuckDB then stops reading the file early. Values are gathered with `list()`,
 * which the connector returns as an array.
 */
import type { SqlWriter } from '../sql-writer.js';

/** `name` in double quotes (a quote inside doubled). */
export function quoteDuckdbIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** A string literal: quotes doubled (DuckDB reads backslashes literally). */
function literal(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const asText = (column: string) => `CAST(${quoteDuckdbIdent(column)} AS VARCHAR)`;

/** The SQL sqlrecall writes for itself on DuckDB (see the module comment). */
export const duckdbSql: SqlWriter = {
  relation: (table) => `${quoteDuckdbIdent(table.schema)}.${quoteDuckdbIdent(table.name)}`,
  // USING SAMPLE would read the whole file of a view to draw from it: the caller's LIMIT bounds the read.
  sampledFrom: (table) => duckdbSql.relation(table),
  quote: quoteDuckdbIdent,
  literal,
  limit: (rows) => ` LIMIT ${Math.floor(rows)}`,
  textCut: (column, length) => `left(${asText(column)}, ${Math.floor(length)})`,
  sameIgnoringCase: (column, value) => `lower(${asText(column)}) = lower(${literal(value)})`,
  listOf: (expression) => `list(${expression})`,
  rowFilters: false,
  sampleViews: true,

  columnSampleSql(table, column, rows, maxLength) {
    const c = quoteDuckdbIdent(column);
    return `SELECT DISTINCT ${duckdbSql.textCut(column, maxLength)} AS v FROM (SELECT ${c} FROM ${duckdbSql.relation(table)} LIMIT ${Math.floor(rows)}) s WHERE ${c} IS NOT NULL`;
  },

  sameSpellingSql(table, column, value, limit) {
    return `SELECT DISTINCT ${asText(column)} AS v FROM ${duckdbSql.relation(table)} WHERE ${duckdbSql.sameIgnoringCase(column, value)} LIMIT ${Math.floor(limit)}`;
  },
};
