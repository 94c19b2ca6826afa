/**
 * Recall: the memories that apply to one question.
 * - Preferences are standing filters: every active preference that touches a table in play (or
 *   names no table) applies, whatever its similarity to the question.
 * - Terms, metrics, entities, examples and context are recalled by similarity (top-k above a
 *   minimum) plus exact term match (every content word of the defined term occurs in the question).
 * - Team memories (scope `{team}`) are recalled next to the user's own; on conflict the user's own
 *   wins. Conflict: same kind family and (a shared column, or the same defined term).
 * - Pinned memories are always recalled, whatever the question, unless expired.
 * Only the caller's scopes are ever read; `without` skips memories for this question only.
 */

import { isSqlrecallError } from '../core/errors.js';
import {
  DEFAULT_MEMORY_TOP_K,
  type Memory,
  type MemoryKind,
  type MemoryScope,
  type MemoryStore,
  type RecallReads,
  type RecallReadsQuery,
} from '../core/memory.js';
import type { EmbeddingModel } from '../core/ports.js';
import { contentWords, definedTerm, normalizeText, termOccursIn } from './text.js';

/** Default least similarity of similarity recall (1 − cosine distance). */
export const DEFAULT_RECALL_MIN_SIMILARITY = 0.3;
/** Most standing preferences applied to one question. */
export const MAX_STANDING_PREFERENCES = 20;

const RECALLED_KINDS: MemoryKind[] = ['term', 'metric', 'entity', 'example', 'context'];

/** One recalled memory and why it applies. */
export interface RecalledMemory {
  memory: Memory;
  /** `user` or `team`. */
  owner: 'user' | 'team';
  /**
   * `standing` (preference on a table in play), `term` (exact term match), `similar`, `pinned`
   * (pinned by the user and not recalled for another reason: always included), or `words` (found
   * by the question's words because its embedding was degenerate; see {@link isDegenerateEmbedding}).
   */
  why: 'standing' | 'term' | 'similar' | 'pinned' | 'words';
  similarity?: number;
}

/** Inputs of {@link recallMemories}. */
export interface RecallInput {
  /** `recallReads` (the SQL store) answers a scope's four reads at once; without it, `list` and `search`. */
  store: Pick<MemoryStore, 'search' | 'list'> & {
    recallReads?(scope: MemoryScope, query: RecallReadsQuery): Promise<RecallReads>;
  };
  user: string;
  /** The user's team, whose shared memories also apply. */
  team?: string;
  question: string;
  /** Embedding of `question`. */
  embedding: number[];
  /** Tables the query may use, as `schema.table`. */
  tablesInPlay: string[];
  topK?: number;
  minSimilarity?: number;
  /** Memory ids to skip for this question. */
  without?: string[];
  /** Told once when the memories were found by words instead of similarity (degenerate embedding). */
  onNote?: (note: string) => void;
}

/**
 * True when similarity cannot rank against `embedding`: empty, every component zero, or a
 * component that is not a finite number (cosine distance to it is undefined, so a similarity
 * search would return nothing at all).
 */
export function isDegenerateEmbedding(embedding: readonly number[]): boolean {
  return (
    embedding.length === 0 || !embedding.some((v) => v !== 0) || embedding.some((v) => !Number.isFinite(v))
  );
}

/**
 * The embedding of a question or search text. A degenerate vector (the model answered all zeros,
 * which the embedding clients refuse with `details.degenerate`) comes back as `[]` so the caller
 * falls back to word search ({@link isDegenerateEmbedding}); every other failure is thrown.
 * @throws SqlrecallError `model_*` when the embedding model fails otherwise
 */
export async function embedQuery(
  embedder: Pick<EmbeddingModel, 'embed'>,
  text: string,
  signal?: AbortSignal,
): Promise<number[]> {
  try {
    const [embedding] = await embedder.embed([text], { signal });
    return embedding ?? [];
  } catch (error) {
    if (isSqlrecallError(error, 'model_output') && error.details.degenerate === true) return [];
    throw error;
  }
}

/** The note said when memories were found by words because the embedding was degenerate. */
export const WORD_SEARCH_NOTE =
  'The embedding model returned an empty (all-zero) vector for this text, so memories were found by their words instead of by meaning.';

/** Most memories read by one word search before ranking. */
const WORD_SEARCH_READ_LIMIT = 200;

/**
 * Word search of one scope, the fallback of similarity search when the embedding is degenerate:
 * active, unexpired memories (of `kinds`, default all) whose text holds at least one content word of
 * `text`, ranked by how many of those words they hold (ties: oldest first), at most `topK`.
 */
