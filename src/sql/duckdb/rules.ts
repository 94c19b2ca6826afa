/**
 * The DuckDB guard's rules as data: the few table functions a question may call, the built-in
 * scalar functions refused with a reason, and what a table name that is really a file looks like.
 * Every other table function is refused: most of them read files (`read_csv`, `glob`,
 * `parquet_metadata`), run SQL given as text (`query`), or show and change the engine's state
 * (`duckdb_settings`, `enable_logging`). Scalar, aggregate and window functions must be the
 * engine's own built-ins (a macro stored in a database file is refused: the guard cannot see
 * its body).
 */

/** Table functions accepted (lower case): generators, JSON expansion and catalog listings. */
export const ALLOWED_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'range',
  'generate_series',
  'unnest',
  'json_each',
  'json_tree',
  'duckdb_tables',
  'duckdb_views',
  'duckdb_columns',
  'duckdb_constraints',
  'duckdb_schemas',
  'duckdb_types',
  'duckdb_indexes',
]);

/** Why a table function outside {@link ALLOWED_TABLE_FUNCTIONS} is refused, by its name. */
export function tableFunctionRefusal(name: string): string {
  if (/^(read_|parquet_|sniff_|iceberg_|delta_)|^glob$|_scan$/.test(name))
    return `${name}() reads files directly; the files are already tables: name the table instead`;
  if (name === 'query' || name === 'query_table' || name === 'json_execute_serialized_sql')
    return `${name}() runs SQL given as text, which the guard cannot check`;
  return `${name}() is not a table function a question may call (it shows or changes the engine's state)`;
}

/** Built-in scalar functions refused, with the reason shown to the user (lower case names). */
export const REFUSED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['sleep_ms', 'SLEEP_MS holds the connection without reading anything'],
  ['pg_sleep', 'PG_SLEEP holds the connection without reading anything'],
  ['getvariable', 'session variables are not data'],
  ['current_setting', "the engine's settings are not data"],
  ['setseed', 'SETSEED changes session state'],
  ['nextval', 'NEXTVAL advances a sequence (a write)'],
  ['currval', 'sequence state is not data'],
  ['write_log', "WRITE_LOG writes to the engine's log"],
  ['json_execute_serialized_sql', 'it runs SQL given as a parse tree, which the guard cannot check'],
]);

/**
 * Function names the parser writes for syntax (operators, `[…]`, `{…}`, list comprehensions,
 * EXTRACT…) that may not appear among the engine's listed functions; accepted like built-ins.
 */
export const SYNTAX_FUNCTIONS: ReadonlySet<string> = new Set([
  'list_value',
  'struct_pack',
  'row',
  'list_apply',
  'list_filter',
  'array_extract',
  'array_slice',
  'list_extract',
  'list_slice',
  'date_part',
  'main.unnest',
  'unnest',
  'grouping',
  'grouping_id',
  'row_number',
  'rank',
  'dense_rank',
  'percent_rank',
  'cume_dist',
  'ntile',
  'lag',
  'lead',
  'first_value',
  'last_value',
  'nth_value',
  'fill',
]);

/**
 * True when a table name is really a file or a URL for DuckDB's replacement scans
 * (`FROM 'sales.csv'`, `FROM "data/x.parquet"`, `FROM 's3://…'`): a dot, a slash, a backslash or
 * a colon. Such names would read a file without naming a table, so they are refused.
 */
export function looksLikeFile(tableName: string): boolean {
  return /[./\\:]/.test(tableName);
}
