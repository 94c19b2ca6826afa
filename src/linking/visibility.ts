/**
 * One user's view of the schema index. The index of a database is shared by every user of it (one
 * sync, one embedding per table), so it holds the whole catalog and values sampled from every row;
 * before the planner reads it for a user, this view drops the relations outside the user's
 * allow-list and the denied columns (with their value hints), replaces the sampled values of a
 * row-filtered table with values sampled from the rows the user may see, and in privacy mode keeps
 * no sampled value at all (enum labels, which are catalog, stay).
 */
import type { Schema } from '../core/schema.js';
import type { EffectivePolicy } from '../policy/types.js';
import { restrictsData } from '../policy/types.js';
import {
  policyCatalogOf,
  policyKey,
  rowFiltersOf,
  visibleSchema,
  visibleTable,
} from '../policy/visibility.js';
import type { PolicyCatalog } from '../sql/policy-rewrite.js';
import type { ValueHint } from './documents.js';
import { displayKey } from './documents.js';
import type { IndexedTable } from './schema-index.js';
import { enumHints, type ValueSampler } from './value-hints.js';

/** How the planner reads the shared index for one user (see {@link indexVisibility}). */
export interface IndexVisibility {
  /** The whole catalog: what the shared index is synced with (never the user's part of it). */
  catalog: Schema;
  /** The user's view of the synced index's tables (kept per tables array and policy). */
  tables(indexed: readonly IndexedTable[]): Promise<readonly IndexedTable[]>;
}

const views = new WeakMap<readonly IndexedTable[], Map<string, Promise<readonly IndexedTable[]>>>();

/**
 * The view of the index for `policy`. `filteredSampler` samples the rows of one table that pass the
 * user's row filter (a `createValueSampler` with `rowFilter`); without it a row-filtered table
 * keeps its enum labels only.
 */
export function indexVisibility(
  catalog: Schema,
  policy: EffectivePolicy,
  filteredSampler?: ValueSampler,
): IndexVisibility {
  return {
    catalog,
    tables(indexed) {
      if (!restrictsData(policy) && policy.rowsToModel) return Promise.resolve(indexed);
      let byPolicy = views.get(indexed);
      if (!byPolicy) {
        byPolicy = new Map();
        views.set(indexed, byPolicy);
      }
      const key = policyKey(policy);
      let view = byPolicy.get(key);
      if (!view) {
        view = viewOf(indexed, policy, filteredSampler, policyCatalogOf(catalog));
        byPolicy.set(key, view);
        // A failed view is not kept: the next question builds it again.
        view.catch(() => byPolicy.delete(key));
      }
      return view;
    },
  };
}

async function viewOf(
  indexed: readonly IndexedTable[],
  policy: EffectivePolicy,
  filteredSampler: ValueSampler | undefined,
  facts: PolicyCatalog | undefined,
): Promise<readonly IndexedTable[]> {
  const kept: IndexedTable[] = [];
  for (const entry of indexed) {
    // The index's copy of a relation carries no catalog facts: the catalog's are used.
    const table = visibleTable(policy, entry.table, facts ?? policyCatalogOf(entry.table));
    if (!table) continue;
    kept.push({ ...entry, table, hints: await visibleHints(policy, entry, table, filteredSampler) });
  }
  const keys = new Set(kept.map((t) => t.key));
  return kept.map((t) => ({ ...t, incoming: t.incoming.filter((k) => keys.has(k)) }));
}

async function visibleHints(
  policy: EffectivePolicy,
  entry: IndexedTable,
  table: IndexedTable['table'],
  filteredSampler: ValueSampler | undefined,
): Promise<ValueHint[]> {
  const columns = new Set(table.columns.map((c) => c.name));
  const own = (hints: readonly ValueHint[]) => hints.filter((h) => columns.has(h.column));
  // Privacy mode: no value read from the rows reaches the prompt; enum labels are the catalog's.
  if (!policy.rowsToModel) return own(entry.hints).filter((h) => h.source === 'enum');
  if (rowFiltersOf(policy, table).length === 0) return own(entry.hints);
  if (!filteredSampler) return enumHints(table);
  return own(await filteredSampler(table));
}

/** The display keys of the relations `policy` lets the user see in `catalog`. */
export function visibleKeys(catalog: Schema, policy: EffectivePolicy): Set<string> {
  return new Set(visibleSchema(catalog, policy).tables.map(displayKey));
}
