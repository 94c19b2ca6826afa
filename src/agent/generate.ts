/**
 * Generate → extract → guard → identifier check → execute, with bounded repairs: the part of the
 * pipeline that turns a prompt into rows. Unknown table or
 * column names (with the closest catalog names) and database errors (message + SQLSTATE) go back to
 * the model in a repair prompt, at most `maxRepairs` times; a guard refusal is never repaired. A
 * model that says the schema cannot answer the question gets an honest answer, not invented SQL.
 * Every attempt is recorded; every stage reports a {@link Step}.
 */
import {
  failedStatement,
  finishedStatement,
  notifyStatement,
  type StatementListener,
  withRule,
} from '../core/audit.js';
import { generateText } from '../core/chat.js';
import { SqlrecallError } from '../core/errors.js';
import type { ChatMessage, ChatModel, ChatResult, DatabaseConnector, QueryResult } from '../core/ports.js';
import { guardRefusal, refusalText } from '../core/refusal.js';
import type { Schema } from '../core/schema.js';
import type { Attempt, Step } from '../core/steps.js';
import { guardForDialect } from '../sql/dialect-guard.js';
import { DIALECTS, dialectProfile } from '../sql/dialects.js';
import { extractSql, sqlOfJson } from '../sql/extract.js';
import { checkIdentifiers, formatUnknownIdentifiers } from '../sql/identifiers.js';
import {
  type ColumnSampler,
  checkEmptyResult,
  createColumnSampler,
  createLiteralConfirmer,
  type EmptyFilter,
  emptyRepairText,
  type LiteralConfirmer,
  type ValueHintSource,
} from './empty-check.js';
import { buildRepairMessages, CANNOT_ANSWER_MARKER } from './prompts.js';

/** Inputs of {@link generateAndRun}. */
export interface GenerateInput {
  chat: ChatModel;
  db: DatabaseConnector;
  /** The SQL prompt (system + user). Repairs append to it. */
  messages: ChatMessage[];
  maxRows: number;
  statementTimeoutMs: number;
  /** Byte budget per result (default: the connector's, 64 MiB). */
  maxResultBytes?: number;
  /**
   * Repairs after an unknown name, a parse error, a database error or an empty result whose filter
   * has a near variant in the data (0 = none; the CLI default is 2).
   */
  maxRepairs: number;
  /** Most tokens for the SQL reply (`--max-sql-tokens`). */
  maxTokens: number;
  /**
   * Tokens for the one retry after a reply cut by the output limit (`done_reason: length`); default
   * `maxTokens` × 4, at most {@link TRUNCATED_RETRY_MAX_TOKENS}. Not larger than the context allows:
   * the model adapter sizes `num_ctx` to prompt + reply.
   */
  retryMaxTokens?: number;
  signal?: AbortSignal;
  /**
   * The catalog: enables the identifier check and resolves unqualified names for the allowlist.
   * Without it, no identifier check runs.
   */
  schema?: Schema;
  /** The session's real search path, for "did you mean schema.table" (see `checkIdentifiers`). */
  searchPath?: readonly string[];
  /** Allowlist mode (`--allow-tables`): patterns of the only relations a query may read. */
  allowTables?: readonly string[];
  /** Sampled value hints per table, for the empty-result check; without it no check runs. */
  valueHints?: ValueHintSource;
  /**
   * Told of every statement that ran, failed in the database or was refused (the audit trail);
   * the value-sampling reads of the empty-result check are the pipeline's own, not reported.
   */
  onStatement?: StatementListener;
  /**
   * Samples one column for the empty-result check when the value hints leave it out; default a
   * bounded sampler over `db` (`createColumnSampler`). A user with a row policy passes one that
   * samples only the rows the user may see.
   */
  columnSampler?: ColumnSampler;
  /**
   * Asks the engine about a filter the sample cannot explain, for the empty-result check; default
   * one over `db` (`createLiteralConfirmer`). A user with a row policy passes one that counts only
   * the rows the user may see.
   */
  literalConfirmer?: LiteralConfirmer;
  /**
   * Privacy mode (a data policy's `rows_to_model: false`): no value read from the database goes
   * back to the model. Database errors in repair prompts lose the values they quote, and no
   * empty-result check runs (its repair names stored values). Default false.
   */
  privacy?: boolean;
}

