/**
 * Planner statistics of the embedded store. PGlite runs no autovacuum, so a memories
 * table filled after its last ANALYZE has none: the planner then takes a scope of 10,000 rows for
 * one row and answers the term read (`term_words <@ …`, GIN) by filtering every row of the scope
 * (≈ 25–560 ms at 10,000 memories instead of < 1 ms from the GIN index, measured with
 * `bench/pipeline-overhead.ts`). A server PostgreSQL has autovacuum and is left to it.
 */
import type { SqlSession } from './sql-client.js';

/** Growth (share of the pages counted at the last ANALYZE) that makes statistics stale; autovacuum's default analyze scale factor. */
export const STALE_GROWTH = 0.1;
/** Pages the table may grow by before any ANALYZE (small tables are planned well without). */
export const STALE_MIN_PAGES = 8;

/**
 * ANALYZEs `sqlrecall_memories` when its statistics are stale: the table is larger than
 * {@link STALE_MIN_PAGES} pages and has no column statistics yet, or its file grew by more than
 * {@link STALE_GROWTH} of the pages recorded in `pg_class` (at the last ANALYZE, VACUUM or index
 * build) plus {@link STALE_MIN_PAGES}. The check reads the catalog and the file size (no row is
 * read), so it works across processes and restarts, unlike `pg_stat_*` counters, which PGlite
 * does not keep.
 * @returns true when it ran ANALYZE
 */
export async function analyzeIfStale(session: SqlSession): Promise<boolean> {
  const [row] = await session.query<{ stale: boolean }>(
    `WITH t AS (
       SELECT c.relpages, pg_relation_size(c.oid) / current_setting('block_size')::bigint AS pages,
              EXISTS (SELECT 1 FROM pg_stats s WHERE s.schemaname = n.nspname AND s.tablename = c.relname)
                AS analyzed
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       WHERE c.oid = 'sqlrecall_memories'::regclass)
     SELECT pages > $2::int AND (NOT analyzed OR pages > relpages * (1 + $1::float8) + $2::int) AS stale
     FROM t`,
    [STALE_GROWTH, STALE_MIN_PAGES],
  );
  if (row?.stale !== true) return false;
  await session.query('ANALYZE sqlrecall_memories');
  return true;
}
