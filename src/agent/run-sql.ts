/**
 * The one path of SQL a person wrote or edited (`sqlrecall sql`, `POST /api/sql`, the MCP `sql`
 * tool) and of a saved example reused without the model: exactly one statement, the same guard
 * (allowlist included) and catalog-aware function policy as the model's SQL, the same row cap,
 * byte budget and statement timeout, read-only execution, cancelled through `signal`, and a "did
 * you mean" hint when a name is unknown. Front ends reach it through `app/run-sql.ts`.
 */
import {
  failedStatement,
  finishedStatement,
  notifyStatement,
  type StatementListener,
  type StatementOrigin,
} from '../core/audit.js';
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, QueryResult } from '../core/ports.js';
import { emptySql, guardRefusal } from '../core/refusal.js';
import type { Schema } from '../core/schema.js';
import { guardForDialect, type SqlDialect } from '../sql/dialect-guard.js';
import { checkIdentifiers } from '../sql/identifiers.js';

/** Longest SQL text accepted (characters): one statement, not a dump. */
export const MAX_SQL_CHARS = 100_000;

/**
 * The usage error of a statement over {@link MAX_SQL_CHARS} characters.
 * @param where where the text came from, with a trailing space (`on standard input `), or ''
 */
export function sqlTooLong(where = ''): SqlrecallError<'usage'> {
  return new SqlrecallError(
    'usage',
    `The SQL ${where}is longer than ${MAX_SQL_CHARS.toLocaleString('en')} characters, the limit of one statement.`,
    { details: { hint: 'Run one statement at a time; put long value lists in a table and join it.' } },
  );
}

/** The catalog: a value, or a reader called only when a check needs it (see {@link RunSqlInput}). */
export type CatalogSource = Schema | (() => Promise<Schema | undefined>);

/** What {@link runCheckedSql} needs. */
export interface RunSqlInput {
  /** The database, or how to open it: opened only once the statement passed the guard. */
  db: DatabaseConnector | (() => Promise<DatabaseConnector>);
  /**
   * The database's dialect, which picks the guard; needed when `db` is opened lazily (default:
   * `db.dialect` for a connector, else `postgres`).
   */
  dialect?: SqlDialect;
  sql: string;
  /**
   * The catalog, for the allowlist's search path and the "did you mean" hint. A reader is called
   * only then (with an allowlist, or after an unknown name), so a plain statement costs no
   * introspection. Absent: unqualified names resolve to `public`, and no hint.
   */
  schema?: CatalogSource;
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
  /**
   * Told of the statement once it ran, failed in the database or was refused (the audit trail);
   * never of an empty or over-long text, which is no statement.
   */
  onStatement?: StatementListener;
  /** Who wrote the statement, for {@link RunSqlInput.onStatement}; default `person`. */
  origin?: StatementOrigin;
}

/**
 * Guards and runs one statement.
 * @returns the statement as the guard normalised it, and its result
 * @throws SqlrecallError `usage` (empty or too long), `guard_refused` (several statements, a write,
 *   a refused function or relation), `db_*` (the database's own error, or its cancellation)
 */
export async function runCheckedSql(input: RunSqlInput): Promise<{ sql: string; result: QueryResult }> {
  const text = input.sql.trim();
  if (text === '') throw emptySql();
  if (text.length > MAX_SQL_CHARS) throw sqlTooLong();
  // A long text is parsed and checked on a worker thread in a server (sql/check-pool.ts).
  // The text is guarded as given, never first cut out of prose the way a model's reply is: what
  // runs is exactly what the person wrote (less surrounding comments and a final semicolon), or
  // nothing. `SELECT 1 /* ; DROP TABLE t` is refused, not run as `SELECT 1`.
  const catalog = readOnce(input.schema);
  const allowTables = input.allowTables ?? [];
  const dialect = input.dialect ?? (typeof input.db === 'function' ? 'postgres' : input.db.dialect);
  const verdict = await guardForDialect(dialect, text, {
    allowTables,
    // The allowlist resolves unqualified names through the search path: only it needs the catalog,
    // and a catalog that cannot be read fails the statement rather than guessing `public`.
    schema: allowTables.length > 0 ? await catalog() : undefined,
  });
  const origin = input.origin ?? 'person';
  if (!verdict.ok) {
    const refusal = guardRefusal(verdict.reason, verdict.rule);
    notifyStatement(input.onStatement, failedStatement(text, origin, refusal));
    throw refusal;
  }
  let db: DatabaseConnector;
  try {
    db = typeof input.db === 'function' ? await input.db() : input.db;
  } catch (error) {
    // No database for this user: unreachable, or a data policy that cannot be decided.
    notifyStatement(input.onStatement, failedStatement(verdict.sql, origin, toSqlrecallError(error)));
    throw error;
  }
  notifyStatement(input.onStatement, { sql: verdict.sql, origin, outcome: 'started' });
  try {
    const result = await db.execute(verdict.sql, {
      maxRows: input.maxRows,
      timeoutMs: input.timeoutMs,
      ...(input.maxBytes !== undefined ? { maxBytes: input.maxBytes } : {}),
      signal: input.signal,
    });
    notifyStatement(input.onStatement, {
      sql: verdict.sql,
      origin,
      outcome: 'ran',
      rowCount: result.rowCount,
      ...(result.policies?.length ? { policies: result.policies } : {}),
    });
    return { sql: verdict.sql, result };
  } catch (error) {
    notifyStatement(input.onStatement, finishedStatement(verdict.sql, origin, toSqlrecallError(error)));
    throw await withNameHint(error, verdict.sql, catalog);
  }
}

/** The catalog of `source`, read at most once (a failed read fails every caller the same way). */
function readOnce(source: CatalogSource | undefined): () => Promise<Schema | undefined> {
  if (typeof source !== 'function') return async () => source;
  let read: Promise<Schema | undefined> | undefined;
  return () => {
    read ??= source();
    return read;
  };
}

/** SQLSTATEs of a name the database does not know: undefined_table, undefined_column. */
const UNKNOWN_NAME_STATES = new Set(['42P01', '42703']);

/**
 * The database's "relation … does not exist" (or unknown column) error with the closest catalog
 * names as its hint (`Did you mean orders?`), from the same identifier check the repair prompt
 * uses. Any other error, or no close name, comes back unchanged (as a SqlrecallError).
 * @param schema the catalog, read only when the error is about an unknown name
 */
async function withNameHint(
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
