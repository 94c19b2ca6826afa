/**
 * `term_words` (migration 3): the stemmed content words of the term a memory defines,
 * so that exact term recall is one indexed `term_words <@ $questionWords` in SQL instead of a
 * read of every definition of the user per question.
 */
import { memoryTerm } from '../recall.js';
import { contentWords } from '../text.js';
import type { SqlClient } from './sql-client.js';

/** The words stored for a memory: `contentWords(memoryTerm(memory))`, `[]` when it defines no term. */
export function termWordsOf(kind: string, text: string): string[] {
  const term = memoryTerm({ kind: kind as Parameters<typeof memoryTerm>[0]['kind'], text });
  return term ? [...new Set(contentWords(term))] : [];
}

/** Rows filled per statement by {@link fillTermWords}. */
const FILL_BATCH = 500;

/**
 * Fills `term_words` of rows written before migration 3 (NULL), in batches; a no-op (one indexed
 * probe) once every row has them. Safe to run from several processes at once (same values).
 */
export async function fillTermWords(client: SqlClient): Promise<number> {
  let filled = 0;
  for (;;) {
    const rows = await client.query<{ id: string; kind: string; text: string }>(
      'SELECT id, kind, text FROM sqlrecall_memories WHERE term_words IS NULL LIMIT $1',
      [FILL_BATCH],
    );
    if (rows.length === 0) return filled;
    const values = rows.map((row) => ({ id: row.id, words: termWordsOf(row.kind, row.text) }));
    await client.query(
      `UPDATE sqlrecall_memories m SET term_words = ARRAY(SELECT jsonb_array_elements_text(v.words))
       FROM jsonb_to_recordset($1::jsonb) AS v(id uuid, words jsonb)
       WHERE m.id = v.id AND m.term_words IS NULL`,
      [JSON.stringify(values)],
    );
    filled += rows.length;
    if (rows.length < FILL_BATCH) return filled;
  }
}