/**
 * `message` without the data values PostgreSQL quotes in it (`invalid input syntax for type
 * integer: "bob@example.com"`, `value "…" is out of range`): what a repair prompt may carry in
 * privacy mode. Names the error quotes otherwise (`column "x" does not exist`) are kept.
 */
export function withoutQuotedValues(message: string): string {
  return message
    .replace(/(:\s*)"(?:[^"]|"")*"/g, '$1"…"')
    .replace(/\b(value|literal|string|key)(\s+)"(?:[^"]|"")*"/gi, '$1$2"…"')
    .replace(/(:\s*)'(?:[^']|'')*'/g, "$1'…'");
}

/** Ceiling of the retry after a truncated SQL reply, in tokens. */
export const TRUNCATED_RETRY_MAX_TOKENS = 8192;

/**
 * The dialect hint sent with a PostgreSQL parse error: the MySQL / SQL Server habits small models
 * bring (backtick identifiers, `TOP n`, `LIMIT a, b`, `ISNULL`, `DATEADD`, double-quoted strings).
 * Every dialect's hint is in its profile (`sql/dialects.ts`).
 */
export const POSTGRES_DIALECT_HINT = DIALECTS.postgres.parseRepairHint;

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
  /** For an empty result: the text filters that matched nothing, with the values that exist. */
  emptyFilters?: EmptyFilter[];
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

/**
 * The honest answer for a question this database cannot answer, composed from the model's reason:
 * a noun phrase ("weather forecasts") becomes "This database has no data about weather forecasts.";
 * a sentence ("there is no weather data in the schema") is quoted as the reason.
 */
export function unanswerableAnswer(reason: string): string {
  const cleaned = reason
    .trim()
    .replace(
      /^(this database has no data (about|on|for)|no data (about|on|for)|there is no data (about|on|for))\s+/i,
      '',
    )
    .replace(/[.!]+$/, '')
    .trim();
  if (cleaned === '') return 'This database has no data to answer that question.';
  const sentence =
    /\b(is|are|was|were|has|have|had|does|do|did|cannot|can't|can not|contains?|holds?|lacks?|only)\b/i.test(
      cleaned,
    ) || /^(no|none|there|the|this|it|nothing)\b/i.test(cleaned);
  if (!sentence) return `This database has no data about ${cleaned}.`;
  return `This database cannot answer that question: ${cleaned.charAt(0).toLowerCase()}${cleaned.slice(1)}.`;
}

/**
 * Runs the generate/check/execute loop, yielding `sql`, `refused`, `retried` and `rows` steps.
 * Repaired (each at most `maxRepairs` times in all): a statement the parser rejects (parser message
 * plus {@link POSTGRES_DIALECT_HINT}), unknown names and special names, database errors, and one
 * empty result whose text filter has a near variant in the sampled values. Refused at once, with no
 * repair: several statements, and a statement that parses but breaks the policy. A reply cut by the
 * output limit is retried once with a larger limit. Every rejected attempt is listed in `attempts`
 * with its reason. After the repair bound, a statement whose names still look unknown is executed
 * anyway: the identifier check is advice, the database has the last word.
 * @throws SqlrecallError `guard_refused` (several statements, or a policy break: never repaired),
 *   `model_output` (still not valid PostgreSQL after the repair bound), `sql_not_found`,
 *   `model_truncated` (cut twice; names the limit and `--max-sql-tokens`), `model_*`, `db_*` (after
 *   the repair bound, with `details.attempts`; the message is the last database error).
 */
