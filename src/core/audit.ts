/**
 * The audit port: what the one SQL path reports about every statement it runs or refuses for a
 * user, and the record the audit trail keeps of it. The pipeline only calls a
 * {@link StatementListener}; who the user is, which front end asked and where the record goes are
 * the caller's (the composition root's) business.
 */
import { isSqlrecallError, SqlrecallError } from './errors.js';

/** What happened to one statement. */
export type StatementOutcome =
  /** It ran and returned rows (possibly none). */
  | 'ran'
  /** The guard or a data policy refused it: it never reached the database. */
  | 'refused'
  /** It reached the database and failed there (an error, a timeout, a cancellation, too large). */
  | 'failed'
  /**
   * It is about to run: told just before execution and written to the journal at once, so a
   * process killed mid-statement still leaves its record. The statement's outcome replaces it.
   */
  | 'started'
  /** It started and never finished: the process ended during the statement (a record only). */
  | 'interrupted';

/** Who wrote the statement. */
export type StatementOrigin =
  /** The model's first statement for a question. */
  | 'model'
  /** The model's statement after a repair prompt. */
  | 'repair'
  /** A person (`sql`, `POST /api/sql`, the MCP `sql` tool, "Edit SQL"). */
  | 'person'
  /** A saved example or a rule, answered without the model. */
  | 'fallback';

/** One statement run or refused on the one SQL path. */
export interface StatementEvent {
  /** The statement as it was checked (a refused one as it was given). At most 100,000 characters. */
  sql: string;
  outcome: StatementOutcome;
  origin: StatementOrigin;
  /** Rows returned (`ran` only). */
  rowCount?: number;
  /** Why it was refused or failed: the user-facing message of the error. */
  reason?: string;
  /** The error code of a refusal or failure (`guard_refused`, `db_query`, …). */
  code?: string;
  /** The data policies that shaped or refused it (`team sales`), when a policy applied. */
  policies?: readonly string[];
}

/**
 * Receives every {@link StatementEvent}. Must return at once and never throw: an audit write never
 * blocks or fails an answer ({@link notifyStatement} enforces the second).
 */
export type StatementListener = (event: StatementEvent) => void;

/** Where a statement came from: the process's front end. */
export type FrontEnd = 'cli' | 'http' | 'mcp';

/** One entry of the audit trail, as stored and listed. */
export interface AuditRecord {
  /** Unique id (a UUID), fixed when recorded: writing the same record twice keeps one. */
  id: string;
  /** When it was recorded, ISO 8601 UTC. */
  at: string;
  user: string;
  frontEnd: FrontEnd;
  /** The question asked, or null for a statement a person wrote. */
  question: string | null;
  sql: string;
  outcome: StatementOutcome;
  origin: StatementOrigin;
  /** Rows returned, or null when it did not run to the end. */
  rowCount: number | null;
  /** The refusal or failure reason, or null. */
  reason: string | null;
  /** The error code of a refusal or failure, or null. */
  code: string | null;
  /** The data policies applied (empty when none). */
  policies: string[];
}

/**
 * Calls `listener` with `event`, swallowing anything it throws: a broken audit sink must not fail
 * the statement it reports.
 */
export function notifyStatement(
  listener: StatementListener | undefined,
  event: StatementEvent | undefined,
): void {
  if (!listener || !event) return;
  try {
    listener(event);
  } catch {
    // The audit keeps its own error count (see the audit log); the answer goes on.
  }
}

/**
 * The event of a statement that threw `error`, or undefined when the error says nothing about the
 * statement (an internal check that stopped it before it ran). A refusal is an error with exit code
 * 3 (the guard's, and any data policy's), or a data policy that could not be decided for the user
 * (an invalid policy file: nobody reads unrestricted); everything else reached the database.
 */
export function failedStatement(
  sql: string,
  origin: StatementOrigin,
  error: unknown,
): StatementEvent | undefined {
  if (!(error instanceof SqlrecallError) || isSqlrecallError(error, 'internal')) return undefined;
  const policies = policiesOf(error.details);
  const refused = error.exitCode === 3 || noPolicy(error);
  const rule = refused ? ruleOf(error) : undefined;
  return {
    sql,
    origin,
    outcome: refused ? 'refused' : 'failed',
    reason: rule === undefined ? error.message : withRule(error.message, rule),
    code: error.code,
    ...(policies ? { policies } : {}),
  };
}

/** The rule a refused statement's record names when the policy file could not be read. */
export const POLICY_FILE_RULE = 'policy-file-invalid';

/**
 * `reason` ending with `(rule RULE)`, so a reader of the audit trail sees which rule refused;
 * a reason that ends so already is kept as it is.
 */
export function withRule(reason: string, rule: string): string {
  const suffix = `(rule ${rule})`;
  return reason.endsWith(suffix) ? reason : `${reason.replace(/[\s.]+$/, '')} ${suffix}`;
}

/** The rule behind a refusal: the guard's or the policy's `details.rule`, or the invalid file's. */
function ruleOf(error: SqlrecallError): string | undefined {
  const rule = (error.details as { rule?: unknown }).rule;
  if (typeof rule === 'string' && rule !== '') return rule;
  return noPolicy(error) ? POLICY_FILE_RULE : undefined;
}

/** True for the error of a data policy that could not be decided (the policy file is invalid). */
function noPolicy(error: SqlrecallError): boolean {
  return error.code === 'config' && (error.details as { setting?: unknown }).setting === 'SQLRECALL_POLICY';
}

/**
 * The event of a statement that started and then threw `error`: {@link failedStatement}'s, or for
 * an error that says nothing about the statement, a failure with its message (a started statement
 * always gets its outcome, so its record never waits for one).
 */
export function finishedStatement(sql: string, origin: StatementOrigin, error: unknown): StatementEvent {
  return (
    failedStatement(sql, origin, error) ?? {
      sql,
      origin,
      outcome: 'failed',
      reason: error instanceof Error ? error.message : String(error),
      code: error instanceof SqlrecallError ? error.code : 'internal',
    }
  );
}

/**
 * The policies named by an error's details or a result: `policies` (a list of names) or `policy`
 * (one name), as the data-policy layer reports them.
 */
export function policiesOf(details: unknown): string[] | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { policies, policy } = details as { policies?: unknown; policy?: unknown };
  if (Array.isArray(policies)) {
    const names = policies.filter((p): p is string => typeof p === 'string');
    return names.length > 0 ? names : undefined;
  }
  return typeof policy === 'string' ? [policy] : undefined;
}
