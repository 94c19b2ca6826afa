/**
 * Reconciliation, v1 (issue 3, point 5; DESIGN.md "Memory model"): how a new fact changes a
 * scope's memories.
 * 1. an active memory with the same normalised text → NOOP (exact duplicate);
 * 2. best similarity ≥ `high` → NOOP;
 * 3. candidates with `low` ≤ similarity < `high`, plus active memories of the same kind family
 *    that touch one of the fact's columns (a contradiction rarely shares words: "only delivered
 *    orders" / "show all statuses again") → the model decides ADD / UPDATE / SUPERSEDE / NOOP,
 *    seeing them as small integer ids; an unknown id or an unreadable reply → ADD (never drops the
 *    new fact);
 * 4. otherwise ADD.
 */
import { z } from 'zod';
import type { Memory, MemoryKind, MemoryOp, MemoryScope, MemoryStore, NewMemory } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import type { ExtractedFact } from './extract.js';
import { callJson } from './json-call.js';
import { buildReconcileMessages, MEMORY_PURPOSES } from './prompts.js';
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
