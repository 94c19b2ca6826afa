/**
 * The database's own today, time zone and search path, read once per session by the question
 * pipeline so the prompt's "today" is the database's, not the process clock's.
 */

import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector } from '../core/ports.js';
import { type DatabaseSession, postgresDialect } from '../databases/postgres/dialect.js';

export type { DatabaseSession } from '../databases/postgres/dialect.js';

/** The one statement {@link readDatabaseSession} runs (the pipeline's own read, never model SQL). */
export const DATABASE_SESSION_SQL = postgresDialect.sessionSql;

/**
 * Reads the session's today, time zone and search path with one read-only statement through the
 * connector (the dialect writes and reads it).
 * @throws SqlrecallError `db_*` when the database cannot answer.
 */
export async function readDatabaseSession(
  db: DatabaseConnector,
  timeoutMs: number,
): Promise<DatabaseSession> {
  const result = await db.execute(DATABASE_SESSION_SQL, { maxRows: 1, timeoutMs });
  const session = postgresDialect.sessionFromRow(result.rows[0] ?? []);
  if (!session) throw new SqlrecallError('db_query', 'The database did not report its current date.');
  return session;
}
