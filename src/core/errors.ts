import type { Attempt } from './steps.js';

/**
 * The one error family of sqlrecall. Every error that can reach a user is a {@link SqlrecallError}
 * with a string-literal {@link ErrorCode}; the CLI exit code and the HTTP status come from
 * {@link ERROR_TABLE}, never from ad-hoc numbers at the call site.
 */

/** Stable, machine-readable error codes. */
export type ErrorCode =
  | 'usage'
  | 'config'
  | 'guard_refused'
  | 'policy_refused'
  | 'sql_not_found'
  | 'db_unreachable'
  | 'db_query'
  | 'db_timeout'
  | 'model_unreachable'
  | 'model_missing'
  | 'model_output'
  | 'model_truncated'
  | 'model_timeout'
  | 'not_found'
  | 'memory_embedding_mismatch'
  | 'memory_store'
  | 'unauthorized'
  | 'forbidden'
  | 'too_large'
  | 'unsupported_media_type'
  | 'internal'
  | 'db_busy'
  | 'result_too_large'
  | 'memory_unavailable'
  | 'too_many_requests'
  | 'invalid_memory_sql'
  | 'credential_refused'
  | 'invalid_date'
  | 'cancelled';

/** Where each code goes: CLI exit code and HTTP status. */
export const ERROR_TABLE: Readonly<Record<ErrorCode, { exitCode: number; httpStatus: number }>> = {
  usage: { exitCode: 2, httpStatus: 400 },
  config: { exitCode: 2, httpStatus: 500 },
  guard_refused: { exitCode: 3, httpStatus: 422 },
  // A data policy keeps the statement from this user: refused like the guard's, but forbidden.
  policy_refused: { exitCode: 3, httpStatus: 403 },
  // The model produced text without a usable SQL statement: "unusable output" (exit 5).
  sql_not_found: { exitCode: 5, httpStatus: 502 },
  db_unreachable: { exitCode: 4, httpStatus: 503 },
  db_query: { exitCode: 4, httpStatus: 422 },
  db_timeout: { exitCode: 4, httpStatus: 504 },
  model_unreachable: { exitCode: 5, httpStatus: 503 },
  model_missing: { exitCode: 5, httpStatus: 503 },
  model_output: { exitCode: 5, httpStatus: 502 },
  model_truncated: { exitCode: 5, httpStatus: 502 },
  // The chat model gave no first token within SQLRECALL_MODEL_TIMEOUT_MS (still loading, too slow).
  model_timeout: { exitCode: 5, httpStatus: 504 },
  not_found: { exitCode: 2, httpStatus: 404 },
  // The store was built with another embedding model or dimension: a configuration problem.
  memory_embedding_mismatch: { exitCode: 2, httpStatus: 409 },
  memory_store: { exitCode: 1, httpStatus: 500 },
  // HTTP API: missing/unknown token, a team change by a non-admin, an oversized body.
  unauthorized: { exitCode: 2, httpStatus: 401 },
  forbidden: { exitCode: 2, httpStatus: 403 },
  too_large: { exitCode: 2, httpStatus: 413 },
  // HTTP API: a request body that is not JSON (`Content-Type` other than application/json).
  unsupported_media_type: { exitCode: 2, httpStatus: 415 },
  internal: { exitCode: 1, httpStatus: 500 },
  // Every pooled connection is running a query and the wait queue is full or timed out
  // (the database itself answers: this is not db_unreachable).
  db_busy: { exitCode: 4, httpStatus: 503 },
  // Not even one row fits in the result byte budget (--max-result-bytes).
  result_too_large: { exitCode: 4, httpStatus: 422 },
  // The memory store is locked by another process or cannot be reached: exit 6, HTTP 503.
  memory_unavailable: { exitCode: 6, httpStatus: 503 },
  // HTTP API: the user already has as many statements or questions running as one user may
  // (SQLRECALL_MAX_REQUESTS_PER_USER); the caller should wait (Retry-After). Exit 2: the call was
  // refused as sent, like a usage error.
  too_many_requests: { exitCode: 2, httpStatus: 429 },
  // A memory's SQL given by the user (`memory add --sql`, the API/MCP `sql` field) names a table or
  // column that does not exist or is not one read-only condition: refused as sent, nothing stored.
  invalid_memory_sql: { exitCode: 2, httpStatus: 422 },
  // Text to remember holds a password, token or key: secrets are never stored; nothing was stored.
  credential_refused: { exitCode: 2, httpStatus: 422 },
  // A day or time zone given for a memory's expiry cannot be used as sent: the day is already
  // over where the user is, or the zone is not one this runtime knows. Nothing was stored.
  invalid_date: { exitCode: 2, httpStatus: 422 },
  // The user cancelled (Ctrl-C, a closed request) while a model call or other work was running:
  // not a failure of anything. Exit 130 (128 + SIGINT); HTTP 499 (client closed request).
  cancelled: { exitCode: 130, httpStatus: 499 },
};

