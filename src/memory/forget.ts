/**
 * Plain-language forgetting ("forget the India filter", `/forget 3f2a`): which one active memory
 * a target designates. Pure: the caller deletes (a DELETE is restorable).
 */
import type { Memory } from '../core/memory.js';
import { contentWords } from './text.js';

/** What a forget target designates. */
export interface ForgetResult {
  /** The one memory designated (deleted by the caller), or null. */
  deleted: Memory | null;
  /** When the target was ambiguous or not found: the closest memories, for the user to pick by id. */
  candidates: Memory[];
}

/** Words that name memories in general, not one of them. */
const GENERIC = new Set(['filter', 'memory', 'preference', 'rule', 'term', 'definition', 'one', 'thing']);

/**
 * The memory among `active` that `target` designates: an id (or an id prefix of at least 4
 * characters), else the one memory sharing the most content words with it (its text and SQL).
 * Ties and misses designate nothing and return the closest memories (or the first ten).
 */
export function findForgetTarget(active: Memory[], target: string): ForgetResult {
  const id = target.trim().toLowerCase();
  if (/^[0-9a-f-]{4,36}$/.test(id)) {
    const byId = active.filter((m) => m.id.startsWith(id));
    if (byId.length === 1) return { deleted: byId[0]!, candidates: [] };
    if (byId.length > 1) return { deleted: null, candidates: byId };
  }
  const wanted = contentWords(target).filter((w) => !GENERIC.has(w));
  const scored = active
    .map((m) => {
      const have = new Set(contentWords(`${m.text} ${m.sql ?? ''}`));
      return { m, score: wanted.filter((w) => have.has(w)).length };
    })
    .filter((s) => s.score > 0)
    .sort((a, b) => b.score - a.score);
  const best = scored[0]?.score ?? 0;
  const chosen = scored.filter((s) => s.score === best).map((s) => s.m);
  if (chosen.length === 1) return { deleted: chosen[0]!, candidates: [] };
  return { deleted: null, candidates: chosen.length > 0 ? chosen : active.slice(0, 10) };
}
