/**
 * Reconciliation, v1: how a new fact changes a
 * scope's memories.
 * 1. an active memory with the same normalised text → NOOP (exact duplicate);
 * 2. best similarity ≥ `high` → NOOP;
 * 3. candidates with `low` ≤ similarity < `high`, plus active memories of the same kind family
 *    that touch one of the fact's columns (a contradiction rarely shares words: "only delivered
 *    orders" / "show all statuses again") → the model decides ADD / UPDATE / SUPERSEDE / NOOP,
 *    seeing them as small integer ids; an unknown id or an unreadable reply → ADD (never drops the
 *    new fact);
 * 4. otherwise ADD.
 *
 * Before step 3, one rule decides without the model, so every path — `memory
 * add`, `POST /api/memories`, the bank, import and chat teaching — supersedes the same way with or
 * without a reachable model: a new **preference** with SQL whose compiled predicate filters exactly
 * the same column(s) as an active preference with SQL, with a different set of constants
 * (`customers.country = 'Chile'` then `customers.country = 'Peru'`), SUPERSEDES it — the latest
 * word wins, because both filters together (`country = 'Peru' AND country = 'Chile'`) can only
 * return nothing. The old memory stays in the history and can be restored.
 */
import { z } from 'zod';
import type { Memory, MemoryKind, MemoryOp, MemoryScope, MemoryStore, NewMemory } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import type { ExtractedFact } from './extract.js';
import { callJson } from './json-call.js';
import { buildReconcileMessages, MEMORY_PURPOSES } from './prompts.js';
import { predicateParts } from './sql-fragment.js';
import { normalizeText } from './text.js';
import type { SimilarityThresholds } from './thresholds.js';

/** Most stored memories shown to the model. */
export const MAX_RECONCILE_CANDIDATES = 5;

/** Inputs of {@link reconcileFact}. */
export interface ReconcileInput {
  scope: MemoryScope;
  fact: ExtractedFact;
  /** Embedding of `fact.text`. */
  embedding: number[];
  store: Pick<MemoryStore, 'search' | 'list'>;
  thresholds: SimilarityThresholds;
  /** Decides the grey zone; without it (e.g. `memory add`) the grey zone is ADD. */
  chat?: ChatModel;
  sourceMessageId?: string | null;
  /** When the new memory stops being recalled (ISO timestamp; see `expiry.ts`), default never. */
  expiresAt?: string | null;
  signal?: AbortSignal;
}

/** The decision: the op to write and why. */
export interface ReconcileDecision {
  op: MemoryOp;
  /** The stored memory the decision refers to (NOOP/UPDATE/SUPERSEDE). */
  target?: Memory;
  reason: string;
}

const decisionSchema = z.object({
  action: z.enum(['ADD', 'UPDATE', 'SUPERSEDE', 'NOOP']),
  id: z.number().int().nullable().optional(),
});

/** Kinds that can contradict or refine each other. */
function family(kind: MemoryKind): string {
  return kind === 'term' || kind === 'metric' ? 'definition' : kind;
}

/**
 * Whether stored preference `old` and the new `fact` are conflicting filters by the rule in this
 * module's header: both preferences with SQL, the same (non-empty) set of filtered columns, and
 * different non-empty sets of constants. Never throws (unparsable SQL is no conflict).
 */
export async function conflictsByRule(
  old: Pick<Memory, 'kind' | 'sql' | 'columns'>,
  fact: Pick<ExtractedFact, 'kind' | 'sql' | 'columns'>,
): Promise<boolean> {
  if (old.kind !== 'preference' || fact.kind !== 'preference' || !old.sql || !fact.sql) return false;
  if (!old.columns.some((c) => fact.columns.includes(c))) return false;
  const [a, b] = await Promise.all([predicateParts(old.sql), predicateParts(fact.sql)]);
  if (!a || !b) return false;
  const same = (x: string[], y: string[]) => {
    const sx = new Set(x);
    const sy = new Set(y);
    return sx.size === sy.size && [...sx].every((v) => sy.has(v));
  };
  if (a.columns.length === 0 || !same(a.columns, b.columns)) return false;
  if (a.literals.length === 0 || b.literals.length === 0) return false;
  return !same(a.literals, b.literals);
}

/** Decides what a new fact does to the scope's memories (reads only; the caller writes the op). */
export async function reconcileFact(input: ReconcileInput): Promise<ReconcileDecision> {
  const { fact, embedding, scope, store, thresholds } = input;
  const memory: NewMemory = {
    kind: fact.kind,
    text: fact.text,
    sql: fact.sql,
    tables: fact.tables,
    columns: fact.columns,
    sourceMessageId: input.sourceMessageId ?? null,
    expiresAt: input.expiresAt ?? null,
  };
  const add = (reason: string): ReconcileDecision => ({
    op: { op: 'add', memory, embedding, reason },
    reason,
  });
  const similar = await store.search(scope, { embedding, topK: MAX_RECONCILE_CANDIDATES });
  const active = await store.list(scope, { statuses: ['active'] });

  const key = normalizeText(fact.text);
  const duplicate = active.find((m) => normalizeText(m.text) === key && m.kind === fact.kind);
  if (duplicate) {
    const reason = 'exact duplicate';
    return { op: { op: 'noop', id: duplicate.id, text: fact.text, reason }, target: duplicate, reason };
  }
  const best = similar[0];
  if (best && best.similarity >= thresholds.high) {
    const reason = `similarity ${best.similarity.toFixed(3)} ≥ ${thresholds.high}`;
    return { op: { op: 'noop', id: best.id, text: fact.text, reason }, target: best, reason };
  }

  const candidates: Memory[] = similar.filter((m) => m.similarity >= thresholds.low);
  if (fact.columns.length > 0) {
    for (const m of active) {
      if (family(m.kind) !== family(fact.kind) || candidates.some((c) => c.id === m.id)) continue;
      if (m.columns.some((c) => fact.columns.includes(c))) candidates.push(m);
    }
  }
  for (const m of candidates) {
    if (await conflictsByRule(m, fact)) {
      const reason = 'same column, different value: the newer preference replaces the older (rule)';
      return { op: { op: 'supersede', target: m.id, memory, embedding, reason }, target: m, reason };
    }
  }
  const shown = candidates.slice(0, MAX_RECONCILE_CANDIDATES);
  if (shown.length === 0) {
    return add(best ? `similarity ${best.similarity.toFixed(3)} < ${thresholds.low}` : 'no similar memory');
  }
  if (!input.chat) return add('similar memories exist; added without a model decision');

  const reply = await callJson(
    input.chat,
    buildReconcileMessages(
      fact,
      shown.map((m, i) => ({ id: i + 1, kind: m.kind, text: m.text, sql: m.sql })),
    ),
    decisionSchema,
    { purpose: MEMORY_PURPOSES.reconcile, maxTokens: 128, signal: input.signal },
  );
  if (!reply.ok) return add(`the model's decision was unreadable (${reply.error}); added`);
  const { action } = reply.value;
  if (action === 'ADD') return add('model decided ADD');
  const target = reply.value.id == null ? undefined : shown[reply.value.id - 1];
  if (!target) return add(`model decided ${action} with an unknown id (${reply.value.id ?? 'none'}); added`);
  const reason = `model decided ${action}`;
  if (action === 'NOOP')
    return { op: { op: 'noop', id: target.id, text: fact.text, reason }, target, reason };
  if (action === 'UPDATE')
    return { op: { op: 'update', id: target.id, memory, embedding, reason }, target, reason };
  return { op: { op: 'supersede', target: target.id, memory, embedding, reason }, target, reason };
}
