/**
 * One user's view of the catalog for one question: what the prompt, schema linking, value hints
 * and name suggestions may show under the user's data policy. Enforcing the policy on the
 * statements that run is the policed database's job; this only keeps the pipeline from showing
 * the model what the user may not see.
 */
import type { Schema } from '../core/schema.js';
import { indexVisibility } from '../linking/visibility.js';
import { type EffectivePolicy, restrictsData } from '../policy/types.js';
import type { ContextExtras } from './context.js';
import type { ValueHintSource } from './empty-check.js';

/** One user's view of the catalog for one question. */
export interface UserView {
  /** The whole catalog (what the shared schema index is synced with). */
  catalog: Schema;
  policy: EffectivePolicy;
  /** The part of the catalog the user may see. */
  schema: Schema;
  /** Value hints as the user may see them. */
  hints: ValueHintSource;
}

/**
 * The planner's extras for `view`: when a policy restricts what the user sees, or privacy mode
 * is on, the shared index is read through the user's view of it.
 */
export function planExtras(view: UserView): ContextExtras {
  if (!restrictsData(view.policy) && view.policy.rowsToModel) return {};
  return { visibility: indexVisibility(view.catalog, view.policy, (table) => view.hints(table)) };
}
