/**
 * The question pipeline (DESIGN.md): plan context → generate → extract → guard → execute →
 * (repair on database errors, bounded) → explain. Composed from small functions; every stage reports
 * a {@link Step} so the CLI, HTTP/SSE and the UI see the same progress.
 */
import type { ChatMessage, ChatModel, DatabaseConnector } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { AskOutcome, Step } from '../core/steps.js';
import { estimateTokens } from '../models/tokens.js';
import { renderSchema } from '../sql/render.js';
import { type ContextPlanner, wholeSchemaPlanner } from './context.js';
import { generateAndRun } from './generate.js';
import { buildAnswerMessages, buildSqlMessages, NO_DATA_ANSWER } from './prompts.js';

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
  /** Chooses the schema part of the prompt; default {@link wholeSchemaPlanner}. */
  planContext?: ContextPlanner;
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
    const { schema } = await this.schema();
    const today = (this.options.now?.() ?? new Date()).toISOString().slice(0, 10);
    const context = await (this.options.planContext ?? wholeSchemaPlanner)(input.message, schema);
    const messages = buildSqlMessages({ question: input.message, schemaText: context.schemaText, today });
    yield {
      type: 'schema',
      tables: context.tables.length,
      promptTokens: estimateTokens(messages.map((m) => m.content).join('\n')),
    };

    const { sql, result, attempts } = yield* generateAndRun({
      chat,
      db,
      messages,
      maxRows: this.options.maxRows ?? 1000,
      statementTimeoutMs: this.options.statementTimeoutMs ?? 30_000,
      maxRepairs: this.options.maxRepairs ?? 2,
      maxTokens: this.options.sqlMaxTokens ?? 1024,
      signal: input.signal,
    });

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
