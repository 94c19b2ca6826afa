/**
 * The question pipeline (DESIGN.md): plan context → generate → extract → guard → execute →
 * (repair on database errors, bounded) → explain. Composed from small functions; every stage reports
 * a {@link Step} so the CLI, HTTP/SSE and the UI see the same progress.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatMessage, ChatModel, DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { AskOutcome, Attempt, Step } from '../core/steps.js';
import { estimateTokens } from '../models/tokens.js';
import { extractSql } from '../sql/extract.js';
import { guardSql } from '../sql/guard.js';
import { renderSchema } from '../sql/render.js';
import { buildAnswerMessages, buildRepairMessages, buildSqlMessages, NO_DATA_ANSWER } from './prompts.js';

/** Dependencies and limits of an {@link Assistant}. */
export interface AssistantOptions {
  chat: ChatModel;
  db: DatabaseConnector;
  /** Catalog provider; called once and cached for the assistant's lifetime. */
  loadSchema: () => Promise<Schema>;
  /** Row cap per statement (default 1000). */
  maxRows?: number;
  /** Statement timeout in ms (default 30000). */
  statementTimeoutMs?: number;
  /** Repairs after a database error (default 2). */
  maxRepairs?: number;
  /** Most tokens for the SQL reply (default 1024) and for the answer (default 400). */
  sqlMaxTokens?: number;
  answerMaxTokens?: number;
  /** Clock for "today" in prompts; default `new Date()`. */
  now?: () => Date;
}

/** One question. */
export interface AskInput {
  /** User id (memory scope from the memory issue on). */
  user: string;
  message: string;
  signal?: AbortSignal;
  /** Skip the answer model call (e.g. `--no-answer`); the outcome's answer is then null. */
  skipAnswer?: boolean;
}

/** Answers questions about one database. */
export class Assistant {
  private schemaPromise: Promise<{ schema: Schema; text: string }> | undefined;

  constructor(private readonly options: AssistantOptions) {}

  /** The catalog and its prompt rendering, loaded once. */
  schema(): Promise<{ schema: Schema; text: string }> {
    this.schemaPromise ??= this.options
      .loadSchema()
      .then((schema) => ({ schema, text: renderSchema(schema) }));
    // A failed load must not poison later calls.
    this.schemaPromise.catch(() => {
      this.schemaPromise = undefined;
    });
    return this.schemaPromise;
  }

  /**
   * Runs the pipeline for one message, yielding steps; the last step is always `done`.
   * @throws SqlrecallError `guard_refused` (the model's SQL was refused), `sql_not_found`,
   *   `model_*`, `db_*` — thrown after the steps that led to it were yielded.
   */
  async *ask(input: AskInput): AsyncGenerator<Step, AskOutcome> {
    const { chat, db } = this.options;
    const maxRepairs = this.options.maxRepairs ?? 2;
    const { text: schemaText, schema } = await this.schema();
    const today = (this.options.now?.() ?? new Date()).toISOString().slice(0, 10);
    const base = buildSqlMessages({ question: input.message, schemaText, today });
    yield { type: 'schema', tables: schema.tables.length, promptTokens: estimateTokens(messagesText(base)) };

    const attempts: Attempt[] = [];
    let messages: ChatMessage[] = base;
    let result: QueryResult | undefined;
    let sql = '';
    for (let attempt = 1; ; attempt++) {
      const reply = await chat.generate(
        { messages, maxTokens: this.options.sqlMaxTokens ?? 1024, purpose: 'sql' },
        { signal: input.signal },
      );
      if (reply.finishReason === 'length') {
        throw new SqlrecallError(
          'model_truncated',
          'The model stopped before finishing the SQL (it hit its token limit); try a shorter question or a larger --num-ctx.',
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
        throw new SqlrecallError(
          'sql_not_found',
          `The model's reply has no usable SQL: ${extracted.reason}`,
          {
            details: { reply: reply.text.slice(0, 500) },
          },
        );
      }
      const verdict = await guardSql(extracted.sql);
      if (!verdict.ok) {
        attempts.push({ sql: extracted.sql, error: `refused: ${verdict.reason}` });
        yield { type: 'refused', sql: extracted.sql, reason: verdict.reason };
        throw new SqlrecallError('guard_refused', `Refused: ${verdict.reason}`, {
          details: { sql: extracted.sql, rule: verdict.rule, attempts },
        });
      }
      sql = verdict.sql;
      yield { type: 'sql', sql, attempt };
      try {
        result = await db.execute(sql, {
          maxRows: this.options.maxRows ?? 1000,
          timeoutMs: this.options.statementTimeoutMs ?? 30_000,
          signal: input.signal,
        });
        attempts.push({ sql });
        break;
      } catch (error) {
        const repairable = error instanceof SqlrecallError && error.code === 'db_query';
        const message = error instanceof Error ? error.message : String(error);
        attempts.push({ sql, error: message });
        if (!repairable || attempt > maxRepairs) {
          if (error instanceof SqlrecallError) error.details.attempts = attempts;
          throw error;
        }
        yield { type: 'retried', attempt: attempt + 1, error: message };
        messages = buildRepairMessages(base, sql, message);
      }
    }
    yield { type: 'rows', result };

    let answer: string | null = null;
    if (!input.skipAnswer) {
      if (result.rowCount === 0) {
        answer = NO_DATA_ANSWER;
        yield { type: 'answer_token', text: answer };
      } else {
        const stream = streamAnswer(chat, buildAnswerMessages(input.message, sql, result), {
          maxTokens: this.options.answerMaxTokens ?? 400,
          signal: input.signal,
        });
        let reply = '';
        for (;;) {
          const next = await stream.next();
          if (next.done) {
            reply = next.value;
            break;
          }
          yield { type: 'answer_token', text: next.value };
        }
        answer = reply.trim();
      }
      yield { type: 'answer', text: answer };
    }
    const outcome: AskOutcome = {
      question: input.message,
      sql,
      result,
      answer,
      attempts,
      appliedMemories: [],
    };
    yield { type: 'done', outcome };
    return outcome;
  }
}

/**
 * Streams the answer: yields text pieces as the model produces them, returns the whole text.
 * A reply cut by the token limit is marked with a trailing ellipsis rather than passed off as whole.
 */
async function* streamAnswer(
  chat: ChatModel,
  messages: ChatMessage[],
  opts: { maxTokens: number; signal?: AbortSignal },
): AsyncGenerator<string, string> {
  const queue: string[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const call = chat
    .generate(
      { messages, maxTokens: opts.maxTokens, purpose: 'answer' },
      {
        signal: opts.signal,
        onToken: (text) => {
          queue.push(text);
          wake?.();
        },
      },
    )
    .finally(() => {
      finished = true;
      wake?.();
    });
  call.catch(() => {}); // observed below; avoids an unhandled rejection while we wait
  for (;;) {
    while (queue.length > 0) yield queue.shift()!;
    if (finished) break;
    await new Promise<void>((resolve) => {
      wake = resolve;
    });
    wake = undefined;
  }
  const reply = await call;
  return reply.finishReason === 'length' ? `${reply.text.trim()} …` : reply.text;
}

function messagesText(messages: ChatMessage[]): string {
  return messages.map((m) => m.content).join('\n');
}
