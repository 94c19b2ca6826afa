/**
 * Standing preferences on answers made without the model (a known risk of that path). A preference
 * ("always show customers from India") applies to every question that reads its table, or to every
 * question when it names no table (as in recall, `src/memory/recall.ts`). The model path applies it
 * through the prompt and checks its SQL predicate (`agent/memory-sql.ts`); a reused example or a
 * rule cannot rewrite its SQL with certainty, so the choice here is: such an answer is given only
 * when every applicable preference is already applied — its verified SQL predicate is in the
 * statement's filters (the same check as the model path, `predicateIn`). Otherwise the question is
 * refused (it needs the model) and the refusal names the preference. Nothing is silently dropped.
 */
import type { Memory, MemoryScope } from '../core/memory.js';
import type { Schema } from '../core/schema.js';
import { isExpired } from '../memory/expiry.js';
import { predicateIn, predicateParts, statementParts } from '../memory/sql-fragment.js';
import { exampleTables } from './example-similarity.js';

/** Where standing preferences come from (the memory store fits); only the scopes given are read. */
export interface PreferenceSource {
  list(
    scope: MemoryScope,
    options: { kinds: ['preference']; statuses: ['active']; tablesAny?: string[] },
  ): Promise<Memory[]>;
  /** Whether memory is on for the scope (off: its preferences do not apply); absent = on. */
  isEnabled?(scope: MemoryScope): Promise<boolean>;
}

/** Inputs of {@link unmetPreferences}. */
export interface UnmetPreferencesInput {
  /** The statement an example or rule would run. */
  sql: string;
  schema: Schema;
  user: string;
  team?: string;
  source?: PreferenceSource;
  /** Memory ids (or id prefixes) not to apply to this message (`--without`). */
  without?: readonly string[];
}

/**
 * The standing preferences (the user's, then the team's) that apply to `sql` and that `sql` does
 * not already apply. Empty when none applies or every one is met; the caller must not answer
 * otherwise. A statement whose tables cannot be determined counts every preference of the scopes
 * as applicable.
 */
export async function unmetPreferences(input: UnmetPreferencesInput): Promise<Memory[]> {
  const source = input.source;
  if (!source) return [];
  const tables = await exampleTables(input.sql, input.schema);
  const play = tables ? new Set(tables.map((t) => t.toLowerCase())) : null;
  const scopes: MemoryScope[] = [{ user: input.user }];
  if (input.team !== undefined) scopes.push({ team: input.team });
  const skipped = (id: string) => (input.without ?? []).some((w) => w.length > 0 && id.startsWith(w));
  const statement = await statementParts(input.sql);
  const unmet: Memory[] = [];
  for (const scope of scopes) {
    if (source.isEnabled && !(await source.isEnabled(scope))) continue;
    const preferences = await source.list(scope, {
      kinds: ['preference'],
      statuses: ['active'],
      ...(play ? { tablesAny: [...play] } : {}),
    });
    for (const memory of preferences) {
      if (
        memory.kind !== 'preference' ||
        memory.status !== 'active' ||
        isExpired(memory) ||
        skipped(memory.id)
      )
        continue;
      const applies =
        !play || memory.tables.length === 0 || memory.tables.some((t) => play.has(t.toLowerCase()));
      if (!applies) continue;
      const parts = memory.sql ? await predicateParts(memory.sql) : undefined;
      const met = Boolean(parts && statement && predicateIn(parts, statement));
      if (!met) unmet.push(memory);
    }
  }
  return unmet;
}
