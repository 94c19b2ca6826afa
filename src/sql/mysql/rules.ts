/**
 * The MySQL/MariaDB guard's rules as data: functions refused with a reason, the built-in functions
 * accepted, and the system databases no statement may read. A function in neither list is
 * refused: it may be a stored function, whose body the guard cannot see.
 */

/** Functions refused with the reason shown to the user (lower case names). */
export const REFUSED_FUNCTIONS: ReadonlyMap<string, string> = new Map([
  ['sleep', 'SLEEP holds the connection without reading anything'],
  ['benchmark', 'BENCHMARK burns server time on purpose'],
  ['get_lock', 'GET_LOCK takes a server-wide named lock'],
  ['release_lock', 'RELEASE_LOCK changes server-wide named locks'],
  ['release_all_locks', 'RELEASE_ALL_LOCKS changes server-wide named locks'],
  ['is_free_lock', 'named locks are not data'],
  ['is_used_lock', 'named locks are not data'],
  ['load_file', 'LOAD_FILE reads files on the database server'],
  ['master_pos_wait', 'it waits on replication'],
  ['source_pos_wait', 'it waits on replication'],
  ['master_gtid_wait', 'it waits on replication'],
  ['wait_for_executed_gtid_set', 'it waits on replication'],
  ['wait_until_sql_thread_after_gtids', 'it waits on replication'],
  ['nextval', 'NEXTVAL advances a sequence (a write)'],
  ['setval', 'SETVAL changes a sequence (a write)'],
  ['lastval', 'sequence state is not data'],
  ['last_insert_id', 'LAST_INSERT_ID(expr) changes session state'],
  ['sys_exec', 'it runs programs on the database server'],
  ['sys_eval', 'it runs programs on the database server'],
  ['uuid_short', 'it advances a server counter'],
]);

/** Built-in functions accepted (lower case). Aggregates, window functions and scalar functions. */
export const BUILTIN_FUNCTIONS: ReadonlySet<string> = new Set(
  `
  count sum avg min max group_concat std stddev stddev_pop stddev_samp var_pop var_samp variance
  bit_and bit_or bit_xor json_arrayagg json_objectagg any_value
  row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
  median percentile_cont percentile_disc
  abs acos asin atan atan2 ceil ceiling conv cos cot crc32 degrees exp floor ln log log10 log2 mod pi
  pow power radians rand round sign sin sqrt tan truncate greatest least
  ascii bin bit_length char char_length character_length concat concat_ws elt export_set field
  find_in_set format from_base64 to_base64 hex unhex insert instr lcase lower left length locate lpad
  ltrim make_set mid oct octet_length ord position quote repeat replace reverse right rpad rtrim soundex
  space strcmp substr substring substring_index trim ucase upper weight_string regexp_instr regexp_like
  regexp_replace regexp_substr natural_sort_key sformat
  adddate addtime convert_tz curdate current_date current_time current_timestamp curtime date date_add
  date_format date_sub datediff day dayname dayofmonth dayofweek dayofyear extract from_days
  from_unixtime get_format hour last_day localtime localtimestamp makedate maketime microsecond minute
  month monthname now period_add period_diff quarter sec_to_time second str_to_date subdate subtime
  sysdate time time_format time_to_sec timediff timestamp timestampadd timestampdiff to_days to_seconds
  unix_timestamp utc_date utc_time utc_timestamp week weekday weekofyear year yearweek add_months
  cast convert coalesce if ifnull isnull nullif nvl nvl2 interval exists
  md5 sha sha1 sha2 compress uncompress uncompressed_length crc32c
  json_array json_array_append json_array_insert json_contains json_contains_path json_depth
  json_extract json_insert json_keys json_length json_merge json_merge_patch json_merge_preserve
  json_object json_overlaps json_pretty json_quote json_remove json_replace json_search json_set
  json_type json_unquote json_valid json_value json_exists json_query json_compact json_detailed
  json_loose json_storage_size json_table json_equals json_normalize member_of
  inet_aton inet_ntoa inet6_aton inet6_ntoa is_ipv4 is_ipv6 uuid bin_to_uuid uuid_to_bin is_uuid
  st_astext st_aswkt st_x st_y st_distance st_geomfromtext st_contains st_within st_intersects
  point linestring polygon
  charset collation coercibility database schema version found_rows row_count
  `
    .split(/\s+/)
    .filter((name) => name !== ''),
);

/** Databases holding the server's catalog, privileges and live state: never read by a question. */
export const SYSTEM_DATABASES: ReadonlySet<string> = new Set([
  'mysql',
  'information_schema',
  'performance_schema',
  'sys',
]);
