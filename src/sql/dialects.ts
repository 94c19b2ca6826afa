/**
 * What the question pipeline says and checks per SQL dialect, in one record per engine: the name
 * used in messages, the first line and the habits of the SQL prompt, the hint sent with a parse
 * error, and the guard that judges a statement before it runs. The record is keyed by every
 * {@link DatabaseDialectName}, so adding an engine's name to that union fails to compile until the
 * engine's profile exists here; code elsewhere asks this table instead of testing `dialect === …`.
 */
import type { DatabaseDialectName } from '../core/ports.js';
import { guardSqlOffThread } from './check-pool.js';
import { guardDuckdbSql } from './duckdb/guard.js';
import type { GuardOptions, GuardVerdict } from './guard.js';
import { guardMysqlSql } from './mysql/guard.js';
import { guardSqliteSql } from './sqlite/guard.js';

/** One dialect's wording and checks; see the module comment. */
export interface DialectProfile {
  readonly name: DatabaseDialectName;
  /** The engine as named in messages and prompts, e.g. `PostgreSQL`, `MySQL/MariaDB`. */
  readonly label: string;
  /** First line of the SQL-generation system prompt (scripted tests recognise requests by it). */
  readonly promptMarker: string;
  /**
   * Lines after the marker telling the model the dialect's habits (quoting, casts, date arithmetic).
   * Empty for PostgreSQL, the dialect the prompt's rules are written in.
   */
  readonly promptHabits: readonly string[];
  /** Sent with a parse error: the habits of other dialects models bring, and this one's spelling. */
  readonly parseRepairHint: string;
  /**
   * Checks that `sql` is exactly one read-only statement of this dialect, with the table allowlist
   * when `options.allowTables` is given (rule `allowlist`). Never throws.
   */
  guard(sql: string, options: GuardOptions): Promise<GuardVerdict>;
}

const POSTGRES: DialectProfile = {
  name: 'postgres',
  label: 'PostgreSQL',
  promptMarker: 'You translate questions into one PostgreSQL query.',
  promptHabits: [],
  parseRepairHint:
    "This is PostgreSQL: identifiers in double quotes (never backticks or [brackets]), strings in single quotes, LIMIT n OFFSET m (not LIMIT m, n; no TOP), COALESCE instead of ISNULL/IFNULL/NVL, date + INTERVAL '1 day' instead of DATEADD/DATE_ADD.",
  guard: (sql, options) => guardSqlOffThread(sql, options),
};

const MYSQL: DialectProfile = {
  name: 'mysql',
  label: 'MySQL/MariaDB',
  promptMarker: 'You translate questions into one MySQL query.',
  promptHabits: [
    'The database is MySQL or MariaDB: quote identifiers with backticks, never double quotes; use CAST(x AS type), not ::; LIKE, not ILIKE; DATE_ADD/DATE_SUB with INTERVAL; LIMIT n.',
  ],
  parseRepairHint:
    'This is MySQL/MariaDB: identifiers in backticks (never double quotes), strings in single quotes, one SELECT only, no ::casts (use CAST(x AS type)), no ILIKE (use LIKE or LOWER()), DATE_ADD(d, INTERVAL 1 DAY), no FILTER (WHERE …) (use SUM(CASE WHEN … END)), no NULLS FIRST/LAST.',
  guard: (sql, options) => guardMysqlSql(sql, options),
};

const DUCKDB: DialectProfile = {
  name: 'duckdb',
  label: 'DuckDB',
  promptMarker: 'You translate questions into one DuckDB query.',
  promptHabits: [
    'The database is DuckDB, whose SQL is close to PostgreSQL: identifiers in double quotes, ILIKE, :: casts, date_trunc, INTERVAL and FILTER (WHERE …) all work. Data files are already tables: name the table, never call read_csv, read_parquet, read_json or glob, and never select FROM a file name.',
  ],
  parseRepairHint:
    "This is DuckDB (PostgreSQL-like): identifiers in double quotes (never backticks or [brackets]), strings in single quotes, one SELECT only, LIMIT n OFFSET m, COALESCE instead of ISNULL/IFNULL/NVL, date + INTERVAL 1 DAY or date_add(d, INTERVAL 1 DAY), strftime(d, '%Y-%m') to format a date; tables by name only, never read_csv('file') or FROM 'file.csv'.",
  guard: (sql, options) => guardDuckdbSql(sql, options),
};

const SQLITE: DialectProfile = {
  name: 'sqlite',
  label: 'SQLite',
  promptMarker: 'You translate questions into one SQLite query.',
  promptHabits: [
    'The database is SQLite: quote identifiers with double quotes; LIKE is already case-insensitive for ASCII (there is no ILIKE); CAST(x AS type), not ::; dates are text, use date(), datetime(), strftime() and julianday() (no date_trunc, no INTERVAL, no EXTRACT); concatenate with ||; LIMIT n OFFSET m.',
  ],
  parseRepairHint:
    "This is SQLite: identifiers in double quotes, strings in single quotes, one SELECT only, no ::casts (use CAST(x AS type)), no ILIKE (LIKE ignores ASCII case), no date_trunc/EXTRACT/INTERVAL (use strftime('%Y-%m', d), date(d, '-7 days'), julianday(a) - julianday(b)), no NOW() (use date('now')), || to concatenate.",
  guard: (sql, options) => guardSqliteSql(sql, options),
};

/** Every dialect's profile, by {@link DatabaseDialectName}. */
export const DIALECTS: Readonly<Record<DatabaseDialectName, DialectProfile>> = {
  postgres: POSTGRES,
  mysql: MYSQL,
  duckdb: DUCKDB,
  sqlite: SQLITE,
};

/** The profile of `dialect` (PostgreSQL when undefined: the default engine). */
export function dialectProfile(dialect: DatabaseDialectName | undefined): DialectProfile {
  return DIALECTS[dialect ?? 'postgres'];
}
