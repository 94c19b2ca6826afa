/**
 * Similarity search of one scope: exact for small scopes, HNSW for large
 * ones, the scope condition applied in SQL on both paths.
 *
 * - Exact: the scope's active rows are materialised first (a `MATERIALIZED` CTE, so the planner
 *   cannot answer from the global HNSW index with a post-filter that returns fewer than k), then
 *   ranked by cosine distance. Cost grows with the scope (≈ 50–100 ms at 10,000 384-dimension
 *   memories on PGlite, `bench/pipeline-overhead.ts`).
 * - Approximate: when the scope has more than {@link SearchPolicy.exactUpTo} active memories AND
 *   they are at least {@link SearchPolicy.minShare} of the table, the global HNSW cosine index is
 *   walked with `hnsw.iterative_scan = relaxed_order` (pgvector ≥ 0.8: the walk goes on until
 *   enough rows pass the scope/status/kind/expiry filter) and `hnsw.ef_search` candidates; the
 *   candidates are re-ranked by their exact distance. The share condition keeps the walk short: a
 *   scope that is a small part of a shared table (many users on one server) would need most of the
 *   graph walked and is searched exactly instead. If the walk still returns fewer rows than the
 *   scope could give, the exact path answers.
 * Recall@5 of the approximate path against exact, on the `bench/pipeline-overhead.ts` data (10,000
 * memories of one user, 384-dimension lexical-hash embeddings): measured by `bench/recall-search.ts`.
 */
import type { ScoredMemory } from '../../core/memory.js';
import { HNSW_MAX_DIMENSIONS } from './migrations.js';
import { memoryColumns, scoredFromRow } from './rows.js';
import { type ScopeRef, scopeCondition } from './scope.js';
import type { SqlClient } from './sql-client.js';

/** When a search may take the approximate (HNSW) path. */
export interface SearchPolicy {
  /**
   * Largest scope (active memories) searched exactly whatever the table; default
   * {@link DEFAULT_EXACT_UP_TO}. 0 makes every eligible scope approximate (tests); `Infinity`
   * turns the approximate path off.
   */
  exactUpTo: number;
  /** Least share of the table's rows (planner estimate) the scope must hold to go approximate; default 0.05. */
  minShare: number;
  /** `hnsw.ef_search` of the walk (candidates kept); default 100. */
  efSearch: number;
}

/**
 * Default {@link SearchPolicy.exactUpTo}: 2,000 active memories. The exact scan costs ≈ 5 µs per
 * memory on PGlite (384 dimensions), so ≈ 10 ms at this size; above it the HNSW walk (≈ 5 ms at
 * 10,000 memories) is cheaper. Measured with `bench/pipeline-overhead.ts` (figures in
 * BENCHMARKS.md).
 */
export const DEFAULT_EXACT_UP_TO = 2000;

/** The default {@link SearchPolicy}. */
export const DEFAULT_SEARCH_POLICY: SearchPolicy = {
  exactUpTo: DEFAULT_EXACT_UP_TO,
  minShare: 0.05,
  efSearch: 100,
};

/** The path a search took (reported for benchmarks and tests). */
export type SearchPath = 'exact' | 'approximate';

/** One search's parameters after validation. */
export interface SearchQuery {
  ref: ScopeRef;
  vector: string;
  topK: number;
  dimensions: number;
  kinds: string[] | null;
  minSimilarity: number | null;
}

/**
 * The exact search's common table expressions `ranked` (the scope's active, unexpired rows of the
 * kinds asked for, with their cosine distance; scope parameters $1/$2) and `top` (the `LIMIT`
 * nearest above the similarity floor, ties by seq). `p` names the parameter numbers of the kinds
 * (text[] or NULL), the vector, the floor (float8 or NULL) and the limit. Shared by the search
 * below and recall's one-statement read (`recall-reads.ts`).
 */
export function exactSearchCtes(
  ref: ScopeRef,
  p: { kinds: number; vector: number; minSimilarity: number; limit: number },
): string {
  return `WITH ranked AS MATERIALIZED (
   SELECT id, seq, embedding <=> $${p.vector}::vector AS distance FROM sqlrecall_memories
   WHERE ${scopeCondition(ref, 1, 2)} AND status = 'active'
     AND (expires_at IS NULL OR expires_at > clock_timestamp())
     AND ($${p.kinds}::text[] IS NULL OR kind = ANY($${p.kinds}::text[]))),
 top AS (
   SELECT id, seq, distance FROM ranked
   WHERE distance <> 'NaN'::float8 AND ($${p.minSimilarity}::float8 IS NULL OR 1 - distance >= $${p.minSimilarity}::float8)
   ORDER BY distance, seq
   LIMIT $${p.limit})`;
}

const EXACT_SQL = (
  ref: ScopeRef,
) => `${exactSearchCtes(ref, { kinds: 3, vector: 4, minSimilarity: 5, limit: 6 })}
 SELECT ${memoryColumns('m')}, 1 - top.distance AS similarity
 FROM top JOIN sqlrecall_memories m ON m.id = top.id
 ORDER BY top.distance, top.seq`;

