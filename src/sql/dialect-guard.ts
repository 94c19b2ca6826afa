/**
 * The guard for a database's dialect: PostgreSQL's parser-based guard (on a worker thread for long
 * texts), or the MySQL/MariaDB guard. Every path that runs SQL picks its guard here, by
 * `DatabaseConnector.dialect`, so a statement is always checked by the grammar of the engine that
 * will run it.
 */
import type { DatabaseConnector } from '../core/ports.js';
import { guardSqlOffThread } from './check-pool.js';
import type { GuardOptions, GuardVerdict } from './guard.js';
import { guardMysqlSql } from './mysql/guard.js';

/** SQL dialect of a connector. */
export type SqlDialect = DatabaseConnector['dialect'];

/**
 * Checks that `sql` is exactly one read-only statement of `dialect`. Never throws.
 * The table allowlist (`options.allowTables`) is implemented for PostgreSQL only: with MySQL it
 * refuses every statement (rule `allowlist`) rather than run one it did not check.
 */
export async function guardForDialect(
  dialect: SqlDialect,
  sql: string,
  options: GuardOptions = {},
): Promise<GuardVerdict> {
  if (dialect !== 'mysql') return guardSqlOffThread(sql, options);
  if (options.allowTables && options.allowTables.length > 0)
    return {
      ok: false,
      rule: 'allowlist',
      reason:
        'refused: the table allowlist (--allow-tables) is not supported for MySQL/MariaDB yet; use a read-only user with grants on those tables instead',
    };
  return guardMysqlSql(sql);
}
