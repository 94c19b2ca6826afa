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
import { createValueSampler, type ValueSampler } from '../linking/value-hints.js';
import { type EffectivePolicy, restrictsData, unrestrictedPolicy } from '../policy/types.js';
import { policyKey, rowFilterSql, rowFiltersOf, visibleSchema, visibleTable } from '../policy/visibility.js';
import { onlyAllowedTables } from '../sql/allowlist.js';
import type { AskInput, AssistantOptions } from './assistant-options.js';
import { type DatabaseSession, readDatabaseSession } from './database-session.js';
import type { ValueHintSource } from './empty-check.js';
import { runQuestionTurn } from './question-turn.js';
import { replyWithoutSql } from './turn-steps.js';
import type { UserView } from './user-view.js';
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
  /** Value hints sampled from the rows a row policy leaves a user, per catalog, policy and table. */
  private filteredHints = new WeakMap<Schema, Map<string, Promise<ValueHint[]>>>();

  constructor(private readonly options: AssistantOptions) {}

  /** The catalog, loaded once (the prompt's rendering of it is the context planner's job). */
  schema(): Promise<{ schema: Schema }> {
    // Tables outside the allowlist are never shown to the model, as the guard never runs them.
    this.schemaPromise ??= this.options
      .loadSchema()
      .then((schema) => ({ schema: onlyAllowedTables(schema, this.options.allowTables ?? []) }));
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
    const { schema: catalog } = await this.schema();
    const options = await this.userOptions(input);
    const policy = input.policy ?? unrestrictedPolicy(input.user);
    // Every stage below sees the user's part of the catalog only (prompt, linking, suggestions).
    const view: UserView = {
      catalog,
      policy,
      schema: visibleSchema(catalog, policy),
      hints: this.hintsFor(catalog, policy),
    };
    if (input.noModel) return yield* this.withoutModel(options, input, view, '--no-model', undefined);
    try {
      return yield* this.withModel(options, input, view);
    } catch (error) {
      const code = (error as { code?: unknown }).code;
      if (this.options.fallback === false || typeof code !== 'string' || !MODEL_DOWN.has(code)) throw error;
      return yield* this.withoutModel(options, input, view, `the model is not available (${code})`, error);
    }
  }

  /**
   * Value hints as `policy`'s user may see them: none for a relation outside the allow-list, none
   * of a denied column, and for a row-filtered table values sampled only from the rows that pass
   * the filter (cached per catalog, policy and table; a filter that cannot be written gives enum
   * labels only, fail closed).
   */
  private hintsFor(catalog: Schema, policy: EffectivePolicy): ValueHintSource {
    if (!restrictsData(policy)) return this.valueHints;
    const filtered = this.filteredSamplerFor(catalog, policy);
    return async (table) => {
      const visible = visibleTable(policy, table);
      if (!visible) return [];
      const columns = new Set(visible.columns.map((c) => c.name));
      const hints = rowFiltersOf(policy, visible).length > 0 ? filtered(visible) : this.valueHints(table);
      return (await hints).filter((h) => columns.has(h.column));
    };
  }

  /** A sampler of the rows `policy` leaves its user, cached per catalog, policy and table. */
  private filteredSamplerFor(catalog: Schema, policy: EffectivePolicy): ValueSampler {
    let cache = this.filteredHints.get(catalog);
    if (!cache) {
      cache = new Map();
      this.filteredHints.set(catalog, cache);
    }
    const store = cache;
    const key = policyKey(policy);
    const sample = createValueSampler(this.options.db, { rowFilter: (t) => rowFilterSql(policy, t) });
    return (table) => {
      const id = `${key}\u0000${table.schema}.${table.name}`;
      let hints = store.get(id);
      if (!hints) {
        hints = sample(table);
        store.set(id, hints);
      }
      return hints;
    };
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
    view: UserView,
    why: string,
    modelError: unknown,
  ): AsyncGenerator<Step, AskOutcome> {
    return answerFromSavedWork(options, view, input, why, modelError);
  }

  /** The pipeline with the model (memory turn, generation, answer). */
  private async *withModel(
    options: AssistantOptions,
    input: AskInput,
    view: UserView,
  ): AsyncGenerator<Step, AskOutcome> {
    const turn = await this.options.memory?.begin({ ...input, schema: view.schema });
    if (turn)
      yield { type: 'classified', kind: turn.classification.kind, source: turn.classification.source };
    if (turn?.reply) return yield* replyWithoutSql(input.message, turn);
    try {
      return yield* runQuestionTurn(
        { options, session: () => this.session(), valueHints: view.hints, view },
        input,
        view.schema,
        turn,
      );
    } catch (error) {
      await turn?.abandon(); // the instruction part of the message is still learned
      throw error;
    }
  }
}