// The inner query is the HNSW walk (ORDER BY the distance operator, LIMIT: the only shape the
// index answers); the similarity floor and NaN are applied after it so the walk is not cut short.
const APPROXIMATE_SQL = (ref: ScopeRef) => `WITH walk AS MATERIALIZED (
   SELECT id, seq, embedding <=> $4::vector AS distance FROM sqlrecall_memories
   WHERE ${scopeCondition(ref, 1, 2)} AND status = 'active'
     AND (expires_at IS NULL OR expires_at > clock_timestamp())
     AND ($3::text[] IS NULL OR kind = ANY($3::text[]))
   ORDER BY embedding <=> $4::vector
   LIMIT $7),
 top AS (
   SELECT id, seq, distance FROM walk
   WHERE distance <> 'NaN'::float8 AND ($5::float8 IS NULL OR 1 - distance >= $5::float8)
   ORDER BY distance, seq
   LIMIT $6)
 SELECT ${memoryColumns('m')}, 1 - top.distance AS similarity, w.walked
 FROM (SELECT count(*) AS walked FROM walk) w
 LEFT JOIN (top JOIN sqlrecall_memories m ON m.id = top.id) ON true
 ORDER BY top.distance, top.seq`;

/**
 * How many active memories the scope has, counted up to the size that decides the path:
 * `max(exactUpTo + 1, ceil(minShare × table rows))` (table rows: the planner's `reltuples`).
 * @returns `approximate` when the count reaches that size and pgvector is 0.8 or later
 */
async function countPath(client: SqlClient, q: SearchQuery, policy: SearchPolicy): Promise<SearchPath> {
  const [row] = await client.query<{
    scoped: string | number;
    needed: string | number;
    version: string | null;
  }>(
    `WITH need AS (
       SELECT greatest($3::bigint + 1,
                       ceil(greatest(c.reltuples, 0) * $4::float8)::bigint) AS n
       FROM pg_class c WHERE c.oid = 'sqlrecall_memories'::regclass)
     SELECT (SELECT count(*) FROM (
               SELECT 1 FROM sqlrecall_memories
               WHERE ${scopeCondition(q.ref, 1, 2)} AND status = 'active'
               LIMIT (SELECT n FROM need)) s) AS scoped,
            (SELECT n FROM need) AS needed,
            (SELECT extversion FROM pg_extension WHERE extname = 'vector') AS version`,
    [q.ref.key, q.ref.id, Math.max(0, Math.floor(policy.exactUpTo)), policy.minShare],
  );
  // Iterative index scans (`hnsw.iterative_scan`) came with pgvector 0.8; an older server searches exactly.
  const [major = 0, minor = 0] = (row?.version ?? '0.0').split('.').map(Number);
  if (major === 0 && minor < 8) return 'exact';
  return row && Number(row.scoped) >= Number(row.needed) ? 'approximate' : 'exact';
}

/** How long a scope's path is remembered ({@link PathCache}). */
export const PATH_TTL_MS = 30_000;

/**
 * Paths chosen per scope key, kept {@link PATH_TTL_MS}: the count behind the choice costs ≈ 1–6 ms
 * at 10,000 memories, so it is not repeated for every question. A stale entry only picks the slower
 * or the approximate path for a while; results stay scoped either way, and an approximate walk that
 * comes back short is answered exactly.
 */
export class PathCache {
  private readonly paths = new Map<string, { path: SearchPath; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  /** The path for `q`'s scope: remembered, or counted now. */
  async path(client: SqlClient, q: SearchQuery, policy: SearchPolicy): Promise<SearchPath> {
    if (!Number.isFinite(policy.exactUpTo) || q.dimensions > HNSW_MAX_DIMENSIONS) return 'exact';
    const known = this.paths.get(q.ref.key);
    if (known && this.now() - known.at < PATH_TTL_MS) return known.path;
    const path = await countPath(client, q, policy);
    if (this.paths.size >= 10_000) this.paths.clear();
    this.paths.set(q.ref.key, { path, at: this.now() });
    return path;
  }
}

/**
 * Nearest active memories of one scope, best first, by the path {@link SearchPolicy} picks.
 * `onPath` (benchmarks, tests) learns which path answered.
 */
export async function searchScope(
  client: SqlClient,
  q: SearchQuery,
  policy: SearchPolicy,
  paths: PathCache,
  onPath?: (path: SearchPath) => void,
): Promise<ScoredMemory[]> {
  const exact = async (): Promise<ScoredMemory[]> => {
    onPath?.('exact');
    const rows = await client.query(EXACT_SQL(q.ref), [
      q.ref.key,
      q.ref.id,
      q.kinds,
      q.vector,
      q.minSimilarity,
      q.topK,
    ]);
    return rows.map(scoredFromRow);
  };
  if ((await paths.path(client, q, policy)) === 'exact') return exact();
  const candidates = Math.max(q.topK, policy.efSearch);
  const rows = await client.transaction(async (tx) => {
    await tx.query(
      "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), set_config('hnsw.ef_search', $1, true)",
      [String(Math.min(1000, Math.max(1, Math.floor(policy.efSearch))))],
    );
    return tx.query(APPROXIMATE_SQL(q.ref), [
      q.ref.key,
      q.ref.id,
      q.kinds,
      q.vector,
      q.minSimilarity,
      q.topK,
      candidates,
    ]);
  });
  // A walk that ended with fewer candidates than asked for (the filter passed few rows, or
  // pgvector's hnsw.max_scan_tuples cut it) may have missed some: the exact path answers instead.
  if (Number(rows[0]?.walked ?? 0) < candidates) return exact();
  onPath?.('approximate');
  return rows.filter((row) => row.id !== null && row.id !== undefined).map(scoredFromRow);
}
