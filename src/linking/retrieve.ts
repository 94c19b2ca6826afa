/**
 * Table retrieval for a question: lexical evidence, dense similarity and recalled memories fused
 * into one ranking; the best candidates become seeds, join paths between them are added (bounded
 * hops), and the reason for every choice is kept for `schema context --json`.
 */
import type { JoinGraph } from './closure.js';
import type { Evidence, LexicalIndex } from './lexical.js';
import type { IndexedTable } from './schema-index.js';
import type { Neighbour } from './store.js';

/** Why a table is in the context. */
export type ChoiceKind = 'lexical' | 'dense' | 'memory' | 'join_path' | 'neighbour' | 'fill' | 'whole_schema';

/** A ranked table with its evidence. */
export interface Candidate {
  key: string;
  /** Position in the index's table list. */
  index: number;
  /** Fused score (higher is better; lexical part normalised to [0, 1]). */
  score: number;
  lexical: number;
  /** Cosine similarity to the question, when dense retrieval ran and ranked it. */
  similarity: number | null;
  memory: boolean;
  /** Columns with lexical evidence and their points. */
  matchedColumns: Map<string, number>;
  evidence: Evidence[];
}

/** Options of {@link rankTables}. */
export interface RankOptions {
  /** Weight of the dense part (its own [0, 1] normalisation); default 0.35. */
  denseWeight?: number;
  /** Score added for a table named by a recalled memory; default 1. */
  memoryBoost?: number;
}

/**
 * Ranks tables: `√(lexical / best lexical)` + `denseWeight × (similarity normalised over the
 * neighbours)` + `memoryBoost` for memory tables. Tables with no evidence at all are not returned.
 */
export function rankTables(
  tables: readonly IndexedTable[],
  lexical: ReturnType<LexicalIndex['search']>,
  dense: readonly Neighbour[],
  memoryTables: ReadonlySet<string>,
  options: RankOptions = {},
): Candidate[] {
  const denseWeight = options.denseWeight ?? 0.35;
  const memoryBoost = options.memoryBoost ?? 1;
  const byKey = new Map(tables.map((t, i) => [t.key, i]));
  const candidates = new Map<number, Candidate>();
  const get = (index: number): Candidate => {
    let c = candidates.get(index);
    if (!c) {
      c = {
        key: tables[index]!.key,
        index,
        score: 0,
        lexical: 0,
        similarity: null,
        memory: false,
        matchedColumns: new Map(),
        evidence: [],
      };
      candidates.set(index, c);
    }
    return c;
  };
  const bestLexical = lexical[0]?.score ?? 0;
  for (const hit of lexical) {
    const c = get(hit.table);
    c.lexical = hit.score;
    // Square root: one table with overwhelming evidence (a value said verbatim) must not push
    // the next ones, which the question may need as much, below the seed threshold.
    c.score += bestLexical > 0 ? Math.sqrt(hit.score / bestLexical) : 0;
    c.matchedColumns = hit.columns;
    c.evidence = hit.evidence;
  }
  if (dense.length > 0) {
    const top = dense[0]!.similarity;
    const floor = dense.at(-1)!.similarity;
    const span = top - floor || 1;
    for (const neighbour of dense) {
      const index = byKey.get(neighbour.tableKey);
      if (index === undefined) continue;
      const c = get(index);
      c.similarity = neighbour.similarity;
      c.score += denseWeight * ((neighbour.similarity - floor) / span);
    }
  }
  for (const key of memoryTables) {
    const index = byKey.get(key);
    if (index === undefined) continue;
    const c = get(index);
    c.memory = true;
    c.score += memoryBoost;
  }
  return [...candidates.values()].sort((a, b) => b.score - a.score || a.index - b.index);
}

/**
 * Mutual support: a candidate that joins one of the `topN` best candidates gains
 * `factor × that candidate's score × edge strength` (the largest such bonus, once). "Average order
 * value per sales territory" then prefers the `territory` table that joins `orders` over unrelated
 * tables that also have a `territory` column. Returns a new ranking.
 */
export function boostNeighbours(
  candidates: readonly Candidate[],
  graph: JoinGraph,
  options: { topN?: number; factor?: number } = {},
): Candidate[] {
  const topN = options.topN ?? 3;
  const factor = options.factor ?? 0.4;
  const byKey = new Map(candidates.map((c) => [c.key, c]));
  const bonus = new Map<string, number>();
  // Tables a few sure joins away from the best seed (declared or key-name joins): a measure or
  // filter that lives down a chain ("revenue per practitioner": payments → invoices →
  // appointments → practitioners) fits the question better than the same column in an unrelated
  // table. Decays by `CHAIN_DECAY` per extra hop.
  const top = candidates[0];
  if (top) {
    for (const [key, hops] of graph.within(top.key, DEFAULT_MAX_HOPS, SURE_JOIN)) {
      const c = byKey.get(key);
      if (!c || hops < 2) continue;
      bonus.set(key, Math.max(bonus.get(key) ?? 0, factor * top.score * CHAIN_DECAY ** (hops - 1)));
    }
  }
  for (const seed of candidates.slice(0, topN)) {
    for (const edge of graph.neighbours(seed.key)) {
      const c = byKey.get(edge.to);
      if (!c || c === seed) continue;
      const strength = Math.max(edge.strength, 0.5);
      bonus.set(c.key, Math.max(bonus.get(c.key) ?? 0, factor * seed.score * strength));
    }
  }
  return candidates
    .map((c) => ({ ...c, score: c.score + (bonus.get(c.key) ?? 0) }))
    .sort((a, b) => b.score - a.score || a.index - b.index);
}

