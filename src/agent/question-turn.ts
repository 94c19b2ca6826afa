/**
 * One question turn with the model: few-shot examples and the linked schema, the recalled memories,
 * SQL generation with its checks and repairs, the answer from the rows, then the memory turn's end.
 */

import type { Schema } from '../core/schema.js';
import type { AskOutcome, Step } from '../core/steps.js';
import { estimateTokens } from '../core/tokens.js';
import { restrictsData } from '../policy/types.js';
import { rowFilterSql } from '../policy/visibility.js';
import { writeAnswer } from './answer.js';
import type { AskInput, AssistantOptions } from './assistant-options.js';
import { wholeSchemaPlanner } from './context.js';
import type { DatabaseSession } from './database-session.js';
import { createColumnSampler, createLiteralConfirmer, type ValueHintSource } from './empty-check.js';
import { coveredByLinkedTables } from './example-similarity.js';
import { DEFAULT_FEW_SHOT_MAX_TOKENS, fewShotCandidates, promptExample } from './few-shot.js';
import type { MemoryTurn } from './memory-hook.js';
import {
  appliedMemories,
  generateApplyingPreferences,
  renderConversationBlock,
  renderMemoriesBlock,
  requiredPredicates,
} from './memory-sql.js';
import { buildSqlMessages, renderExamplesBlock } from './prompts.js';
import type { SetAsideMemory, UndecidedMemory } from './set-aside.js';
import { finishTurn, recalledOnly } from './turn-steps.js';
import { planExtras, type UserView } from './user-view.js';

/** What one question turn runs on besides the assistant's options (the assistant's caches). */
export interface TurnContext {
  options: AssistantOptions;
  /** The database's today, time zone and search path (read once per session). */
  session: () => Promise<DatabaseSession>;
  /** Sampled value hints per table, cached (as the user may see them). */
  valueHints: ValueHintSource;
  /** The user's view of the catalog under their data policy. */
  view: UserView;
}

/**
 * The question pipeline proper for one message: plan the context, generate, check, execute,
 * explain, then finish the memory turn; the last step is `done`.
 * @throws SqlrecallError `guard_refused`, `sql_not_found`, `model_*`, `db_*` — after the steps that
 *   led to it were yielded
 */
export async function* runQuestionTurn(
  ctx: TurnContext,
  input: AskInput,
  schema: Schema,
  turn: MemoryTurn | undefined,
): AsyncGenerator<Step, AskOutcome> {
  const { options } = ctx;
  const { chat, db } = options;
  const { policy } = ctx.view;
  const privacy = !policy.rowsToModel;
  const question = turn?.question ?? input.message;
  const session = await ctx.session();
  const candidates = await fewShotCandidates(
    {
      examples: options.examples,
      embedder: options.exampleEmbedder,
      match: options.exampleMatch,
      max: options.fewShotMax,
    },
    input,
    question,
    turn,
  );
  const maxExampleTokens = options.fewShotMaxTokens ?? DEFAULT_FEW_SHOT_MAX_TOKENS;
  const reserved = estimateTokens(renderExamplesBlock(candidates.map(promptExample), maxExampleTokens));
  const context = await (options.planContext ?? wholeSchemaPlanner)(question, schema, {
    ...planExtras(ctx.view),
    ...(candidates.length > 0 ? { reservedTokens: reserved } : {}),
  });
  // Only examples whose SQL reads tables the linker chose for this question are shown.
  const relevant = await coveredByLinkedTables(candidates, context.tables, schema, db.dialect);
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
    dialect: db.dialect,
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
      allowTables: options.allowTables,
      maxRows: options.maxRows ?? 1000,
      statementTimeoutMs: options.statementTimeoutMs ?? 30_000,
      maxResultBytes: options.maxResultBytes,
      maxRepairs: options.maxRepairs ?? 2,
      maxTokens: options.sqlMaxTokens ?? 1024,
      signal: input.signal,
      valueHints: ctx.valueHints,
      ...(restrictsData(policy)
        ? {
            columnSampler: createColumnSampler(db, { rowFilter: (t) => rowFilterSql(policy, t) }),
            literalConfirmer: createLiteralConfirmer(db, { rowFilter: (t) => rowFilterSql(policy, t) }),
          }
        : {}),
      ...(privacy ? { privacy: true } : {}),
      ...(session.searchPath ? { searchPath: session.searchPath } : {}),
      ...(input.onStatement ? { onStatement: input.onStatement } : {}),
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
    maxTokens: options.answerMaxTokens ?? 400,
    ...(input.skipAnswer ? { skipAnswer: true } : {}),
    ...(privacy ? { privacy: true } : {}),
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
    ...(privacy ? { privacyMode: true } : {}),
  };
  if (turn) yield* finishTurn(turn, outcome, memory?.transient ?? []);
  yield { type: 'done', outcome };
  return outcome;
}