/** Exit code of a command stopped with Ctrl-C (SIGINT: 128 + 2), after the running statement was cancelled. */
export const EXIT_INTERRUPTED = 130;

/**
 * What each exit code means, in order: the help text and the README list these, and every
 * `exitCode` of {@link ERROR_TABLE} has an entry (a test checks both).
 */
export const EXIT_CODE_MEANINGS: readonly (readonly [code: number, meaning: string])[] = [
  [0, 'ok'],
  [1, 'unexpected'],
  [2, 'usage or configuration'],
  [3, 'refused by the SQL guard'],
  [4, 'database error'],
  [5, 'model server unavailable or unusable output'],
  [6, 'memory store locked or unreachable'],
  [EXIT_INTERRUPTED, 'cancelled with Ctrl-C'],
];

/** Facts any error may carry (never secrets). */
export interface CommonErrorDetails {
  /** A command or step that fixes the problem, shown to the user as-is. */
  hint?: string;
  /** Whether retrying the same call may succeed (network blips, busy servers). */
  retryable?: boolean;
  /** Masked URL of the server involved, if any. */
  url?: string;
  /** HTTP status returned by a remote server, if any. */
  status?: number;
  /** PostgreSQL SQLSTATE, for database errors. */
  sqlState?: string;
  /**
   * What the SQL generation loop tried before it gave up, oldest first (`--json` prints them): any
   * error of a statement's run can end the loop, so any code may carry them.
   */
  attempts?: Attempt[];
}

/**
 * The structured facts of each {@link ErrorCode}: the common ones plus those only that code sets.
 * A constructor call with a literal code is checked against its entry.
 */
export interface ErrorDetailsByCode {
  usage: CommonErrorDetails;
  config: CommonErrorDetails & {
    /** Environment variable of the invalid setting. */
    setting?: string;
    /** Why the model or database could not be used (the underlying message). */
    reason?: string;
  };
  guard_refused: CommonErrorDetails & {
    /** Id of the guard rule that refused (`multiple-statements`, `write`, …). */
    rule?: string;
    /** The refused statement. */
    sql?: string;
  };
  policy_refused: CommonErrorDetails & {
    /** Id of the policy rule that refused (`policy-column`, `policy-table`, …). */
    rule?: string;
    /** The policy entry that refused (`team sales`). */
    policy?: string;
  };
  sql_not_found: CommonErrorDetails & {
    /** The model's reply without SQL, at most 500 characters. */
    reply?: string;
  };
  db_unreachable: CommonErrorDetails;
  db_query: CommonErrorDetails & {
    /** True when the statement was cancelled (interrupt, timeout, closed request). */
    cancelled?: boolean;
  };
  db_timeout: CommonErrorDetails;
  model_unreachable: CommonErrorDetails & {
    /** The underlying network error message. */
    reason?: string;
  };
  model_missing: CommonErrorDetails;
  model_timeout: CommonErrorDetails & {
    /** The first-token deadline that passed, in milliseconds. */
    timeoutMs?: number;
  };
  model_output: CommonErrorDetails & {
    /** The model's statement that stayed invalid. */
    sql?: string;
    /** Id of the guard rule that refused it last. */
    rule?: string;
    /** An embedding model answered an all-zero vector (similarity cannot rank against it). */
    degenerate?: boolean;
  };
  model_truncated: CommonErrorDetails & {
    /** The output token limit of the call that was cut off. */
    maxTokens?: number;
    /** The larger limit of the retry, when one was made. */
    retryMaxTokens?: number;
  };
  not_found: CommonErrorDetails;
  memory_embedding_mismatch: CommonErrorDetails & {
    /** Model and dimension the store was built with. */
    stored?: { model: string; dimensions: number };
    /** Model and dimension configured now. */
    configured?: { model: string; dimensions: number };
  };
  memory_store: CommonErrorDetails;
  unauthorized: CommonErrorDetails;
  forbidden: CommonErrorDetails;
  too_large: CommonErrorDetails;
  unsupported_media_type: CommonErrorDetails;
  internal: CommonErrorDetails;
  db_busy: CommonErrorDetails & {
    /** Queries running on the pool's connections. */
    running?: number;
    /** Queries waiting for a connection. */
    waiting?: number;
    /** How long the request waited for a connection, in milliseconds. */
    waitMs?: number;
    /** The process holding the database file's lock, when the engine names it. */
    pid?: number;
  };
  result_too_large: CommonErrorDetails & {
    /** The result byte budget (`--max-result-bytes`), in bytes. */
    maxBytes?: number;
  };
  memory_unavailable: CommonErrorDetails;
  cancelled: CommonErrorDetails;
  too_many_requests: CommonErrorDetails & {
    /** Requests of this user running now. */
    running?: number;
    /** Most requests one user may run at once. */
    limit?: number;
  };
  invalid_memory_sql: CommonErrorDetails & {
    /** The SQL as given. */
    sql?: string;
    /** The table or column that does not exist, as written. */
    unknown?: string;
    /** The closest real names, best first (`customers.country`). */
    candidates?: string[];
  };
  credential_refused: CommonErrorDetails & {
    /** What was found, masked (`a password in a connection URL (postgres://report:***@)`). */
    found?: { label: string; masked: string }[];
  };
  invalid_date: CommonErrorDetails;
}

