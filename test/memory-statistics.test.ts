/**
 * Issue 15: the embedded store keeps planner statistics itself (PGlite runs no autovacuum). Without
 * them the planner took a 2,000-row scope for one row and answered the term read by filtering every
 * row of the scope instead of using the GIN term index.
 */
import { describe, expect, it } from 'vitest';
import { migrate } from '../src/memory/store/migrations.js';
import { scopeRef } from '../src/memory/store/scope.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import { analyzeIfStale } from '../src/memory/store/statistics.js';

describe('planner statistics of the embedded store', () => {
  it('ANALYZEs a grown memories table once, and the term read then uses the GIN index', async () => {
    const client = createPgliteClient(undefined);
    try {
      await migrate(client);
      expect(await analyzeIfStale(client)).toBe(false); // empty: nothing to plan badly
      const ref = scopeRef({ user: 'many' });
      await client.query(
        `INSERT INTO sqlrecall_memories (id, scope_key, scope_user, kind, text, embedding, embedding_model,
           content_hash, term_words)
         SELECT gen_random_uuid(), $1, $2, 'term', 'a long enough memory text number ' || g, '[1,2,3]',
                'm', md5(g::text), ARRAY['word' || g, 'type']
         FROM generate_series(1, 2000) g`,
        [ref.key, ref.id],
      );
      const plan = async () =>
        (
          await client.query<{ 'QUERY PLAN': string }>(
            `EXPLAIN SELECT id FROM sqlrecall_memories
             WHERE scope_key = $1 AND scope_user = $2 AND status = 'active' AND kind = ANY('{term}')
               AND cardinality(term_words) > 0 AND term_words <@ '{word7,type}'::text[]`,
            [ref.key, ref.id],
          )
        )
          .map((row) => row['QUERY PLAN'])
          .join('\n');
      // Without statistics the scope looks tiny and the term index is passed over.
      expect(await plan()).not.toContain('sqlrecall_memories_term_words');
      expect(await analyzeIfStale(client)).toBe(true);
      expect(await analyzeIfStale(client)).toBe(false); // fresh until the table grows again
      expect(await plan()).toContain('sqlrecall_memories_term_words');
      const [stats] = await client.query<{ n: string | number }>(
        "SELECT count(*) AS n FROM pg_stats WHERE tablename = 'sqlrecall_memories'",
      );
      expect(Number(stats?.n)).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});
