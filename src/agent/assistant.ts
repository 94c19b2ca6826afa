/**
 * The question pipeline: plan context → generate → extract → guard → execute →
 * (repair on database errors, bounded) → explain. Every stage reports a {@link Step} so the CLI,
 * HTTP/SSE and the UI see the same progress. This class holds what lives as long as the assistant
 * (the catalog, the database session, value hints) and picks the path of one message; the jobs
 * themselves live apart: the turn with the model in `question-turn.ts`, the answer without it in
 * `without-model.ts`, few-shot examples in `few-shot.ts`, the memory turn's steps in
 * `turn-steps.ts`, the database session in `database-session.ts`.
 */

import { checkQuestion } from '../core/limits.js';
import type { Schema } from '../core/schema.js';
import type { AskOutcome, Step } from '../core/steps.js';
import type { ValueHint } from '../linking/documents.js';
import { createValueSampler } from '../linking/value-hints.js';
import type { AskInput, AssistantOptions } from './assistant-options.js';
import { type DatabaseSession, readDatabaseSession } from './database-session.js';
import type { ValueHintSource } from './empty-check.js';
import { runQuestionTurn } from './question-turn.js';
import { replyWithoutSql } from './turn-steps.js';
import { answerFromSavedWork, MODEL_DOWN } from './without-model.js';

export type { AskInput, AssistantOptions } from './assistant-options.js';
export { DATABASE_SESSION_SQL, type DatabaseSession, readDatabaseSession } from './database-session.js';
export { DEFAULT_FEW_SHOT_MAX, DEFAULT_FEW_SHOT_MAX_TOKENS, withKnownUserSetting } from './few-shot.js';
export { recalledOnly } from './turn-steps.js';

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
    const options = await this.userOptions(input);
    if (input.noModel) return yield* this.withoutModel(options, input, schema, '--no-model', undefined);
    try {
      return yield* this.withModel(options, input, schema);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (this.options.fallback === false || typeof code !== 'string' || !MODEL_DOWN.has(code)) throw error;
      return yield* this.withoutModel(options, input, schema, `the model is not available (${code})`, error);
    }
  }

  /**
   * The options of one message: every statement of it (model-written, repaired, an example or
   * rule answer) runs on the database as its user may read it, under that user's data policy.
   */
  private async userOptions(input: AskInput): Promise<AssistantOptions> {
    const { databaseFor } = this.options;
    if (!databaseFor) return this.options;
    const db = await databaseFor(input.user, input.team !== undefined ? { team: input.team } : {});
    return { ...this.options, db };
  }

  /** Answers from a saved example or a rule (see `without-model.ts`). */
  private withoutModel(
    options: AssistantOptions,
    input: AskInput,
    schema: Schema,
    why: string,
    modelError: unknown,
  ): AsyncGenerator<Step, AskOutcome> {
    return answerFromSavedWork(options, this.valueHints, input, schema, why, modelError);
  }

  /** The pipeline with the model (memory turn, generation, answer). */
  private async *withModel(
    options: AssistantOptions,
    input: AskInput,
    schema: Schema,
  ): AsyncGenerator<Step, AskOutcome> {
    const turn = await this.options.memory?.begin({ ...input, schema });
    if (turn)
      yield { type: 'classified', kind: turn.classification.kind, source: turn.classification.source };
    if (turn?.reply) return yield* replyWithoutSql(input.message, turn);
    try {
      return yield* runQuestionTurn(
        { options, session: () => this.session(), valueHints: this.valueHints },
        input,
        schema,
        turn,
      );
    } catch (error) {
      await turn?.abandon(); // the instruction part of the message is still learned
      throw error;
    }
  }
}