export async function* generateAndRun(input: GenerateInput): AsyncGenerator<Step, GenerateOutcome> {
  const attempts: Attempt[] = [];
  let messages = input.messages;
  let repairs = 0;
  let emptyChecked = false;
  for (let attempt = 1; ; attempt++) {
    const before = attempts.length;
    const reply = await generateSql(input, messages, attempts);
    // A reply cut by the output limit and retried is an attempt too: the steps show it.
    for (const cut of attempts.slice(before)) yield { type: 'retried', attempt, error: cut.error ?? '' };
    const reason = cannotAnswerReason(reply);
    if (reason !== undefined) return { sql: null, result: EMPTY_RESULT, attempts, unanswerable: reason };
    const canRepair = repairs < input.maxRepairs;
    const guarded = yield* extractAndGuard(reply, input, attempts, canRepair, attempt);
    if (!guarded.ok) {
      repairs += 1;
      yield { type: 'retried', attempt: attempt + 1, error: guarded.problem };
      messages = buildRepairMessages(input.messages, guarded.sql, guarded.problem, input.db.dialect);
      continue;
    }
    const sql = guarded.sql;
    yield { type: 'sql', sql, attempt };
    if (input.schema && canRepair) {
      const check = await checkIdentifiers(sql, input.schema, { searchPath: input.searchPath });
      if (!check.ok) {
        const problem = formatUnknownIdentifiers(check.unknown);
        // Never run, but recorded: under a data policy a denied column is an unknown name here.
        notifyStatement(input.onStatement, {
          sql,
          origin: attempt === 1 ? 'model' : 'repair',
          outcome: 'refused',
          reason: withRule(problem, 'unknown-name'),
          code: 'unknown_name',
        });
        attempts.push({ sql, error: problem });
        repairs += 1;
        yield { type: 'retried', attempt: attempt + 1, error: problem };
        messages = buildRepairMessages(input.messages, sql, problem, input.db.dialect);
        continue;
      }
    }
    let result: QueryResult;
    notifyStatement(input.onStatement, {
      sql,
      origin: attempt === 1 ? 'model' : 'repair',
      outcome: 'started',
    });
    try {
      result = await input.db.execute(sql, {
        maxRows: input.maxRows,
        timeoutMs: input.statementTimeoutMs,
        ...(input.maxResultBytes !== undefined ? { maxBytes: input.maxResultBytes } : {}),
        signal: input.signal,
      });
    } catch (error) {
      notifyStatement(input.onStatement, finishedStatement(sql, attempt === 1 ? 'model' : 'repair', error));
      const repairable =
        error instanceof SqlrecallError && error.code === 'db_query' && !error.details.cancelled;
      const said = error instanceof Error ? error.message : String(error);
      const message = input.privacy ? withoutQuotedValues(said) : said;
      attempts.push({ sql, error: message });
      if (!repairable || !canRepair) {
        if (error instanceof SqlrecallError) {
          error.details.attempts = attempts;
          if (repairable && attempts.length > 1)
            error.details.hint = `Gave up after ${attempts.length} attempts.`;
        }
        throw error;
      }
      repairs += 1;
      yield { type: 'retried', attempt: attempt + 1, error: message };
      messages = buildRepairMessages(input.messages, sql, message, input.db.dialect);
      continue;
    }
    notifyStatement(input.onStatement, {
      sql,
      origin: attempt === 1 ? 'model' : 'repair',
      outcome: 'ran',
      rowCount: result.rowCount,
      ...(result.policies?.length ? { policies: result.policies } : {}),
    });
    if (looksEmpty(result) && input.schema && input.valueHints && !input.privacy) {
      const filters = await checkEmptyResult(
        sql,
        input.schema,
        input.valueHints,
        input.columnSampler ?? createColumnSampler(input.db),
        {
          dialect: input.db.dialect,
          confirm: input.literalConfirmer ?? createLiteralConfirmer(input.db),
        },
      );
      if (!emptyChecked && canRepair && filters.some((f) => f.candidates.length > 0)) {
        emptyChecked = true;
        const problem = emptyRepairText(filters);
        attempts.push({ sql, error: problem });
        repairs += 1;
        yield { type: 'retried', attempt: attempt + 1, error: problem };
        messages = buildRepairMessages(input.messages, sql, problem, input.db.dialect);
        continue;
      }
      attempts.push({ sql });
      yield { type: 'rows', result };
      const reported = result.rowCount === 0 && filters.length > 0;
      return { sql, result, attempts, ...(reported ? { emptyFilters: filters } : {}) };
    }
    attempts.push({ sql });
    yield { type: 'rows', result };
    return { sql, result, attempts };
  }
}

