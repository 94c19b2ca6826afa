/**
 * Generate → extract → guard → identifier check → execute, with bounded repairs: the part of the
 * pipeline that turns a prompt into rows (DESIGN.md "SQL safety, in depth"). Unknown table or
 * column names (with the closest catalog names) and database errors (message + SQLSTATE) go back to
 * the model in a repair prompt, at most `maxRepairs` times; a guard refusal is never repaired. A
 * model that says the schema cannot answer the question gets an honest answer, not invented SQL.
 * Every attempt is recorded; every stage reports a {@link Step}.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatMessage, ChatModel, DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { Attempt, Step } from '../core/steps.js';
import { extractSql } from '../sql/extract.js';
import { guardSql } from '../sql/guard.js';
import { checkIdentifiers, formatUnknownIdentifiers } from '../sql/identifiers.js';
import { buildRepairMessages, CANNOT_ANSWER_MARKER } from './prompts.js';

/** Inputs of {@link generateAndRun}. */
export interface GenerateInput {
  chat: ChatModel;
  db: DatabaseConnector;
  /** The SQL prompt (system + user). Repairs append to it. */
  messages: ChatMessage[];
  maxRows: number;
  statementTimeoutMs: number;
  /** Repairs after an unknown name or a database error (0 = none; the CLI default is 2). */
  maxRepairs: number;
  /** Most tokens for the SQL reply. */
  maxTokens: number;
  signal?: AbortSignal;
  /**
   * The catalog: enables the identifier check and resolves unqualified names for the allowlist.
   * Without it, no identifier check runs.
   */
  schema?: Schema;
  /** Allowlist mode (`--allow-tables`): patterns of the only relations a query may read. */
  allowTables?: readonly string[];
}

/**
 * What {@link generateAndRun} returns: the accepted SQL, its rows, and every attempt; or, when the
 * model said the schema cannot answer, `unanswerable` (with `sql` null and an empty result).
 */
export interface GenerateOutcome {
  sql: string | null;
  result: QueryResult;
  attempts: Attempt[];
  /** Set when the question cannot be answered from this database: the model's reason (may be ''). */
  unanswerable?: string;
}

/** An empty result (no columns, no rows). */
export const EMPTY_RESULT: QueryResult = {
  columns: [],
  rows: [],
  rowCount: 0,
  truncated: false,
  durationMs: 0,
};

/** The legacy sentinel of the first SQL prompt: `SELECT NULL WHERE FALSE -- cannot answer`. */
const LEGACY_SENTINEL = /^\s*select\s+null\s+where\s+false\b/i;
const CANNOT_ANSWER_LINE = new RegExp(
  `^[\\s>*_\`#-]*${CANNOT_ANSWER_MARKER.replace(':', '')}\\s*:?\\s*(.*)$`,
  'im',
);

/**
 * The reason given with `CANNOT_ANSWER:` (or the legacy sentinel), or undefined when the reply
 * is an attempt at SQL.
 */
export function cannotAnswerReason(reply: string): string | undefined {
  const text = reply.replace(/<think>[\s\S]*?<\/think>/gi, '');
  const marked = CANNOT_ANSWER_LINE.exec(text);
  if (marked) return cleanReason(marked[1] ?? '');
  const extracted = extractSql(text);
  if (extracted.ok && LEGACY_SENTINEL.test(extracted.sql) && /cannot answer/i.test(text)) return '';
  return undefined;
}

function cleanReason(reason: string): string {
  return reason
    .replace(/[`*_]+/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[.!]+$/, '')
    .slice(0, 300);
}

/** The honest answer for a question this database cannot answer. */
export function unanswerableAnswer(reason: string): string {
  if (reason === '') return 'This database has no data to answer that question.';
  const about = reason.replace(
    /^(this database has no data about|no data about|there is no data about)\s+/i,
    '',
  );
  return `This database has no data about ${about}.`;
}

/**
 * Runs the generate/check/execute loop, yielding `sql`, `refused`, `retried` and `rows` steps.
 * After the repair bound, a statement whose names still look unknown is executed anyway: the
 * identifier check is advice, the database has the last word.
 * @throws SqlrecallError `guard_refused` (never repaired: a refusal is not a typo),
 *   `sql_not_found`, `model_truncated`, `model_*`, `db_*` (after the repair bound, with
 *   `details.attempts`; the message is the last database error).
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
    const reason = cannotAnswerReason(reply.text);
    if (reason !== undefined) return { sql: null, result: EMPTY_RESULT, attempts, unanswerable: reason };
    const sql = yield* extractAndGuard(reply.text, input, attempts);
    yield { type: 'sql', sql, attempt };
    const canRepair = attempt <= input.maxRepairs;
    if (input.schema && canRepair) {
      const check = await checkIdentifiers(sql, input.schema);
      if (!check.ok) {
        const problem = formatUnknownIdentifiers(check.unknown);
        attempts.push({ sql, error: problem });
        yield { type: 'retried', attempt: attempt + 1, error: problem };
        messages = buildRepairMessages(input.messages, sql, problem);
        continue;
      }
    }
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
      if (!repairable || !canRepair) {
        if (error instanceof SqlrecallError) {
          error.details.attempts = attempts;
          if (repairable && attempts.length > 1)
            error.details.hint = `Gave up after ${attempts.length} attempts.`;
        }
        throw error;
      }
      yield { type: 'retried', attempt: attempt + 1, error: message };
      messages = buildRepairMessages(input.messages, sql, message);
    }
  }
}

/** Extracts the one statement and guards it; yields `refused` and throws on a refusal. */
async function* extractAndGuard(
  text: string,
  input: GenerateInput,
  attempts: Attempt[],
): AsyncGenerator<Step, string> {
  const extracted = extractSql(text);
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
      details: { reply: text.slice(0, 500), attempts },
    });
  }
  const verdict = await guardSql(extracted.sql, { allowTables: input.allowTables, schema: input.schema });
  if (!verdict.ok) {
    attempts.push({ sql: extracted.sql, error: verdict.reason });
    yield { type: 'refused', sql: extracted.sql, reason: verdict.reason };
    throw new SqlrecallError('guard_refused', `Refused: ${verdict.reason.replace(/^refused: /, '')}`, {
      details: { sql: extracted.sql, rule: verdict.rule, attempts },
    });
  }
  return verdict.sql;
}
