/**
 * Plans the context of the SQL prompt: which part of the schema the model sees for a question.
 * The default sends the whole schema, one line per table; `createSchemaLinkingPlanner`
 * sends the tables the question needs within the token budget.
 */
import type { Schema } from '../core/schema.js';
import { estimateTokens } from '../core/tokens.js';
import {
  createLinkingPlanner,
  type LinkingPlanner,
  type LinkingPlannerOptions,
  type PlanExtras,
} from '../linking/planner.js';
import { renderSchema } from '../sql/render.js';
import { buildSqlMessages } from './prompts.js';

/** Details a planner may add (all optional, so every planner stays a valid `ContextPlanner`). */
export interface PlannedContextDetails {
  /** `whole`: every table; `linked`: a subset chosen for the question. */
  mode?: 'whole' | 'linked';
  /** Estimated tokens of `schemaText`. */
  estimatedTokens?: number;
  /** Per table: why it was chosen, columns shown and hidden, columns with value hints. */
  choices?: {
    table: string;
    kind: string;
    reasons: string[];
    columns: string[];
    omittedColumns: number;
    valueHints: string[];
  }[];
  /** Degradations applied to fit the budget (`fewer sample values`, `pruned columns`, …). */
  degradations?: string[];
}

/** The schema part of a prompt. */
export interface PlannedContext extends PlannedContextDetails {
  /** Rendered schema text for the prompt. */
  schemaText: string;
  /** Tables included, as `schema.name`. */
  tables: string[];
}

/** Optional inputs of a planner call: recalled memories and what the rest of the prompt needs. */
export type ContextExtras = PlanExtras;

/**
 * Chooses and renders the schema for one question. The third argument is optional: callers that
 * know the user's recalled memories pass their tables/texts and the tokens they need.
 */
export type ContextPlanner = (
  question: string,
  schema: Schema,
  extras?: ContextExtras,
) => Promise<PlannedContext>;

/** The default planner: every table. */
export const wholeSchemaPlanner: ContextPlanner = async (_question, schema) => ({
  schemaText: renderSchema(schema),
  tables: schema.tables.map((t) => `${t.schema}.${t.name}`),
});

/**
 * Estimated tokens of the SQL prompt without its schema block for `question` (system rules,
 * question, date line, chat template overhead of 4 tokens per message).
 */
export function sqlPromptOverheadTokens(question: string): number {
  const messages = buildSqlMessages({ question, schemaText: '', today: '2000-01-01' });
  return messages.reduce((sum, m) => sum + estimateTokens(m.content) + 4, 0);
}

/**
 * The schema-linking planner as a {@link ContextPlanner}, with the SQL prompt's real
 * overhead counted. See `LinkingPlannerOptions` for the options.
 */
export function createSchemaLinkingPlanner(
  options: Omit<LinkingPlannerOptions, 'promptOverheadTokens'> & {
    promptOverheadTokens?: LinkingPlannerOptions['promptOverheadTokens'];
  },
): LinkingPlanner {
  return createLinkingPlanner({ promptOverheadTokens: sqlPromptOverheadTokens, ...options });
}