/**
 * True for a result that found nothing: no rows, or the one row of an aggregate over no rows (every
 * cell NULL or zero, as `count(*)`, `sum`, `min` … give when a filter matched nothing).
 */
export function looksEmpty(result: QueryResult): boolean {
  if (result.truncated) return false;
  if (result.rowCount === 0) return true;
  return (
    result.rowCount === 1 &&
    result.rows[0]!.length > 0 &&
    result.rows[0]!.every((cell) => cell === null || cell === 0 || cell === '0')
  );
}

/**
 * One SQL model call; a reply cut by the output limit is recorded and retried once with a larger
 * limit (within the context: the adapter sizes `num_ctx` to prompt + reply).
 * @throws SqlrecallError `model_truncated` when the retry is cut too.
 */
async function generateSql(
  input: GenerateInput,
  messages: ChatMessage[],
  attempts: Attempt[],
): Promise<string> {
  let first = await generateText(
    input.chat,
    { messages, maxTokens: input.maxTokens, purpose: 'sql' },
    { signal: input.signal },
  );
  if (answeredOnlyInReasoning(first)) {
    // A thinking model that put everything in its reasoning: one more call asking for the SQL only.
    attempts.push({ sql: '', error: 'the model answered only in its reasoning, with no reply text' });
    first = await generateText(
      input.chat,
      {
        messages: [...messages, { role: 'user', content: SQL_ONLY_PROMPT }],
        maxTokens: input.maxTokens,
        purpose: 'sql',
      },
      { signal: input.signal },
    );
    if (answeredOnlyInReasoning(first)) {
      throw new SqlrecallError(
        'sql_not_found',
        `The model ${input.chat.id} answered only in its reasoning (twice), never in its reply, so there is no SQL to run.`,
        {
          details: {
            reply: (first.thinking ?? '').slice(0, 500),
            attempts,
            hint: 'use a model without a thinking mode for SQL, or turn its thinking off on the server (e.g. a reasoning budget of 0)',
          },
        },
      );
    }
  }
  if (first.finishReason !== 'length') return replyText(first);
  const larger = input.retryMaxTokens ?? Math.min(TRUNCATED_RETRY_MAX_TOKENS, input.maxTokens * 4);
  attempts.push({
    sql: first.text.trim().slice(0, 2000),
    error: `the reply was cut at the output limit of ${input.maxTokens} tokens; retried with ${larger}`,
  });
  const second =
    larger > input.maxTokens
      ? await generateText(
          input.chat,
          { messages, maxTokens: larger, purpose: 'sql' },
          { signal: input.signal },
        )
      : first;
  if (second.finishReason !== 'length') return replyText(second);
  if (second !== first)
    attempts.push({
      sql: second.text.trim().slice(0, 2000),
      error: `the reply was cut again at ${larger} tokens`,
    });
  throw new SqlrecallError(
    'model_truncated',
    `The model's SQL reply was cut at its output limit of ${Math.max(larger, input.maxTokens)} tokens (after a retry); raise it with --max-sql-tokens (SQLRECALL_MAX_SQL_TOKENS) or ask a shorter question.`,
    { details: { attempts, maxTokens: input.maxTokens, retryMaxTokens: larger } },
  );
}

/** What a reply with reasoning but no content is asked for again. */
const SQL_ONLY_PROMPT =
  'Your reply was empty: everything was in your reasoning. Reply now with the one SQL statement only, in a ```sql fenced block, nothing else.';