export async function searchByWords(
  store: Pick<MemoryStore, 'list'>,
  scope: MemoryScope,
  text: string,
  options: { topK?: number; kinds?: MemoryKind[] } = {},
): Promise<Memory[]> {
  const words = [...new Set(contentWords(text))].filter((w) => w.length >= 2);
  if (words.length === 0) return [];
  const found = await store.list(scope, {
    statuses: ['active'],
    unexpired: true,
    textWordsAny: words,
    limit: WORD_SEARCH_READ_LIMIT,
    ...(options.kinds ? { kinds: options.kinds } : {}),
  });
  const score = (m: Memory) => {
    const have = new Set(contentWords(m.text));
    return words.filter((w) => have.has(w)).length;
  };
  return found
    .map((m, order) => ({ m, order, score: score(m) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.order - b.order)
    .slice(0, options.topK ?? DEFAULT_MEMORY_TOP_K)
    .map((x) => x.m);
}

/** The term a memory defines, for term matching and conflicts (null when it defines none). */
export function memoryTerm(memory: Pick<Memory, 'kind' | 'text'>): string | null {
  const term = definedTerm(memory.text);
  if (term) return term;
  if (memory.kind === 'entity') return /^\s*(.+?)\s+(?:is|are|was)\b/i.exec(memory.text)?.[1] ?? null;
  return null;
}

/**
 * The four reads of one scope: one `recallReads` call when the store has it, else the calls it
 * stands for; with a degenerate embedding the similarity read is left out (word search stands in).
 */
async function readScope(input: RecallInput, scope: MemoryScope, play: Set<string>): Promise<RecallReads> {
  const words = [...new Set(contentWords(input.question))];
  const query: RecallReadsQuery = {
    preferences: { tablesAny: [...play], limit: MAX_STANDING_PREFERENCES },
    ...(words.length > 0 ? { definitions: { kinds: RECALLED_KINDS, termWordsWithin: words } } : {}),
    search: {
      embedding: input.embedding,
      topK: input.topK ?? DEFAULT_MEMORY_TOP_K,
      minSimilarity: input.minSimilarity ?? DEFAULT_RECALL_MIN_SIMILARITY,
      kinds: RECALLED_KINDS,
    },
  };
  // A degenerate embedding ranks nothing (and may be empty): the similarity read is left out.
  const degenerate = isDegenerateEmbedding(input.embedding);
  if (input.store.recallReads && !degenerate) return input.store.recallReads(scope, query);
  const preferences = await input.store.list(scope, {
    kinds: ['preference'],
    statuses: ['active'],
    tablesAny: query.preferences.tablesAny,
    unexpired: true,
    limit: query.preferences.limit,
  });
  const definitions = query.definitions
    ? await input.store.list(scope, {
        kinds: query.definitions.kinds,
        statuses: ['active'],
        termWordsWithin: query.definitions.termWordsWithin,
        unexpired: true,
      })
    : [];
  const similar = degenerate ? [] : await input.store.search(scope, query.search);
  const pinned = await input.store.list(scope, { statuses: ['active'], pinned: true, unexpired: true });
  return { preferences, definitions, similar, pinned };
}

async function recallScope(
  input: RecallInput,
  scope: MemoryScope,
  owner: 'user' | 'team',
): Promise<RecalledMemory[]> {
  const play = new Set(input.tablesInPlay.map((t) => t.toLowerCase()));
  const out: RecalledMemory[] = [];
  // Every read is answered in SQL from indexes: the standing preferences on a table in
  // play (first MAX_STANDING_PREFERENCES unexpired ones by age), the definitions whose term's words
  // all occur in the question, the similar ones and the pinned ones — never a read of every memory
  // of the scope; on the SQL store all four in one statement (`store/recall-reads.ts`).
  const reads = await readScope(input, scope, play);
  for (const memory of reads.preferences) {
    if (memory.tables.length === 0 || memory.tables.some((t) => play.has(t.toLowerCase()))) {
      out.push({ memory, owner, why: 'standing' });
    }
  }
  out.splice(MAX_STANDING_PREFERENCES);
  for (const memory of reads.definitions) {
    const term = memoryTerm(memory);
    if (term && termOccursIn(term, input.question)) out.push({ memory, owner, why: 'term' });
  }
  for (const memory of reads.similar) {
    const found = out.find((r) => r.memory.id === memory.id);
    if (found) found.similarity = memory.similarity;
    else out.push({ memory, owner, why: 'similar', similarity: memory.similarity });
  }
  // A degenerate embedding ranks nothing by similarity: the question's words stand in for it.
  if (isDegenerateEmbedding(input.embedding)) {
    const byWords = await searchByWords(input.store, scope, input.question, {
      topK: input.topK ?? DEFAULT_MEMORY_TOP_K,
      kinds: RECALLED_KINDS,
    });
    for (const memory of byWords)
      if (!out.some((r) => r.memory.id === memory.id)) out.push({ memory, owner, why: 'words' });
  }
  // Pinned memories: always recalled. Pinned and unexpired are conditions of the SQL (a partial
  // index of the pinned rows answers it), never a read of the whole scope filtered here.
  const pinned = reads.pinned.filter((m) => !out.some((r) => r.memory.id === m.id));
  for (const memory of pinned) out.push({ memory, owner, why: 'pinned' });
  return out;
}

/** True when a team memory conflicts with a user memory (the user's wins). */
export function conflicts(a: Memory, b: Memory): boolean {
  const family = (k: MemoryKind) => (k === 'term' || k === 'metric' ? 'definition' : k);
  if (family(a.kind) !== family(b.kind)) return false;
  if (a.columns.some((c) => b.columns.includes(c))) return true;
  const ta = memoryTerm(a);
  const tb = memoryTerm(b);
  if (ta && tb) return contentWords(ta).join(' ') === contentWords(tb).join(' ');
  return normalizeText(a.text) === normalizeText(b.text);
}

/** The memories that apply to one question: standing preferences first, then terms and similar ones. */
export async function recallMemories(input: RecallInput): Promise<RecalledMemory[]> {
  if (isDegenerateEmbedding(input.embedding)) input.onNote?.(WORD_SEARCH_NOTE);
  const skip = new Set(input.without ?? []);
  const own = (await recallScope(input, { user: input.user }, 'user')).filter((r) => !skip.has(r.memory.id));
  let team: RecalledMemory[] = [];
  if (input.team !== undefined) {
    team = (await recallScope(input, { team: input.team }, 'team')).filter(
      (r) => !skip.has(r.memory.id) && !own.some((o) => conflicts(o.memory, r.memory)),
    );
  }
  const order = { standing: 0, pinned: 1, term: 1, similar: 2, words: 2 } as const;
  return [...own, ...team].sort(
    (a, b) => order[a.why] - order[b.why] || (b.similarity ?? 1) - (a.similarity ?? 1),
  );
}
