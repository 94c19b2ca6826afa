/**
 * SQL a person wrote or edited (the web UI's "Edit SQL", `POST /api/sql`), run exactly like the
 * model's SQL: one statement, the same guard (allowlist and catalog-aware checks included), the same
 * row cap and statement timeout, read-only execution, cancelled through `signal`.
 */
import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { extractSqlOffThread, guardSqlOffThread } from '../sql/check-pool.js';

/** Longest SQL text accepted (characters), the same bound as a question's SQL reply is far below. */
export const MAX_SQL_CHARS = 100_000;

/** What {@link runCheckedSql} needs. */
export interface RunSqlInput {
  db: DatabaseConnector;
  sql: string;
  /** The catalog, for catalog-aware guard rules and the allowlist; absent: parser checks only. */
  schema?: Schema;
  /** Allowlist mode (`--allow-tables`). */
  allowTables?: readonly string[];
  /** Row cap (the assistant's, default 1000). */
  maxRows: number;
  /** Statement timeout in ms (the assistant's, default 30000). */
  timeoutMs: number;
  /** Result byte budget (`--max-result-bytes`); default the connector's (64 MiB). */
  maxBytes?: number;
  /** Aborting it cancels the running statement. */
  signal?: AbortSignal;
}

/**
 * Guards and runs one statement.
 * @returns the statement as the guard normalised it, and its result
 * @throws SqlrecallError `usage` (empty or too long), `guard_refused` (several statements, a write,
 *   a refused function or relation), `db_*` (the database's own error, or its cancellation)
 */
export async function runCheckedSql(input: RunSqlInput): Promise<{ sql: string; result: QueryResult }> {
  const text = input.sql.trim();
  if (text === '') throw new SqlrecallError('usage', 'There is no SQL to run.');
  if (text.length > MAX_SQL_CHARS)
    throw new SqlrecallError('usage', `The SQL is longer than ${MAX_SQL_CHARS} characters.`);
  // A long text is parsed and checked on a worker thread in a server (sql/check-pool.ts).
  const extracted = await extractSqlOffThread(text);
  if (!extracted.ok && extracted.statements)
    throw new SqlrecallError('guard_refused', `Refused: ${extracted.reason}`, {
      details: { rule: 'multiple-statements' },
    });
  const verdict = await guardSqlOffThread(extracted.ok ? extracted.sql : text, {
    allowTables: input.allowTables,
    schema: input.schema,
  });
  if (!verdict.ok)
    throw new SqlrecallError('guard_refused', `Refused: ${verdict.reason.replace(/^refused: /, '')}`, {
      details: { rule: verdict.rule },
    });
  const result = await input.db.execute(verdict.sql, {
    maxRows: input.maxRows,
    timeoutMs: input.timeoutMs,
    ...(input.maxBytes !== undefined ? { maxBytes: input.maxBytes } : {}),
    signal: input.signal,
  });
  return { sql: verdict.sql, result };
}