/** True for a reply whose content is empty while its reasoning is not (and that has no tool call). */
function answeredOnlyInReasoning(reply: ChatResult): boolean {
  return reply.text.trim() === '' && (reply.thinking ?? '').trim() !== '' && !reply.toolCalls?.length;
}

/**
 * The text SQL is read from: the reply's content, or, when the content holds no statement and the
 * model made a structured tool call, the call's arguments (`{"query": "SELECT …"}`). Reasoning is
 * never part of it.
 */
function replyText(reply: ChatResult): string {
  if (!reply.toolCalls?.length || extractSql(reply.text).ok) return reply.text;
  for (const call of reply.toolCalls) {
    const sql = sqlOfJson(call.arguments);
    if (sql !== undefined) return sql;
  }
  return reply.text;
}

type Guarded = { ok: true; sql: string } | { ok: false; sql: string; problem: string };

/**
 * Extracts the one statement and guards it. A statement the parser rejects comes back as a problem
 * to repair while repairs remain; several statements and policy breaks yield `refused` and throw.
 */
async function* extractAndGuard(
  text: string,
  input: GenerateInput,
  attempts: Attempt[],
  canRepair: boolean,
  attempt: number,
): AsyncGenerator<Step, Guarded> {
  const origin = attempt === 1 ? 'model' : 'repair';
  const extracted = extractSql(text);
  if (!extracted.ok && extracted.statements) {
    // Several statements at once is what an injection looks like: a refusal, not a parse failure.
    const joined = extracted.statements.join(';\n');
    attempts.push({ sql: joined, error: refusalText(extracted.reason) });
    yield { type: 'refused', sql: joined, reason: extracted.reason };
    const refusal = guardRefusal(extracted.reason, 'multiple-statements', {
      details: { sql: joined, attempts },
    });
    notifyStatement(input.onStatement, failedStatement(joined, origin, refusal));
    throw refusal;
  }
  if (!extracted.ok) {
    // A prose reply (a refusal, an explanation) is the model's reason: shown as it wrote it.
    const prose = text
      .replace(/<think>[\s\S]*?<\/think>/gi, '')
      .replace(/\s+/g, ' ')
      .trim();
    const said = prose.length > 300 ? `${prose.slice(0, 297)}...` : prose;
    throw new SqlrecallError(
      'sql_not_found',
      said
        ? `The model wrote no SQL. It said: "${said}"`
        : `The model's reply has no usable SQL: ${extracted.reason}`,
      { details: { reply: text.slice(0, 500), attempts } },
    );
  }
  const verdict = await guardForDialect(input.db.dialect, extracted.sql, {
    allowTables: input.allowTables,
    schema: input.schema,
  });
  if (verdict.ok) return { ok: true, sql: verdict.sql };
  if (verdict.rule === 'parse-error') {
    // A syntax error is a dialect habit, not an attack: repair it with the parser's message.
    const profile = dialectProfile(input.db.dialect);
    const problem = `${verdict.reason}\n${profile.parseRepairHint}`;
    attempts.push({ sql: extracted.sql, error: problem });
    // Never run, but recorded: the audit holds every statement the model wrote for the user.
    notifyStatement(
      input.onStatement,
      failedStatement(extracted.sql, origin, guardRefusal(verdict.reason, verdict.rule)),
    );
    if (canRepair) return { ok: false, sql: extracted.sql, problem };
    throw new SqlrecallError(
      'model_output',
      `The model's SQL is still not valid ${profile.label} after ${attempts.length} attempts: ${verdict.reason}`,
      { details: { sql: extracted.sql, rule: verdict.rule, attempts } },
    );
  }
  attempts.push({ sql: extracted.sql, error: refusalText(verdict.reason) });
  yield { type: 'refused', sql: extracted.sql, reason: verdict.reason };
  const refusal = guardRefusal(verdict.reason, verdict.rule, { details: { sql: extracted.sql, attempts } });
  notifyStatement(input.onStatement, failedStatement(extracted.sql, origin, refusal));
  throw refusal;
}
