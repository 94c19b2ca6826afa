/**
 * The schema-context use case: the tables and columns the model would see for a question, why each
 * was chosen, and the estimated prompt tokens against the budget. Written once for
 * `sqlrecall schema context "<question>" [--json]`, `POST /api/schema/context` and the MCP
 * `schema_context` tool, which all return one {@link SchemaContextDocument}. It plans with schema
 * linking wired as the question pipeline's (`Runtime.schemaLinking`: the same index store,
 * embedding model and context window), so the command that explains the prompt agrees with the
 * pipeline it explains.
 */
import { checkQuestion } from '../core/limits.js';
import type { Schema } from '../core/schema.js';
import type { PlannedTable } from '../linking/fit.js';
import type { LinkedContext, PlanBudget, PlanExtras } from '../linking/planner.js';
import { indexVisibility } from '../linking/visibility.js';
import { type EffectivePolicy, restrictsData } from '../policy/types.js';
import { visibleSchema } from '../policy/visibility.js';
import type { SchemaLinkingHooks } from '../runtime/schema-linking.js';

/** The schema context of one question, the same on every front end. */
export interface SchemaContextDocument {
  /** The question, trimmed. */
  question: string;
  /** `whole`: every table fits; `linked`: a chosen subset. */
  mode: LinkedContext['mode'];
  /** Estimated tokens of `schemaText`. */
  estimatedTokens: number;
  /** Estimated tokens of the whole catalog, for comparison. */
  wholeSchemaTokens: number;
  /** The context window and what the schema part may use, in tokens. */
  budget: PlanBudget;
  /** The tables chosen, most important first: why, the columns shown and hidden, value hints. */
  tables: PlannedTable[];
  /** Relations in the catalog (of which `tables` were chosen). */
  catalogTables: number;
  /** Degradation steps applied to fit the budget, in order (empty when none was needed). */
  degradations: string[];
  /**
   * What this call did to the schema index: tables (re)indexed, re-embedded, removed, left as they
   * were, and the time it took in milliseconds. Differs from call to call by nature (the first
   * call builds the index, later ones reuse it).
   */
  index: { indexed: number; reembedded: number; removed: number; unchanged: number; durationMs: number };
  /** Non-fatal problems met on the way (a table that could not be sampled, memory left closed). */
  warnings: string[];
  /** The schema text the model would see. */
  schemaText: string;
}

/** What the schema-context use case runs on: a runtime, or a server's view of one. */
export interface SchemaContextRuntime {
  /** The catalog the question pipeline plans over. */
  catalog(): Promise<Schema>;
  /** Schema linking wired as the question pipeline's, reporting to `hooks`. */
  schemaLinking(hooks: SchemaLinkingHooks): Promise<{
    plan(question: string, schema: Schema, extras?: PlanExtras): Promise<LinkedContext>;
  }>;
}

/** The {@link SchemaContextDocument} of a planned context. */
export function schemaContextDocument(
  question: string,
  schema: Schema,
  context: LinkedContext,
  warnings: readonly string[],
): SchemaContextDocument {
  return {
    question,
    mode: context.mode,
    estimatedTokens: context.estimatedTokens,
    wholeSchemaTokens: context.wholeSchemaTokens,
    budget: context.budget,
    tables: context.choices,
    catalogTables: schema.tables.length,
    degradations: context.degradations,
    index: {
      indexed: context.index.indexed.length,
      reembedded: context.index.reembedded.length,
      removed: context.index.removed.length,
      unchanged: context.index.unchanged,
      durationMs: Math.round(context.index.durationMs),
    },
    warnings: [...warnings],
    schemaText: context.schemaText,
  };
}

/**
 * Plans the schema context of `question` (building or refreshing the schema index first);
 * `hooks` hear of the index build's progress and of each warning as it happens (the document
 * lists the warnings too).
 * With `options.policy`, only the tables and columns that user may see are planned and shown.
 * @throws SqlrecallError `usage` (empty or too long question), `config` (no database), `db_*`, `memory_*`
 */
export async function schemaContext(
  runtime: SchemaContextRuntime,
  question: string,
  hooks: SchemaLinkingHooks = {},
  options: { policy?: EffectivePolicy } = {},
): Promise<SchemaContextDocument> {
  const asked = checkQuestion(question);
  const warnings: string[] = [];
  const [schema, linking] = await Promise.all([
    runtime.catalog(),
    runtime.schemaLinking({
      ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {}),
      onWarning: (message) => {
        warnings.push(message);
        hooks.onWarning?.(message);
      },
    }),
  ]);
  const policy = options.policy;
  if (!policy || (!restrictsData(policy) && policy.rowsToModel))
    return schemaContextDocument(asked, schema, await linking.plan(asked, schema), warnings);
  // The user's part of the catalog, planned over the shared index read through the user's view
  // (a row-filtered table shows no sampled values here: its enum labels only).
  const visible = visibleSchema(schema, policy);
  const planned = await linking.plan(asked, visible, { visibility: indexVisibility(schema, policy) });
  return schemaContextDocument(asked, visible, planned, warnings);
}
