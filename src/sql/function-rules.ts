/**
 * The function policy as data. The guard
 * (`guard.ts`) knows PostgreSQL's built-ins by name; `function-policy.ts` judges every other
 * function a statement calls from the target database's catalog (`pg_proc`, `pg_extension`,
 * `pg_depend`) using the lists below. A function outside `pg_catalog` is allowed only when it is
 * IMMUTABLE or STABLE, is not SECURITY DEFINER, belongs to no extension listed here, is written in
 * a language listed in {@link CHECKED_LANGUAGES} (or is C/internal code of an extension), and, for
 * SQL and PL/pgSQL bodies, calls nothing this policy refuses. Anything else needs
 * `--allow-functions` / `SQLRECALL_ALLOW_FUNCTIONS`. Sources: PostgreSQL 15–18 "Additional
 * Supplied Modules" (dblink, postgres_fdw, file_fdw, adminpack, lo, pageinspect, pg_walinspect,
 * pg_prewarm) and the documentation of the third-party extensions named.
 */

/** Extensions whose functions are refused whatever their volatility, with the reason shown. */
export const DENIED_EXTENSIONS: Readonly<Record<string, string>> = {
  dblink: 'opens connections to other databases, where it can write outside the read-only transaction',
  postgres_fdw: 'manages connections to other PostgreSQL servers',
  file_fdw: 'reads files and program output on the database server',
  adminpack: 'writes, renames and removes files on the database server',
  lo: 'manages large objects (its trigger function unlinks them)',
  pageinspect: 'reads raw data pages, bypassing column privileges and row-level security',
  pg_walinspect: 'reads the write-ahead log, which holds changes of every database on the server',
  pg_prewarm: 'loads relations into server memory on demand',
  pg_background: 'runs SQL in a background worker, outside the read-only transaction',
  pg_cron: 'schedules SQL jobs that run outside the read-only transaction',
  http: 'sends HTTP requests from the database server',
  pg_net: 'sends HTTP requests from the database server',
  plpython3u: 'runs untrusted Python on the database server',
  plperlu: 'runs untrusted Perl on the database server',
  pltclu: 'runs untrusted Tcl on the database server',
};

/**
 * Languages whose bodies the policy reads: `sql` bodies are parsed with the PostgreSQL parser;
 * `plpgsql` bodies are scanned conservatively (every `name(` is a call, `EXECUTE` is refused).
 */
export const CHECKED_LANGUAGES: readonly string[] = ['sql', 'plpgsql'];

/**
 * Languages of compiled code: allowed outside `pg_catalog` only for functions of an extension
 * that is not in {@link DENIED_EXTENSIONS} (the extension's author vouches for the code; a
 * stand-alone C function is refused: nothing can be read of it).
 */
export const COMPILED_LANGUAGES: readonly string[] = ['c', 'internal'];

/** How deep function bodies and view definitions are followed before the policy refuses. */
export const MAX_BODY_DEPTH = 8;

/** How long a catalog verdict is reused on one connection before it is read again (ms). */
export const POLICY_CACHE_MS = 60_000;

/**
 * Relations whose `query` column shows the statements of other sessions (a password in an
 * `ALTER ROLE … PASSWORD`, another user's data in a literal) to a role that may see them
 * (superuser or `pg_read_all_stats`); reading that column, or the whole row, is refused on such
 * a connection. Matched by name in any schema.
 */
export const SESSION_TEXT_RELATIONS: readonly string[] = ['pg_stat_activity', 'pg_stat_statements'];

/** Functions behind {@link SESSION_TEXT_RELATIONS}, refused on the same connections. */
export const SESSION_TEXT_FUNCTIONS: readonly string[] = [
  'pg_stat_get_activity',
  'pg_stat_get_backend_activity',
  'pg_stat_statements',
];
