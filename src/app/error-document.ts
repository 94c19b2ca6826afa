/**
 * The JSON form of an error, the same on every front end: `ask --json`, `sql --json` and the other
 * commands' `--json`, every HTTP error body, and the text of an MCP tool error.
 */
import { type SqlrecallError, toSqlrecallError } from '../core/errors.js';
import { redactSecrets } from '../core/redact.js';

/** `{code, message, hint?, rule?}`: the error table's code, secrets masked in every text. */
export interface ErrorDocument {
  /** A code of the error table (`guard_refused`, `db_query`, `usage`, …). */
  code: string;
  message: string;
  /** What to do about it, when there is something to say. */
  hint?: string;
  /** The guard rule that refused a statement (`guard_refused` only). */
  rule?: string;
}

/** The {@link ErrorDocument} of any thrown value (an unknown one becomes `internal`). */
export function errorDocument(error: unknown): ErrorDocument {
  const err: SqlrecallError = toSqlrecallError(error);
  const doc: ErrorDocument = { code: err.code, message: redactSecrets(err.message) };
  if (typeof err.details.hint === 'string') doc.hint = redactSecrets(err.details.hint);
  if ('rule' in err.details && typeof err.details.rule === 'string') doc.rule = err.details.rule;
  return doc;
}
