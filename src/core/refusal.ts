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
  return new SqlrecallError('guard_refused', refusalText(reason), {
    ...(extra.cause !== undefined ? { cause: extra.cause } : {}),
    details: { ...extra.details, rule },
  });
}

/**
 * The text of a refusal as a person reads it: `Refused: <reason>` (a leading `refused: ` in the
 * reason is dropped, not doubled). The error message of {@link guardRefusal} and the `error` of a
 * refused entry in an ask document's `attempts` both read this way.
 */
export function refusalText(reason: string): string {
  return `Refused: ${reason.replace(/^refused: /i, '')}`;
}

/**
 * Why text holding several statements is refused, the same whoever wrote them (a person's `sql`
 * or the model's reply in `ask`): `2 statements were given; only one statement may run at a time`.
 * @param count how many statements the text holds (2 or more)
 */
export function severalStatements(count: number): string {
  return `${count} statements were given; only one statement may run at a time`;
}

/**
 * The one error for an empty question on every surface (`ask ""`, `POST /api/ask` with an empty
 * question, the MCP `ask` tool).
 * @returns a `usage` error (exit 2, HTTP 400)
 */
export function emptyQuestion(): SqlrecallError<'usage'> {
  return new SqlrecallError(
    'usage',
    'The question is empty: ask something in plain language, e.g. "how many customers are there?".',
  );
}

/**
 * The one error for an empty statement on every surface (`sql ""`, `POST /api/sql` with empty
 * SQL, the MCP `sql` tool).
 * @returns a `usage` error (exit 2, HTTP 400)
 */
export function emptySql(): SqlrecallError<'usage'> {
  return new SqlrecallError('usage', 'There is no SQL to run: give one statement, e.g. SELECT now().');
}
