/**
 * SQL a person wrote or edited (the web UI's "Edit SQL", `POST /api/sql`), run exactly like the
 * model's SQL: one statement, the same guard (allowlist and catalog-aware checks included), the same
 * row cap and statement timeout, read-only execution, cancelled through `signal`.
 */
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { extractSqlOffThread, guardSqlOffThread } from '../sql/check-pool.js';
import { checkIdentifiers } from '../sql/identifiers.js';

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
  try {
    const result = await input.db.execute(verdict.sql, {
      maxRows: input.maxRows,
      timeoutMs: input.timeoutMs,
      ...(input.maxBytes !== undefined ? { maxBytes: input.maxBytes } : {}),
      signal: input.signal,
    });
    return { sql: verdict.sql, result };
  } catch (error) {
    throw await withNameHint(error, verdict.sql, async () => input.schema);
  }
}

/** SQLSTATEs of a name the database does not know: undefined_table, undefined_column. */
const UNKNOWN_NAME_STATES = new Set(['42P01', '42703']);

/**
 * The database's "relation … does not exist" (or unknown column) error with the closest catalog
 * names as its hint (`Did you mean orders?`), from the same identifier check the repair prompt
 * uses. Any other error, or no close name, comes back unchanged (as a SqlrecallError).
 * @param schema the catalog, read only when the error is about an unknown name
 */
export async function withNameHint(
  error: unknown,
  sql: string,
  schema: () => Promise<Schema | undefined>,
): Promise<SqlrecallError> {
  const err = toSqlrecallError(error);
  if (err.code !== 'db_query' || !UNKNOWN_NAME_STATES.has(err.details.sqlState ?? '')) return err;
  if (typeof err.details.hint === 'string') return err;
  try {
    const catalog = await schema();
    if (!catalog) return err;
    const candidates = (await checkIdentifiers(sql, catalog)).unknown.flatMap((u) => u.candidates);
    if (candidates.length === 0) return err;
    return new SqlrecallError(err.code, err.message, {
      cause: err.cause,
      details: { ...err.details, hint: `Did you mean ${[...new Set(candidates)].slice(0, 3).join(' or ')}?` },
    });
  } catch {
    return err; // the hint is a courtesy: the database's own error stands without it
  }
}
