/**
 * The one wording of a refused statement. The guard, the catalog-aware function policy, the
 * session-settings check and the question pipeline all refuse through {@link guardRefusal}, so a
 * statement refused on one surface reads the same on every other.
 */
import { type ErrorDetailsByCode, SqlrecallError } from './errors.js';

/**
 * The user-facing refusal of a statement: `Refused: pg_sleep can stall the database`.
 * @param reason why, as the guard wrote it (a leading `refused: ` is dropped, not doubled)
 * @param rule the rule that refused (`GUARD_RULES` ids, `multiple-statements`, `allowlist`, …)
 * @param extra more facts for `--json` and the API (`sql`, `attempts`), and the error's cause
 * @returns a `guard_refused` error (exit 3, HTTP 422) whose `details.rule` is `rule`
 */
export function guardRefusal(
  reason: string,
  rule: string,
  extra: { details?: Omit<ErrorDetailsByCode['guard_refused'], 'rule'>; cause?: unknown } = {},
): SqlrecallError<'guard_refused'> {
  return new SqlrecallError('guard_refused', `Refused: ${reason.replace(/^refused: /, '')}`, {
    ...(extra.cause !== undefined ? { cause: extra.cause } : {}),
    details: { ...extra.details, rule },
  });
}
