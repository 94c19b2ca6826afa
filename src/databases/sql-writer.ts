/**
 * The SQL sqlrecall writes for itself about the values of a table, per engine: bounded samples of
 * a column's distinct values (value hints, the empty-result check), the stored spellings of a value
 * ignoring case (example reuse, the empty-result check), and whether a literal filter matches any
 * row at all. One {@link SqlWriter} per {@link DatabaseDialectName}, so adding an engine's name to
 * that union fails to compile until its writer exists here. Every statement is built from catalog
 * identifiers, quoted, and from values written as the engine's string literals; none is ever the
 * model's SQL, and each runs through the connector's read-only execution.
 */
import type { DatabaseDialectName } from '../core/ports.js';
import type { Table } from '../core/schema.js';
import { quoteIdent } from '../sql/render.js';
import { duckdbSql } from './duckdb/sql.js';
import type { SqlDialect } from './engine.js';
import { mysqlLiteral, mysqlSql, mysqlTextCut, quoteMysqlIdent } from './mysql/sql.js';
import { postgresDialect } from './postgres/dialect.js';
import { sqliteSql } from './sqlite/sql.js';

/** How one engine spells the statements of the module comment. */
export interface SqlWriter
  extends Pick<SqlDialect, 'relation' | 'sampledFrom' | 'columnSampleSql' | 'sameSpellingSql'> {
  /** `name` as a quoted identifier (always quoted, so no keyword can clash). */
  quote(name: string): string;
  /** `value` as a string literal of the engine. */
  literal(value: string): string;
  /** The clause that keeps at most `rows` rows, with its leading space (` LIMIT 5`). */
  limit(rows: number): string;
  /** A column's value as text, cut to `length` characters; distinct values are compared exactly (case kept). */
  textCut(column: string, length: number): string;
  /** A condition: the column's value as text equals `value` ignoring case. */
  sameIgnoringCase(column: string, value: string): string;
  /** The values of a subquery's column `v` gathered into one array: JSON text or a list (SQL NULL when none). */
  listOf(expression: string): string;
  /**
   * Whether a data policy's row filter (written in PostgreSQL by `policy/visibility.ts`) can be put
   * in this engine's statements; when not, a filtered table is not sampled (fail closed).
   */
  readonly rowFilters: boolean;
  /**
   * Whether views are sampled. PostgreSQL and MySQL views may aggregate whole tables, so only base
   * tables are read there; DuckDB's views are mostly data files read in place (a folder of CSV or
   * Parquet), which a LIMIT stops reading early.
   */
  readonly sampleViews: boolean;
}

/** A standard SQL string literal (quotes doubled, backslashes literal). */
export function standardLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

const POSTGRES_WRITER: SqlWriter = {
  relation: postgresDialect.relation,
  sampledFrom: postgresDialect.sampledFrom,
  columnSampleSql: postgresDialect.columnSampleSql,
  sameSpellingSql: postgresDialect.sameSpellingSql,
  quote: quoteIdent,
  literal: standardLiteral,
  limit: (rows) => ` LIMIT ${Math.floor(rows)}`,
  textCut: (column, length) => `left(${quoteIdent(column)}::text, ${Math.floor(length)})`,
  sameIgnoringCase: (column, value) =>
    `lower(${quoteIdent(column)}::text) = lower(${standardLiteral(value)})`,
  listOf: (expression) => `json_agg(${expression})`,
  rowFilters: true,
  sampleViews: false,
};

const MYSQL_WRITER: SqlWriter = {
  relation: mysqlSql.relation,
  sampledFrom: mysqlSql.sampledFrom,
  columnSampleSql: mysqlSql.columnSampleSql,
  sameSpellingSql: mysqlSql.sameSpellingSql,
  quote: quoteMysqlIdent,
  literal: mysqlLiteral,
  limit: (rows) => ` LIMIT ${Math.floor(rows)}`,
  textCut: mysqlTextCut,
  sameIgnoringCase: (column, value) =>
    `LOWER(CONVERT(${quoteMysqlIdent(column)} USING utf8mb4)) = LOWER(${mysqlLiteral(value)})`,
  listOf: (expression) => `JSON_ARRAYAGG(${expression})`,
  rowFilters: false,
  sampleViews: false,
};

/** Every engine's writer, by {@link DatabaseDialectName}. */
export const SQL_WRITERS: Readonly<Record<DatabaseDialectName, SqlWriter>> = {
  postgres: POSTGRES_WRITER,
  mysql: MYSQL_WRITER,
  sqlite: sqliteSql,
  duckdb: duckdbSql,
};

/** The writer of `dialect` (PostgreSQL when undefined: the default engine). */
export function sqlWriter(dialect: DatabaseDialectName | undefined): SqlWriter {
  return SQL_WRITERS[dialect ?? 'postgres'];
}

/**
 * One row (`v` = 1) when some row of `table` passes `column = value` (or `column LIKE value`)
 * compared the engine's own way, as the statement that wrote the filter compared it; no row when
 * none does. With `rowFilter` (a data policy's, PostgreSQL only) only the rows passing it count.
 * @throws Error when `rowFilter` is given for an engine that cannot take it
 */
export function literalMatchesSql(
  writer: SqlWriter,
  table: Table,
  column: string,
  operator: '=' | 'like',
  value: string,
  rowFilter?: string,
): string {
  if (rowFilter !== undefined && !writer.rowFilters)
    throw new Error('a row filter cannot be written for this engine');
  const condition = `${writer.quote(column)} ${operator === 'like' ? 'LIKE' : '='} ${writer.literal(value)}`;
  const filter = rowFilter === undefined ? '' : ` AND (${rowFilter})`;
  return `SELECT 1 AS v FROM ${writer.relation(table)} WHERE ${condition}${filter}${writer.limit(1)}`;
}
