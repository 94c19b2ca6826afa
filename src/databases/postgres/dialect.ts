/**
 * The SQL sqlrecall writes for itself on PostgreSQL (not the model's SQL): bounded samples of a
 * table's values, the check of a value's stored spellings, and the read of the session's date,
 * time zone and search path. Driver-independent text: the same statements run through `pg` on a
 * server, through PGlite in this process and through the shared-socket client of another process's
 * PGlite (the connectors in `postgres/` and `pglite/` are the drivers under this dialect). The
 * pipeline (`agent/`, `linking/`) asks this module for SQL instead of writing PostgreSQL itself, so
 * a second database would bring its own dialect object of the same shape.
 */
import type { Table } from '../../core/schema.js';
import { quoteIdent } from '../../sql/render.js';

/**
 * Above this planner row estimate a sample takes `TABLESAMPLE SYSTEM` pages instead of the first
 * rows (on a large table the first pages are often the oldest rows only).
 */
export const TABLESAMPLE_MIN_ROWS = 100_000;

/** What the database says about the session: its today, time zone and search path. */
export interface DatabaseSession {
  /** `current_date` as YYYY-MM-DD. */
  today: string;
  /** The `TimeZone` setting, e.g. `Pacific/Kiritimati`; absent when unknown. */
  timeZone?: string;
  /** `current_schemas(false)`: the schemas an unqualified name is looked up in. */
  searchPath?: string[];
}

/** The PostgreSQL SQL sqlrecall itself writes; see the module comment. */
export interface SqlDialect {
  /** `schema.table`, both quoted. */
  relation(table: Table): string;
  /**
   * A FROM item with at most `rows` rows of `table` and never a full scan: the first rows, or a
   * `TABLESAMPLE SYSTEM` share sized for about four times `rows` above {@link TABLESAMPLE_MIN_ROWS}
   * estimated rows (plain tables only). Used inside `(SELECT … FROM <item> LIMIT rows)`.
   */
  sampledFrom(table: Table, rows: number): string;
  /**
   * Distinct non-null values of one column (as text, cut to `maxLength` characters) among the
   * first `rows` rows of {@link SqlDialect.sampledFrom}; one column `v`.
   */
  columnSampleSql(table: Table, column: string, rows: number, maxLength: number): string;
  /** The column's distinct stored spellings equal to `value` ignoring case, at most `limit`; one column `v`. */
  sameSpellingSql(table: Table, column: string, value: string, limit: number): string;
  /** One row: today (YYYY-MM-DD), the TimeZone setting and the search path as a JSON array text. */
  readonly sessionSql: string;
  /**
   * {@link DatabaseSession} from the row of {@link SqlDialect.sessionSql}.
   * @returns undefined when the row holds no valid date
   */
  sessionFromRow(row: readonly unknown[]): DatabaseSession | undefined;
}

/** A standard SQL string literal (quotes doubled; standard_conforming_strings is on since 9.1). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The PostgreSQL dialect. */
export const postgresDialect: SqlDialect = {
  relation: (table) => `${quoteIdent(table.schema)}.${quoteIdent(table.name)}`,

  sampledFrom(table, rows) {
    const estimate = table.estimatedRows ?? 0;
    const sample =
      table.kind === 'table' && estimate > TABLESAMPLE_MIN_ROWS
        ? ` TABLESAMPLE SYSTEM (${Math.max(0.01, Math.min(100, (100 * rows * 4) / estimate)).toFixed(4)})`
        : '';
    return `${postgresDialect.relation(table)}${sample}`;
  },

  columnSampleSql(table, column, rows, maxLength) {
    const c = quoteIdent(column);
    return `SELECT DISTINCT left(${c}::text, ${maxLength}) AS v FROM (SELECT ${c} FROM ${postgresDialect.sampledFrom(table, rows)} LIMIT ${rows}) s WHERE ${c} IS NOT NULL`;
  },

  sameSpellingSql(table, column, value, limit) {
    const c = quoteIdent(column);
    return `SELECT DISTINCT ${c}::text AS v FROM ${postgresDialect.relation(table)} WHERE lower(${c}::text) = lower(${literal(value)}) LIMIT ${limit}`;
  },

  sessionSql:
    "SELECT to_char(current_date, 'YYYY-MM-DD') AS today, current_setting('TimeZone') AS time_zone, array_to_json(current_schemas(false))::text AS search_path",

  sessionFromRow(row) {
    const [today, timeZone, path] = row;
    if (typeof today !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(today)) return undefined;
    let searchPath: string[] | undefined;
    try {
      const parsed = JSON.parse(String(path)) as unknown;
      if (Array.isArray(parsed)) searchPath = parsed.map(String);
    } catch {
      searchPath = undefined;
    }
    return {
      today,
      ...(typeof timeZone === 'string' && timeZone !== '' ? { timeZone } : {}),
      ...(searchPath ? { searchPath } : {}),
    };
  },
};
