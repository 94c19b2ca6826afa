/**
 * The question pipeline: plan context → generate → extract → guard → execute →
 * (repair on database errors, bounded) → explain. Composed from small functions; every stage reports
 * a {@link Step} so the CLI, HTTP/SSE and the UI see the same progress.
 */

import { SqlrecallError } from '../core/errors.js';
import { checkQuestion } from '../core/limits.js';
import type { ChatModel, DatabaseConnector, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { AppliedMemory, AskOutcome, Step } from '../core/steps.js';
import { estimateTokens } from '../core/tokens.js';
import { type DatabaseSession, postgresDialect } from '../databases/postgres/dialect.js';
import type { ValueHint } from '../linking/documents.js';
import { createValueSampler } from '../linking/value-hints.js';
import type { RecalledMemory } from '../memory/recall.js';
import { writeAnswer } from './answer.js';
import { type ContextPlanner, wholeSchemaPlanner } from './context.js';
import type { ValueHintSource } from './empty-check.js';
import type { ExampleReuseOptions } from './example-reuse.js';
import {
  coveredByLinkedTables,
  type ExampleMatchOptions,
  nearestExamples,
  type SimilarExample,
} from './example-similarity.js';
import { answerWithoutModel, type ExampleSource, modelNeededError } from './fallback.js';
import type { PreferenceSource } from './fallback-preferences.js';
import type { MemoryHook, MemoryTurn } from './memory-hook.js';
import {
  appliedMemories,
  generateApplyingPreferences,
  renderConversationBlock,
  renderMemoriesBlock,
  requiredPredicates,
} from './memory-sql.js';
import { buildSqlMessages, type PromptExample, renderExamplesBlock } from './prompts.js';
import type { SetAsideMemory, UndecidedMemory } from './set-aside.js';

/** Dependencies and limits of an {@link Assistant}. */
export interface AssistantOptions {
  chat: ChatModel;
  /**
   * How to start the configured model server, for "this question needs the model" errors; default
   * Ollama's (`ollama serve`). The runtime passes the OpenAI-compatible server's address instead.
   */
  modelStartHint?: string;
  db: DatabaseConnector;
  /** Catalog provider; called once and cached for the assistant's lifetime. */
  loadSchema: () => Promise<Schema>;
  /** Row cap per statement (default 1000). */
  maxRows?: number;
  /** Statement timeout in ms (default 30000). */
  statementTimeoutMs?: number;
  /** Byte budget per result (default: the connector's, 64 MiB). */
  maxResultBytes?: number;
  /** Repairs after a database error (default 2). */
  maxRepairs?: number;
  /** Most tokens for the SQL reply (default 1024) and for the answer (default 400). */
  sqlMaxTokens?: number;
  answerMaxTokens?: number;
  /**
   * Fallback clock for "today" in prompts, used only when the database cannot say its own
   * `current_date` (read once per session with its `TimeZone`); default `new Date()`.
   */
  now?: () => Date;
  /**
   * Sampled value hints per table for the empty-result check; default a bounded sampler over `db`
   * (`createValueSampler`: first 2,000 rows or TABLESAMPLE, never a full scan), cached per table.
   */
  valueHints?: ValueHintSource;
  /** Chooses the schema part of the prompt; default {@link wholeSchemaPlanner}. */
  planContext?: ContextPlanner;
  /** Allowlist mode (`--allow-tables`): the only relations a query may read. */
  allowTables?: readonly string[];
  /** Long-term memory and conversation context; without it every message is a plain question. */
  memory?: MemoryHook;
  /**
   * Saved examples for answers without the model; usually the memory store. Without it
   * only the rules answer when the model is down.
   */
  examples?: ExampleSource;
  /** Thresholds of example reuse (see `example-reuse.ts`). */
  reuse?: ExampleReuseOptions;
  /**
   * Standing preferences (usually the memory store): an example or rule answer that does not
   * already apply one that covers its tables is refused (see `fallback-preferences.ts`).
   */
  preferences?: PreferenceSource;
  /**
   * Embeds the question to find similar examples with the memory store's `search` (few-shot);
   * without it, or when it fails, examples are found by word similarity.
   */
  exampleEmbedder?: EmbeddingModel;
  /** Similarity floors of examples (see `example-similarity.ts`). */
  exampleMatch?: ExampleMatchOptions;
  /**
   * Few-shot: most examples in the SQL prompt (default 3; 0 turns it off) and
   * most tokens of their block (default 600, estimated; reserved from the schema's budget).
   */
  fewShotMax?: number;
  fewShotMaxTokens?: number;
  /** Answer from examples and rules when the model is unreachable (default true). */
  fallback?: boolean;
}

/** One question. */
export interface AskInput {
  /** User id (memory scope from the memory issue on). */
  user: string;
  message: string;
  signal?: AbortSignal;
  /** Skip the answer model call (e.g. `--no-answer`); the outcome's answer is then null. */
  skipAnswer?: boolean;
  /** The user's team, whose shared memories also apply. */
  team?: string;
  /** Conversation to continue (follow-ups see its recent turns); default a fresh one. */
  conversationId?: string;
  /** Memory ids (or id prefixes) not to apply to this message. */
  without?: string[];
  /** A plain-language "forget …" in the message may delete (`ask --yes`); default false: it asks first. */
  confirmDeletes?: boolean;
  /** Answer only from saved examples and rules, never calling the model (`ask --no-model`). */
  noModel?: boolean;
  /**
   * The user's IANA time zone, for days a message names ("until Friday"); default
   * `SQLRECALL_TZ`, else the process's zone (see `memory/expiry.ts`).
   */
  timeZone?: string;
}

/** Default of {@link AssistantOptions.fewShotMax}: 3 examples. */
export const DEFAULT_FEW_SHOT_MAX = 3;
/** Default of {@link AssistantOptions.fewShotMaxTokens}: 600 estimated tokens. */
export const DEFAULT_FEW_SHOT_MAX_TOKENS = 600;

function promptExample(c: SimilarExample): PromptExample {
  return { id: c.memory.id, question: c.memory.text, sql: c.memory.sql!, owner: c.owner };
}

/** Model errors after which the question is answered without the model, if an example or rule fits. */
const MODEL_DOWN = new Set(['model_unreachable', 'model_missing', 'model_timeout']);

/** Answers questions about one database. */
export class Assistant {
  private schemaPromise: Promise<{ schema: Schema }> | undefined;
  private sessionPromise: Promise<DatabaseSession> | undefined;
  private readonly hintCache = new Map<string, Promise<ValueHint[]>>();

  constructor(private readonly options: AssistantOptions) {}

  /** The catalog, loaded once (the prompt's rendering of it is the context planner's job). */
  schema(): Promise<{ schema: Schema }> {
    this.schemaPromise ??= this.options.loadSchema().then((schema) => ({ schema }));
    // A failed load must not poison later calls.
    this.schemaPromise.catch(() => {
      this.schemaPromise = undefined;
    });
    return this.schemaPromise;
  }

  /**
   * Reads the catalog again (a table created since start appears); later questions use the new one.
   * @throws SqlrecallError `db_*` when the database cannot be read (the old catalog is then dropped too)
   */
  refreshSchema(): Promise<{ schema: Schema }> {
    this.schemaPromise = undefined;
    return this.schema();
  }

  /**
   * The database's own today, time zone and search path, read once per session (the
   * prompt's "today" is the database's, not the process clock's). On failure the process clock
   * stands in and the next call tries again.
   */
  session(): Promise<DatabaseSession> {
    this.sessionPromise ??= readDatabaseSession(
      this.options.db,
      this.options.statementTimeoutMs ?? 30_000,
    ).catch(() => {
      this.sessionPromise = undefined;
      return { today: (this.options.now?.() ?? new Date()).toISOString().slice(0, 10) };
    });
    return this.sessionPromise;
  }

  /** Value hints of one table: the configured source, or the bounded sampler, cached per table. */
  private valueHints: ValueHintSource = (table) => {
    if (this.options.valueHints) return this.options.valueHints(table);
    // The sampler writes PostgreSQL (quoted identifiers, TABLESAMPLE): no value hints on MySQL yet.
    if (this.options.db.dialect === 'mysql') return Promise.resolve([]);
    const key = `${table.schema}.${table.name}`;
    let hints = this.hintCache.get(key);
    if (!hints) {
      hints = createValueSampler(this.options.db)(table);
      this.hintCache.set(key, hints);
    }
    return hints;
  };

  /**
   * Runs the pipeline for one message, yielding steps; the last step is always `done`.
   * @throws SqlrecallError `guard_refused` (the model's SQL was refused), `sql_not_found`,
   *   `model_*`, `db_*` — thrown after the steps that led to it were yielded.
   */
  async *ask(input: AskInput): AsyncGenerator<Step, AskOutcome> {
    // Every surface checks the question before any model call (empty or over the documented limit).
    checkQuestion(input.message);
    const { schema } = await this.schema();
    if (input.noModel) return yield* this.withoutModel(input, schema, '--no-model', undefined);
    try {
      return yield* this.withModel(input, schema);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (this.options.fallback === false || typeof code !== 'string' || !MODEL_DOWN.has(code)) throw error;
      return yield* this.withoutModel(input, schema, `the model is not available (${code})`, error);
    }
  }

  /**
   * Answers from a saved example or a rule; memory is neither classified nor learned
   * from (both need the model). The original error (or a "model needed" one) when neither fits.
   */
  private async *withoutModel(
    input: AskInput,
    schema: Schema,
    why: string,
    modelError: unknown,
  ): AsyncGenerator<Step, AskOutcome> {
    // The schema linker's tables for the question (lexical when the embedding model is down too);
    // a planner failure leaves every table linked, the example's own tables are still checked.
    const linkedTables = await (this.options.planContext ?? wholeSchemaPlanner)(input.message, schema).then(
      (context) => context.tables,
      () => undefined,
    );
    const found = await answerWithoutModel({
      question: input.message,
      ...(linkedTables ? { linkedTables } : {}),
      user: input.user,
      team: input.team,
      schema,
      db: this.options.db,
      examples: this.options.examples,
      allowTables: this.options.allowTables,
      maxRows: this.options.maxRows ?? 1000,
      timeoutMs: this.options.statementTimeoutMs ?? 30_000,
      signal: input.signal,
      reuse: this.options.reuse,
      ...(this.options.preferences ? { preferences: this.options.preferences } : {}),
      ...(input.without ? { without: input.without } : {}),
      valueHints: this.valueHints,
    });
    const startHint = this.options.modelStartHint;
    if (!found) throw modelNeededError(why, modelError, undefined, startHint);
    if (found.path === 'blocked') throw modelNeededError(why, modelError, found, startHint);
    yield {
      type: 'fallback',
      path: found.path,
      ...(found.exampleId ? { exampleId: found.exampleId } : {}),
      why,
      explanation: found.explanation,
    };
    yield { type: 'sql', sql: found.sql, attempt: 1 };
    yield { type: 'rows', result: found.result };
    const answer = input.skipAnswer ? null : found.explanation;
    if (answer !== null) {
      yield { type: 'answer_token', text: answer };
      yield { type: 'answer', text: answer };
    }
    const outcome: AskOutcome = {
      question: input.message,
      sql: found.sql,
      result: found.result,
      answer,
      attempts: [{ sql: found.sql }],
      appliedMemories: [],
      recalledMemories: [],
      path: found.path,
      ...(found.exampleId ? { exampleId: found.exampleId } : {}),
      ...(input.conversationId !== undefined ? { conversationId: input.conversationId } : {}),
    };
    yield { type: 'done', outcome };
    return outcome;
  }

  /**
   * The user's (then the team's) saved examples most similar to the question, at most
   * `fewShotMax`, before the linked-table check. Never another user's: only the user's and the
   * team's scopes are read. A failing embedding falls back to word similarity; a failing store to none.
   */
  private async fewShotCandidates(
    input: AskInput,
    question: string,
    turn: MemoryTurn | undefined,
  ): Promise<SimilarExample[]> {
    const max = this.options.fewShotMax ?? DEFAULT_FEW_SHOT_MAX;
    if (max <= 0 || !this.options.examples) return [];
    const source = withKnownUserSetting(this.options.examples, input.user, turn?.memoryEnabled);
    let embedding: number[] | undefined;
    if (this.options.exampleEmbedder && this.options.examples.search) {
      embedding = await this.options.exampleEmbedder
        .embed([question], { signal: input.signal })
        .then((v) => v[0])
        .catch(() => undefined);
    }
    const skipped = (id: string) => (input.without ?? []).some((w) => w.length > 0 && id.startsWith(w));
    const found = await nearestExamples({
      question,
      user: input.user,
      ...(input.team !== undefined ? { team: input.team } : {}),
      source,
      ...(embedding ? { embedding } : {}),
      ...(this.options.exampleMatch ? { options: this.options.exampleMatch } : {}),
    }).catch(() => []);
    return found.filter((c) => !skipped(c.memory.id)).slice(0, max);
  }

  /** The pipeline with the model (memory turn, generation, answer). */
  private async *withModel(input: AskInput, schema: Schema): AsyncGenerator<Step, AskOutcome> {
    const turn = await this.options.memory?.begin({ ...input, schema });
    if (turn)
      yield { type: 'classified', kind: turn.classification.kind, source: turn.classification.source };
    if (turn?.reply) return yield* replyWithoutSql(input.message, turn);
    try {
      return yield* this.answer(input, schema, turn);
    } catch (error) {
      await turn?.abandon(); // the instruction part of the message is still learned
      throw error;
    }
  }

  /** The question pipeline proper: plan, generate, check, execute, explain, then finish the memory turn. */
  private async *answer(
    input: AskInput,
    schema: Schema,
    turn: MemoryTurn | undefined,
  ): AsyncGenerator<Step, AskOutcome> {
    const { chat, db } = this.options;
    const question = turn?.question ?? input.message;
    const session = await this.session();
    const candidates = await this.fewShotCandidates(input, question, turn);
    const maxExampleTokens = this.options.fewShotMaxTokens ?? DEFAULT_FEW_SHOT_MAX_TOKENS;
    const reserved = estimateTokens(renderExamplesBlock(candidates.map(promptExample), maxExampleTokens));
    const context = await (this.options.planContext ?? wholeSchemaPlanner)(
      question,
      schema,
      candidates.length > 0 ? { reservedTokens: reserved } : undefined,
    );
    // Only examples whose SQL reads tables the linker chose for this question are shown.
    const relevant = await coveredByLinkedTables(candidates, context.tables, schema);
    const examplesText = renderExamplesBlock(relevant.map(promptExample), maxExampleTokens);
    const memory = await turn?.prompt(context.tables);
    if (memory && memory.recalled.length > 0) {
      yield {
        type: 'recalled',
        memories: memory.recalled.map((r) => ({
          id: r.memory.id,
          kind: r.memory.kind,
          text: r.memory.text,
          why: r.why,
        })),
      };
    }
    const messages = buildSqlMessages({
      question,
      schemaText: context.schemaText,
      today: session.today,
      ...(session.timeZone ? { timeZone: session.timeZone } : {}),
      memoriesText: memory ? renderMemoriesBlock(memory.recalled, memory.transient) : '',
      conversationText: renderConversationBlock(memory?.conversationText ?? ''),
      examplesText,
      dialect: this.options.db.dialect,
    });
    yield {
      type: 'schema',
      tables: context.tables.length,
      promptTokens: estimateTokens(messages.map((m) => m.content).join('\n')),
    };

    const required = memory ? await requiredPredicates(memory.recalled) : [];
    const setAside: SetAsideMemory[] = [];
    const undecided: UndecidedMemory[] = [];
    const generated = yield* generateApplyingPreferences(
      {
        chat,
        db,
        messages,
        schema,
        allowTables: this.options.allowTables,
        maxRows: this.options.maxRows ?? 1000,
        statementTimeoutMs: this.options.statementTimeoutMs ?? 30_000,
        maxResultBytes: this.options.maxResultBytes,
        maxRepairs: this.options.maxRepairs ?? 2,
        maxTokens: this.options.sqlMaxTokens ?? 1024,
        signal: input.signal,
        valueHints: this.valueHints,
        ...(session.searchPath ? { searchPath: session.searchPath } : {}),
      },
      required,
      { question, setAside, undecided },
    );
    const { sql, result, attempts, unanswerable } = generated;

    const answer = yield* writeAnswer({
      chat,
      question,
      generated,
      setAside,
      undecided,
      maxTokens: this.options.answerMaxTokens ?? 400,
      ...(input.skipAnswer ? { skipAnswer: true } : {}),
      ...(input.signal ? { signal: input.signal } : {}),
    });
    const applied = memory ? await appliedMemories(memory.recalled, sql) : [];
    const outcome: AskOutcome = {
      question: input.message,
      sql,
      result,
      answer,
      attempts,
      appliedMemories: applied,
      recalledMemories: memory ? recalledOnly(memory.recalled, applied, setAside) : [],
      ...(setAside.length > 0
        ? { setAsideMemories: setAside.map(({ id, kind, text, reason }) => ({ id, kind, text, reason })) }
        : {}),
      ...(unanswerable !== undefined ? { unanswerable } : {}),
      ...(memory?.notes?.length ? { memoryProblems: [...memory.notes] } : {}),
    };
    if (turn) yield* finishTurn(turn, outcome, memory?.transient ?? []);
    yield { type: 'done', outcome };
    return outcome;
  }
}

/**
 * The memories that reached the prompt but are neither applied (verified in the SQL) nor set aside
 * for this question, in recall order, as `{id, kind, text}`.
 */
export function recalledOnly(
  recalled: RecalledMemory[],
  applied: readonly { id: string }[],
  setAside: readonly { id: string }[] = [],
): AppliedMemory[] {
  const listed = new Set([...applied, ...setAside].map((m) => m.id));
  return recalled
    .filter((r) => !listed.has(r.memory.id))
    .map((r) => ({ id: r.memory.id, kind: r.memory.kind, text: r.memory.text }));
}

/**
 * `source` answering `isEnabled` for the user's own scope with `enabled` (when known: the memory
 * turn read it for this message) instead of another store query; other scopes still ask the store.
 */
export function withKnownUserSetting(
  source: ExampleSource,
  user: string,
  enabled: boolean | undefined,
): ExampleSource {
  if (enabled === undefined) return source;
  const ask = source.isEnabled?.bind(source);
  return {
    list: (scope, options) => source.list(scope, options),
    ...(source.search ? { search: source.search.bind(source) } : {}),
    isEnabled: (scope) =>
      scope.user === user && scope.team === undefined
        ? Promise.resolve(enabled)
        : ask
          ? ask(scope)
          : Promise.resolve(true),
  };
}

export type { DatabaseSession } from '../databases/postgres/dialect.js';

/** The one statement {@link readDatabaseSession} runs (the pipeline's own read, never model SQL). */
export const DATABASE_SESSION_SQL = postgresDialect.sessionSql;

/**
 * Reads the session's today, time zone and search path with one read-only statement through the
 * connector (the dialect writes and reads it).
 * @throws SqlrecallError `db_*` when the database cannot answer.
 */
export async function readDatabaseSession(
  db: DatabaseConnector,
  timeoutMs: number,
): Promise<DatabaseSession> {
  const result = await db.execute(DATABASE_SESSION_SQL, { maxRows: 1, timeoutMs });
  const session = postgresDialect.sessionFromRow(result.rows[0] ?? []);
  if (!session) throw new SqlrecallError('db_query', 'The database did not report its current date.');
  return session;
}

/** A message that needs no SQL (instruction, memory command, greeting): its reply, then `done`. */
async function* replyWithoutSql(message: string, turn: MemoryTurn): AsyncGenerator<Step, AskOutcome> {
  const reply = turn.reply!;
  if (reply.changes.length > 0 || reply.problems.length > 0) {
    yield { type: 'remembered', changes: reply.changes, problems: reply.problems };
  }
  yield { type: 'reply', text: reply.text };
  const outcome: AskOutcome = {
    question: message,
    sql: null,
    result: null,
    answer: reply.text,
    attempts: [],
    appliedMemories: [],
    recalledMemories: [],
    kind: turn.classification.kind,
    remembered: reply.changes,
    memoryProblems: reply.problems,
    conversationId: turn.conversationId,
  };
  yield { type: 'done', outcome };
  return outcome;
}

/**
 * After the answer was shown: records the turn and applies the message's pending write. A failed
 * write stays queued (applied at the next start) and is reported, never fatal to the answer.
 */
async function* finishTurn(
  turn: MemoryTurn,
  outcome: AskOutcome,
  transient: string[],
): AsyncGenerator<Step, void> {
  outcome.kind = turn.classification.kind;
  outcome.conversationId = turn.conversationId;
  let learned: Awaited<ReturnType<MemoryTurn['finish']>> = null;
  try {
    learned = await turn.finish({
      sql: outcome.sql,
      rowCount: outcome.result?.rowCount ?? null,
      answer: outcome.answer,
      appliedMemories: outcome.appliedMemories,
      recalledMemories: outcome.recalledMemories,
    });
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    learned = {
      text: '',
      changes: [],
      problems: [`Could not store it now (${why}); it will be stored at the next start.`],
    };
  }
  if (!learned) return;
  outcome.remembered = learned.changes;
  outcome.memoryProblems = [...(outcome.memoryProblems ?? []), ...learned.problems];
  // The instruction applied to this answer is now a stored memory: list it by its id.
  const listed = new Set(outcome.appliedMemories.map((m) => m.id));
  const stored = learned.changes.filter((c) => c.id !== null && c.action !== 'DELETE' && !listed.has(c.id));
  if (transient.length > 0 && stored.length > 0) {
    outcome.appliedMemories.push(...stored.map((c) => ({ id: c.id!, kind: c.kind, text: c.text })));
    const applied = new Set(outcome.appliedMemories.map((m) => m.id));
    outcome.recalledMemories = outcome.recalledMemories.filter((m) => !applied.has(m.id));
  }
  yield { type: 'remembered', changes: learned.changes, problems: learned.problems };
}