/**
 * Extra, structured facts about an error of code `C` (never secrets): {@link ErrorDetailsByCode}.
 * For an error of unknown code the union; narrow with {@link isSqlrecallError}`(error, code)` to
 * read the facts of one code.
 */
export type ErrorDetails<C extends ErrorCode = ErrorCode> = ErrorDetailsByCode[C];

/**
 * An error meant for users: `message` is one clear sentence, `code` selects exit code and HTTP status.
 * Adapters wrap foreign errors and keep them in `cause` for logs; `cause` is never printed as the
 * user-facing message.
 */
export class SqlrecallError<C extends ErrorCode = ErrorCode> extends Error {
  readonly code: C;
  readonly details: ErrorDetails<C>;
  /**
   * Whether the same call may succeed when repeated (a refused connection, a busy or loading
   * server); false unless the thrower says so (`details.retryable`). Whether a repeat is also
   * *safe* is the caller's decision: see `core/retry.ts`.
   */
  readonly retryable: boolean;
  /**
   * HTTP status the remote server (model server) answered, when the error comes from one
   * (`details.status`); not the status sqlrecall's own API answers with, see {@link httpStatus}.
   */
  readonly status: number | undefined;

  constructor(code: C, message: string, options: { cause?: unknown; details?: ErrorDetails<C> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SqlrecallError';
    this.code = code;
    this.details = options.details ?? ({} as ErrorDetails<C>);
    this.retryable = this.details.retryable === true;
    this.status = typeof this.details.status === 'number' ? this.details.status : undefined;
  }

  /** CLI exit code for this error. */
  get exitCode(): number {
    return ERROR_TABLE[this.code].exitCode;
  }

  /** HTTP status for this error. */
  get httpStatus(): number {
    return ERROR_TABLE[this.code].httpStatus;
  }
}

/** True when `value` is a {@link SqlrecallError}, optionally with the given code. */
export function isSqlrecallError<C extends ErrorCode = ErrorCode>(
  value: unknown,
  code?: C,
): value is SqlrecallError<C> {
  return value instanceof SqlrecallError && (code === undefined || value.code === code);
}

/**
 * Turns anything thrown into a {@link SqlrecallError}: ours pass through, anything else becomes
 * `internal` with the original kept as `cause`; an AbortError becomes `cancelled` (exit 130).
 */
export function toSqlrecallError(error: unknown): SqlrecallError {
  if (error instanceof SqlrecallError) return error;
  // An aborted request (Ctrl-C, a client that went away) is the caller's own choice, never an
  // "unexpected error".
  if ((error as { name?: unknown } | null)?.name === 'AbortError')
    return new SqlrecallError('cancelled', 'Cancelled.', { cause: error });
  const message = error instanceof Error ? error.message : String(error);
  return new SqlrecallError('internal', `Unexpected error: ${message}`, { cause: error });
}
