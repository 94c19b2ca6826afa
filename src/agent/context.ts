/**
 * Plans the context of the SQL prompt: which part of the schema the model sees for a question.
 * Today the whole schema, rendered one line per table.
 */
import type { Schema } from '../core/schema.js';
import { renderSchema } from '../sql/render.js';

/** The schema part of a prompt. */
export interface PlannedContext {
  /** Rendered schema text for the prompt. */
  schemaText: string;
  /** Tables included, as `schema.name`. */
  tables: string[];
}

/** Chooses and renders the schema for one question. */
export type ContextPlanner = (question: string, schema: Schema) => Promise<PlannedContext>;

/** The default planner: every table. */
export const wholeSchemaPlanner: ContextPlanner = async (_question, schema) => ({
  schemaText: renderSchema(schema),
  tables: schema.tables.map((t) => `${t.schema}.${t.name}`),
});