/**
 * Most edges on a join path: four reaches a filter three lookup tables away (person → address →
 * city → country) while keeping the search small.
 */
export const DEFAULT_MAX_HOPS = 4;

/** Joins at least this strong count as sure for chain bonuses (declared 1, key names 0.9). */
const SURE_JOIN = 0.85;
/** Bonus factor per hop beyond the first along a chain of sure joins. */
const CHAIN_DECAY = 0.6;

/** Seeds scoring at least this share of the best become anchors for join paths. */
const ANCHOR_RATIO = 0.6;

/** A chosen table and why. */
export interface Choice {
  key: string;
  index: number;
  kind: ChoiceKind;
  reasons: string[];
  /** Rank among candidates (0 = best), or `null` for tables added only as join paths. */
  rank: number | null;
  matchedColumns: Map<string, number>;
}

/** Options of {@link chooseTables}. */
export interface ChooseOptions {
  /** Most seed tables taken from the ranking; default 6. */
  maxSeeds?: number;
  /** A candidate is a seed when its score is at least this share of the best; default 0.3. */
  seedRatio?: number;
  /** Most edges on a join path between seeds; default 4 (three intermediate tables). */
  maxHops?: number;
}

/**
 * Seeds (memory tables, then the best-ranked candidates) and the join paths that connect each seed
 * to the seeds before it. Returns the choices in priority order (most important first).
 */
export function chooseTables(
  candidates: readonly Candidate[],
  graph: JoinGraph,
  options: ChooseOptions = {},
): Choice[] {
  const maxSeeds = options.maxSeeds ?? 6;
  const ratio = options.seedRatio ?? 0.3;
  const maxHops = options.maxHops ?? DEFAULT_MAX_HOPS;
  const best = candidates[0]?.score ?? 0;
  const seeds = candidates
    .map((c, rank) => ({ c, rank }))
    .filter(({ c }, rank) => c.memory || (rank < maxSeeds && c.score >= best * ratio))
    .slice(0, maxSeeds + candidates.filter((c) => c.memory).length);
  const scoreOf = new Map(candidates.map((c) => [c.key, c.score]));
  const choices: Choice[] = [];
  const chosen = new Set<string>();
  // Tables later seeds are connected to: strong seeds and join-path tables. A weak seed that
  // happens to share a column with the next one must not make the real join path look unneeded.
  const anchors = new Set<string>();
  for (const { c, rank } of seeds) {
    if (anchors.size > 0 && !anchors.has(c.key)) {
      const route = graph.route(
        anchors,
        c.key,
        maxHops,
        (key) => scoreOf.get(key) ?? 0,
        (key) => (scoreOf.get(key) ?? 0) > 0 || graph.junction(key) >= 0.5,
      );
      const role = route && route.length > 2 ? `join path: ${route.join(' → ')}` : undefined;
      for (const middle of route?.slice(1, -1) ?? []) {
        anchors.add(middle);
        if (chosen.has(middle)) {
          const existing = choices.find((x) => x.key === middle);
          if (existing && role && !existing.reasons.includes(role)) existing.reasons.push(role);
          continue;
        }
        chosen.add(middle);
        const near = [...chosen].filter((k) => k !== middle && graph.edges(middle).some((e) => e.to === k));
        choices.push({
          key: middle,
          index: -1,
          kind: 'join_path',
          reasons: [role!, `joins ${[...new Set([...near, c.key])].join(' and ')}`],
          rank: null,
          matchedColumns: candidates.find((x) => x.key === middle)?.matchedColumns ?? new Map(),
        });
      }
    }
    if (c.score >= ANCHOR_RATIO * best || c.memory) anchors.add(c.key);
    if (chosen.has(c.key)) continue;
    chosen.add(c.key);
    choices.push({
      key: c.key,
      index: c.index,
      kind: c.memory ? 'memory' : c.lexical > 0 ? 'lexical' : 'dense',
      reasons: reasonsFor(c),
      rank,
      matchedColumns: c.matchedColumns,
    });
  }
  return choices;
}

/** Human-readable reasons from a candidate's evidence (at most four). */
export function reasonsFor(c: Candidate): string[] {
  const reasons: string[] = [];
  if (c.memory) reasons.push('named by a recalled memory');
  const seen = new Set<string>();
  for (const e of [...c.evidence].sort((a, b) => b.points - a.points)) {
    let text: string;
    if (e.field === 'table') text = `table name matches "${e.term}"`;
    else if (e.field === 'column') text = `column ${e.column} matches "${e.term}"`;
    else if (e.field === 'value') text = `column ${e.column} has value '${e.value}'`;
    else if (e.field === 'table_comment') text = `table comment mentions "${e.term}"`;
    else text = `comment of ${e.column} mentions "${e.term}"`;
    if (seen.has(text)) continue;
    seen.add(text);
    reasons.push(text);
    if (reasons.length >= 4) break;
  }
  if (c.similarity !== null) reasons.push(`similar to the question (cosine ${c.similarity.toFixed(2)})`);
  return reasons;
}
