/**
 * The database's own today, time zone and search path, read once per session by the question
 * pipeline so the prompt's "today" is the database's, not the process clock's.
 */

import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, DatabaseDialectName } from '../core/ports.js';
import type { SqlDialect } from '../databases/engine.js';
import { mysqlSql } from '../databases/mysql/sql.js';
import { type DatabaseSession, postgresDialect } from '../databases/postgres/dialect.js';

export type { DatabaseSession } from '../databases/postgres/dialect.js';

/** The one statement {@link readDatabaseSession} runs (the pipeline's own read, never model SQL). */
export const DATABASE_SESSION_SQL = postgresDialect.sessionSql;

/**
 * The dialects whose session statement sqlrecall writes. SQLite has no session date or zone of its
 * own (its `date('now')` is UTC) and DuckDB's is the process's, so those read the process clock.
 */
const SESSION_SQL: Partial<Record<DatabaseDialectName, SqlDialect>> = {
  postgres: postgresDialect,
  mysql: mysqlSql,
};

/**
 * Reads the session's today, time zone and search path with one read-only statement through the
 * connector (the dialect writes and reads it).
 * @throws SqlrecallError `db_*` when the database cannot answer; `db_query` for a dialect without
 *   a session statement (the caller then uses the process clock)
 */
export async function readDatabaseSession(
  db: DatabaseConnector,
  timeoutMs: number,
): Promise<DatabaseSession> {
  const dialect = SESSION_SQL[db.dialect ?? 'postgres'];
  if (!dialect)
    throw new SqlrecallError('db_query', `The ${db.dialect} database has no session date to read.`);
  const result = await db.execute(dialect.sessionSql, { maxRows: 1, timeoutMs });
  const session = dialect.sessionFromRow(result.rows[0] ?? []);
  if (!session) throw new SqlrecallError('db_query', 'The database did not report its current date.');
  return session;
}
