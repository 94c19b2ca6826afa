/**
 * A question or statement refused because no data policy can be decided for its user (the policy
 * file is invalid and no valid version was loaded): nobody reads unrestricted, and the refusal is
 * recorded in the audit trail like any other, on every front end (CLI, HTTP, MCP), before the
 * error goes back to the person who asked.
 */
import {
  failedStatement,
  notifyStatement,
  type StatementListener,
  type StatementOrigin,
} from '../core/audit.js';

/**
 * The SQL of a record refused before any statement was written (an `ask` whose user has no policy
 * that can be decided): the question is in the record, the statement is not.
 */
export const NO_STATEMENT = '';

/** What the record of a refusal names: the statement given (none for a question), and who wrote it. */
export interface RefusedStatement {
  /** The statement as given; {@link NO_STATEMENT} for a question. */
  sql: string;
  /** `person` for a typed statement, `model` for a question (the model would have written it). */
  origin: StatementOrigin;
}

/**
 * The user's policy from `decide`; when it throws, the refusal is told to `onStatement` (the audit
 * trail) first, then the error is thrown as it was.
 * @throws whatever `decide` throws (an invalid policy file: SqlrecallError `config`)
 */
export async function policyOrRecordedRefusal<P>(
  decide: () => Promise<P>,
  onStatement: StatementListener | undefined,
  statement: RefusedStatement,
): Promise<P> {
  try {
    return await decide();
  } catch (error) {
    notifyStatement(onStatement, failedStatement(statement.sql.trim(), statement.origin, error));
    throw error;
  }
}
