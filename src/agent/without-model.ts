/**
 * The answer without the model: a saved example or a rule answers when the model is down or
 * `--no-model` was asked for. Memory is neither classified nor learned from (both need the model).
 */

import type { AskOutcome, Step } from '../core/steps.js';
import type { AskInput, AssistantOptions } from './assistant-options.js';
import { wholeSchemaPlanner } from './context.js';
import { answerWithoutModel, modelNeededError } from './fallback.js';
import { planExtras, type UserView } from './user-view.js';

/** Model errors after which the question is answered without the model, if an example or rule fits. */
export const MODEL_DOWN: ReadonlySet<string> = new Set([
  'model_unreachable',
  'model_missing',
  'model_timeout',
]);

/**
 * Answers from a saved example or a rule, yielding `fallback`, `sql`, `rows`, the answer and
 * `done`.
 * @param view the user's view of the catalog (their data policy)
 * @param why why the model is not used (shown with the answer)
 * @param modelError the model's own error, if it failed
 * @throws SqlrecallError the original error (or a "model needed" one) when neither fits
 */
export async function* answerFromSavedWork(
  options: AssistantOptions,
  view: UserView,
  input: AskInput,
  why: string,
  modelError: unknown,
): AsyncGenerator<Step, AskOutcome> {
  const schema = view.schema;
  // The schema linker's tables for the question (lexical when the embedding model is down too);
  // a planner failure leaves every table linked, the example's own tables are still checked.
  const linkedTables = await (options.planContext ?? wholeSchemaPlanner)(
    input.message,
    schema,
    planExtras(view),
  ).then(
    (context) => context.tables,
    () => undefined,
  );
  const found = await answerWithoutModel({
    question: input.message,
    ...(linkedTables ? { linkedTables } : {}),
    user: input.user,
    team: input.team,
    schema,
    db: options.db,
    examples: options.examples,
    allowTables: options.allowTables,
    maxRows: options.maxRows ?? 1000,
    timeoutMs: options.statementTimeoutMs ?? 30_000,
    signal: input.signal,
    reuse: options.reuse,
    ...(options.preferences ? { preferences: options.preferences } : {}),
    ...(input.without ? { without: input.without } : {}),
    valueHints: view.hints,
    ...(input.onStatement ? { onStatement: input.onStatement } : {}),
  });
  const startHint = options.modelStartHint;
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
    ...(view.policy.rowsToModel ? {} : { privacyMode: true }),
  };
  yield { type: 'done', outcome };
  return outcome;
}
