/**
 * The SQLite guard's rules as data: the statement keywords no read contains, the keywords that may
 * stand before a parenthesis without being a function call, the functions refused with a reason,
 * and the built-in functions accepted. A function in neither list is refused: an application can
 * register functions of its own on a connection, and the guard cannot see what they do.
 */

/** Keywords that make a statement something other than a read, wherever they stand (lower case). */
export const WRITE_KEYWORDS: ReadonlyMap<string, string> = new Map([
  ['insert', 'INSERT writes rows'],
  ['update', 'UPDATE writes rows'],
  ['delete', 'DELETE removes rows'],
  ['replace', 'REPLACE writes rows'],
  ['upsert', 'an upsert writes rows'],
  ['returning', 'RETURNING belongs to a write'],
  ['into', 'INTO writes somewhere else (INSERT INTO, VACUUM INTO)'],
  ['create', 'CREATE changes the schema'],
  ['drop', 'DROP changes the schema'],
  ['alter', 'ALTER changes the schema'],
  ['attach', 'ATTACH opens another database file'],
  ['detach', 'DETACH changes the connection'],
  ['pragma', 'PRAGMA statements read or change the connection and file settings'],
  ['vacuum', 'VACUUM rewrites the database file (VACUUM INTO writes a copy)'],
  ['reindex', 'REINDEX rebuilds indexes'],
  ['analyze', 'ANALYZE writes statistics tables'],
  ['begin', 'transaction control is the connector’s'],
  ['commit', 'transaction control is the connector’s'],
  ['rollback', 'transaction control is the connector’s'],
  ['savepoint', 'transaction control is the connector’s'],
  ['release', 'transaction control is the connector’s'],
  ['transaction', 'transaction control is the connector’s'],
  ['trigger', 'triggers change the schema'],
  ['explain', 'EXPLAIN shows the engine’s program, not data'],
]);

/**
 * Keywords that may stand right before `(` in a read without naming a function (lower case):
 * `IN (…)`, `EXISTS (…)`, `AS (…)` of a CTE, `OVER (…)`, `FILTER (…)`, `CAST(… AS …)`, …
 */
export const KEYWORDS_BEFORE_PAREN: ReadonlySet<string> = new Set(
  `
  in exists as over filter using values and or not on where select from by when then else case is
  like glob regexp match between distinct all union intersect except join having escape recursive
  materialized with limit offset cast partition order group window rows range groups preceding
  following current exclude return collate isnull notnull
  `
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/** Functions refused with the reason shown to the user (lower case names). */
export const REFUSED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['load_extension', 'LOAD_EXTENSION loads native code into the process'],
  ['readfile', 'READFILE reads files from the disk'],
  ['writefile', 'WRITEFILE writes files to the disk'],
  ['edit', 'EDIT starts an editor program'],
  ['fts3_tokenizer', 'FTS3_TOKENIZER can register native code pointers'],
  ['sqlar_compress', 'sqlar functions belong to archive tools, not reads'],
  ['sqlar_uncompress', 'sqlar functions belong to archive tools, not reads'],
  ['zeroblob', 'ZEROBLOB builds blobs of any size in memory'],
  ['randomblob', 'RANDOMBLOB builds blobs of any size in memory'],
  ['changes', 'connection state is not data'],
  ['total_changes', 'connection state is not data'],
  ['last_insert_rowid', 'connection state is not data'],
  ['sqlite_offset', 'file offsets are not data'],
  ['sqlite_compileoption_get', 'build options are not data'],
  ['sqlite_compileoption_used', 'build options are not data'],
  ['raise', 'RAISE belongs to triggers'],
]);

/** Built-in functions accepted (lower case): scalar, date, math, JSON, aggregate and window functions. */
export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set(
  `
  abs char coalesce concat concat_ws format glob hex if ifnull iif instr length like likelihood
  likely lower ltrim max min nullif octet_length printf quote random replace round rtrim sign soundex
  sqlite_version sqlite_source_id substr substring trim typeof unhex unicode unlikely upper
  date time datetime julianday unixepoch strftime timediff
  acos acosh asin asinh atan atan2 atanh ceil ceiling cos cosh degrees exp floor ln log log10 log2 mod
  pi pow power radians sin sinh sqrt tan tanh trunc
  avg count group_concat string_agg sum total median percentile percentile_cont percentile_disc
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  json jsonb json_array jsonb_array json_array_length json_error_position json_extract jsonb_extract
  json_insert jsonb_insert json_object jsonb_object json_patch jsonb_patch json_pretty json_remove
  jsonb_remove json_replace jsonb_replace json_set jsonb_set json_type json_valid json_quote
  json_group_array jsonb_group_array json_group_object jsonb_group_object json_each json_tree
  generate_series
  `
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/**
 * Names SQLite keeps for itself (lower-case prefixes): its catalog and statistics tables
 * (`sqlite_schema`, `sqlite_master`, `sqlite_stat1`, `sqlite_dbpage`, …) and the table-valued
 * pragma functions (`pragma_table_info`, `pragma_database_list`, …). Never read by a question.
 */
export const SYSTEM_PREFIXES: readonly string[] = ['sqlite_', 'pragma_'];
