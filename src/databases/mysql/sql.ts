/**
 * The SQL sqlrecall writes for itself on MySQL and MariaDB ({@link SqlDialect}): bounded samples
 * of a table's values, the check of a value's stored spellings, the read of the session's date,
 * time zone and database. Identifiers are quoted with backticks; there is no TABLESAMPLE, so a
 * sample is the first rows a LIMIT gives, inside a subquery (never a full scan). Values are
 * compared as utf8mb4 under a binary collation, so `EMEA` and `emea` stay two values (the
 * default collations fold case and accents).
 */
import type { DatabaseSession, SqlDialect } from '../engine.js';

/** `name` in backticks (a backtick inside doubled): always quoted, so no keyword can clash. */
export function quoteMysqlIdent(name: string): string {
  return `\`${name.replaceAll('`', '``')}\``;
}

/** A string literal with quotes doubled and backslashes doubled (the default sql_mode reads `\` as an escape). */
export function mysqlLiteral(value: string): string {
  return `'${value.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`;
}

/** A column's value as utf8mb4 text cut to `length` characters, compared byte for byte. */
export function mysqlTextCut(column: string, length: number): string {
  return `LEFT(CONVERT(${quoteMysqlIdent(column)} USING utf8mb4), ${Math.floor(length)}) COLLATE utf8mb4_bin`;
}

/** The SQL sqlrecall writes for itself on MySQL/MariaDB (see the module comment). */
export const mysqlSql: SqlDialect = {
  relation: (table) => `${quoteMysqlIdent(table.schema)}.${quoteMysqlIdent(table.name)}`,

  // No TABLESAMPLE: the caller's LIMIT bounds the read.
  sampledFrom: (table) => mysqlSql.relation(table),

  columnSampleSql(table, column, rows, maxLength) {
    const c = quoteMysqlIdent(column);
    return `SELECT DISTINCT ${mysqlTextCut(column, maxLength)} AS v FROM (SELECT ${c} FROM ${mysqlSql.relation(table)} LIMIT ${Math.floor(rows)}) s WHERE ${c} IS NOT NULL`;
  },

  sameSpellingSql(table, column, value, limit) {
    const c = quoteMysqlIdent(column);
    return `SELECT DISTINCT CONVERT(${c} USING utf8mb4) COLLATE utf8mb4_bin AS v FROM ${mysqlSql.relation(table)} WHERE LOWER(CONVERT(${c} USING utf8mb4)) = LOWER(${mysqlLiteral(value)}) LIMIT ${Math.floor(limit)}`;
  },

  sessionSql:
    "SELECT DATE_FORMAT(CURDATE(), '%Y-%m-%d') AS today, @@session.time_zone AS time_zone, JSON_ARRAY(DATABASE()) AS search_path",

  sessionFromRow(row): DatabaseSession | undefined {
    const [today, timeZone, path] = row;
    if (typeof today !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(today)) return undefined;
    let searchPath: string[] | undefined;
    try {
      const parsed = JSON.parse(String(path)) as unknown;
      // No database selected: JSON_ARRAY(NULL) is `[null]`.
      if (Array.isArray(parsed)) searchPath = parsed.filter((p): p is string => typeof p === 'string');
    } catch {
      searchPath = undefined;
    }
    return {
      today,
      // SYSTEM names no zone: the server's own, unknown here.
      ...(typeof timeZone === 'string' && timeZone !== '' && timeZone !== 'SYSTEM' ? { timeZone } : {}),
      ...(searchPath && searchPath.length > 0 ? { searchPath } : {}),
    };
  },
};
