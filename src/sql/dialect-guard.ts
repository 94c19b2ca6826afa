/**
 * The guard for a database's dialect: PostgreSQL's parser-based guard (on a worker thread for long
 * texts), or another engine's guard from its profile (`dialects.ts`). Every path that runs SQL
 * picks its guard here, by `DatabaseConnector.dialect`, so a statement is always checked by the
 * grammar of the engine that will run it.
 */
import type { DatabaseConnector } from '../core/ports.js';
import { dialectProfile } from './dialects.js';
import type { GuardOptions, GuardVerdict } from './guard.js';

/** SQL dialect of a connector. */
export type SqlDialect = DatabaseConnector['dialect'];

/**
 * Checks that `sql` is exactly one read-only statement of `dialect`. Never throws.
 * The table allowlist (`options.allowTables`) is checked by every dialect's guard (rule `allowlist`).
 */
export async function guardForDialect(
  dialect: SqlDialect,
  sql: string,
  options: GuardOptions = {},
): Promise<GuardVerdict> {
  return dialectProfile(dialect).guard(sql, options);
}
