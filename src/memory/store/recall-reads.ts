/**
 * The reads recall makes for one question in one scope (`memory/recall.ts`: standing preferences,
 * term definitions, pinned memories and the exact similarity search) as ONE statement (before,
 * per question the embedded store ran 4 statements per scope; each costs a round through PGlite's
 * protocol, ≈1–2 ms of the server's main thread). Each part repeats the condition of the
 * `list`/`search` call it stands for (see `store.ts` and `search.ts`), and every part carries the
 * scope condition `scope_key = $1 AND scope_user|scope_team = $2` before any ranking or limit.
 */
import type { Memory, RecallReads, ScoredMemory } from '../../core/memory.js';
import { MEMORY_COLUMNS, memoryColumns, memoryFromRow, scoredFromRow } from './rows.js';
import { type ScopeRef, scopeCondition } from './scope.js';
import { exactSearchCtes } from './search.js';
import type { SqlClient } from './sql-client.js';

/** Parameters of {@link recallReadsSql}, validated by the caller (`store.ts`). */
export interface RecallReadsParams {
  ref: ScopeRef;
  /** Tables in play, lower-cased. */
  tables: string[];
  /** Most standing preferences (≥ 0). */
  preferenceLimit: number;
  /** Definition kinds and the question's term words; null: no definitions are read. */
  definitions: { kinds: string[]; words: string[] } | null;
  /** Kinds of the similarity search; null: every kind. */
  searchKinds: string[] | null;
  /** The question's vector literal (`toVectorSql`). */
  vector: string;
  minSimilarity: number | null;
  /** Most similar memories (0: none; the approximate path is searched apart by the caller). */
  topK: number;
}

const UNEXPIRED = '(expires_at IS NULL OR expires_at > clock_timestamp())';

/**
 * The statement: parts 1–3 are the `list` calls (ordered by seq), part 4 the exact search of
 * `search.ts` (`EXACT_SQL`: the scope's rows materialised first, ranked by cosine distance).
 */
export function recallReadsSql(ref: ScopeRef): string {
  const scope = scopeCondition(ref, 1, 2);
  return `${exactSearchCtes(ref, { kinds: 7, vector: 8, minSimilarity: 9, limit: 10 })}
 (SELECT 1 AS part, NULL::float8 AS similarity, NULL::float8 AS ord_distance, seq AS ord_seq, ${MEMORY_COLUMNS}
  FROM sqlrecall_memories
  WHERE ${scope} AND status = 'active' AND kind = 'preference' AND ${UNEXPIRED}
    AND (cardinality(tables) = 0
         OR EXISTS (SELECT 1 FROM unnest(tables) AS t(name) WHERE lower(t.name) = ANY($3::text[])))
  ORDER BY seq LIMIT $4)
 UNION ALL
 (SELECT 2, NULL, NULL, seq, ${MEMORY_COLUMNS}
  FROM sqlrecall_memories
  WHERE $6::text[] IS NOT NULL AND ${scope} AND status = 'active' AND kind = ANY($5::text[])
    AND cardinality(term_words) > 0 AND term_words <@ $6::text[] AND ${UNEXPIRED}
  ORDER BY seq)
 UNION ALL
 (SELECT 3, NULL, NULL, seq, ${MEMORY_COLUMNS}
  FROM sqlrecall_memories
  WHERE ${scope} AND status = 'active' AND pinned = true AND ${UNEXPIRED}
  ORDER BY seq)
 UNION ALL
 (SELECT 4, 1 - top.distance, top.distance, top.seq, ${memoryColumns('m')}
  FROM top JOIN sqlrecall_memories m ON m.id = top.id)
 ORDER BY part, ord_distance, ord_seq`;
}

/** Runs {@link recallReadsSql} and splits its rows into the four parts. */
export async function readRecall(client: SqlClient, p: RecallReadsParams): Promise<RecallReads> {
  const rows = await client.query(recallReadsSql(p.ref), [
    p.ref.key,
    p.ref.id,
    p.tables,
    p.preferenceLimit,
    p.definitions?.kinds ?? null,
    p.definitions?.words ?? null,
    p.searchKinds,
    p.vector,
    p.minSimilarity,
    p.topK,
  ]);
  const preferences: Memory[] = [];
  const definitions: Memory[] = [];
  const pinned: Memory[] = [];
  const similar: ScoredMemory[] = [];
  for (const row of rows) {
    const part = Number(row.part);
    if (part === 4) similar.push(scoredFromRow(row));
    else (part === 1 ? preferences : part === 2 ? definitions : pinned).push(memoryFromRow(row));
  }
  return { preferences, definitions, similar, pinned };
}
