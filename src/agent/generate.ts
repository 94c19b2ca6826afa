/**
 * Generate → extract → guard → execute, with bounded repairs: the part of the pipeline that turns a
 * prompt into rows. Every attempt is recorded; every stage reports a {@link Step}.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatMessage, ChatModel, DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Attempt, Step } from '../core/steps.js';
import { extractSql } from '../sql/extract.js';
import { guardSql } from '../sql/guard.js';
import { buildRepairMessages } from './prompts.js';

/** Inputs of {@link generateAndRun}. */
export interface GenerateInput {
  chat: ChatModel;
  db: DatabaseConnector;
  /** The SQL prompt (system + user). Repairs append to it. */
  messages: ChatMessage[];
  maxRows: number;
  statementTimeoutMs: number;
  /** Repairs after a database error (0 = none). */
  maxRepairs: number;
  /** Most tokens for the SQL reply. */
  maxTokens: number;
  signal?: AbortSignal;
}

/** What {@link generateAndRun} returns: the accepted SQL, its rows, and every attempt. */
export interface GenerateOutcome {
  sql: string;
  result: QueryResult;
  attempts: Attempt[];
}

/**
 * Runs the generate/check/execute loop, yielding `sql`, `refused`, `retried` and `rows` steps.
 * @throws SqlrecallError `guard_refused` (never repaired: a refusal is not a typo),
 *   `sql_not_found`, `model_truncated`, `model_*`, `db_*` (after the repair bound, with
 *   `details.attempts`).
 */
export async function* generateAndRun(input: GenerateInput): AsyncGenerator<Step, GenerateOutcome> {
  const attempts: Attempt[] = [];
  let messages = input.messages;
  for (let attempt = 1; ; attempt++) {
    const reply = await input.chat.generate(
      { messages, maxTokens: input.maxTokens, purpose: 'sql' },
      { signal: input.signal },
    );
    if (reply.finishReason === 'length') {
      throw new SqlrecallError(
        'model_truncated',
        'The model stopped before finishing the SQL (it hit its token limit); try a shorter question or a larger --num-ctx.',
        { details: { attempts } },
      );
    }
    const extracted = extractSql(reply.text);
    if (!extracted.ok && extracted.statements) {
      // Several statements at once is what an injection looks like: a refusal, not a parse failure.
      const joined = extracted.statements.join(';\n');
      attempts.push({ sql: joined, error: `refused: ${extracted.reason}` });
      yield { type: 'refused', sql: joined, reason: extracted.reason };
      throw new SqlrecallError('guard_refused', `Refused: ${extracted.reason}`, {
        details: { sql: joined, rule: 'multiple-statements', attempts },
      });
    }
    if (!extracted.ok) {
      throw new SqlrecallError('sql_not_found', `The model's reply has no usable SQL: ${extracted.reason}`, {
        details: { reply: reply.text.slice(0, 500), attempts },
      });
    }
    const verdict = await guardSql(extracted.sql);
    if (!verdict.ok) {
      attempts.push({ sql: extracted.sql, error: `refused: ${verdict.reason}` });
      yield { type: 'refused', sql: extracted.sql, reason: verdict.reason };
      throw new SqlrecallError('guard_refused', `Refused: ${verdict.reason}`, {
        details: { sql: extracted.sql, rule: verdict.rule, attempts },
      });
    }
    const sql = verdict.sql;
    yield { type: 'sql', sql, attempt };
    try {
      const result = await input.db.execute(sql, {
        maxRows: input.maxRows,
        timeoutMs: input.statementTimeoutMs,
        signal: input.signal,
      });
      attempts.push({ sql });
      yield { type: 'rows', result };
      return { sql, result, attempts };
    } catch (error) {
      const repairable =
        error instanceof SqlrecallError && error.code === 'db_query' && !error.details.cancelled;
      const message = error instanceof Error ? error.message : String(error);
      attempts.push({ sql, error: message });
      if (!repairable || attempt > input.maxRepairs) {
        if (error instanceof SqlrecallError) error.details.attempts = attempts;
        throw error;
      }
      yield { type: 'retried', attempt: attempt + 1, error: message };
      messages = buildRepairMessages(input.messages, sql, message);
    }
  }
}
