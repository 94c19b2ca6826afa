/**
 * Migration to another embedding model: every memory (all scopes, all statuses) gets a new vector,
 * the column changes dimension, the HNSW index is rebuilt and the meta records the model — all in
 * one transaction, so a failure at any point (the embedder throws, a vector has the wrong length)
 * leaves the old model, vectors and index in place.
 */
import { SqlrecallError } from '../../core/errors.js';
import { toVectorSql } from '../../core/vector.js';
import { lockSchema, setupEmbedding, writeEmbeddingMeta } from './migrations.js';
import type { SqlClient } from './sql-client.js';
import { embedInBatches } from './transfer.js';
import type { EmbedTexts, ReembedProgress } from './types.js';

/** Rows updated per statement. */
const UPDATE_BATCH = 500;

/** See {@link SqlMemoryStore.reembed}; migrations must have run. */
export async function reembedAll(
  client: SqlClient,
  model: string,
  dimensions: number,
  embed: EmbedTexts,
  onProgress?: (progress: ReembedProgress) => void,
): Promise<{ reembedded: number }> {
  if (typeof model !== 'string' || model.trim().length === 0) {
    throw new SqlrecallError('usage', 'reembed needs the name of the new embedding model.');
  }
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16_000) {
    throw new SqlrecallError(
      'usage',
      `An embedding dimension must be an integer from 1 to 16000, not ${dimensions}.`,
    );
  }
  return client.transaction(async (tx) => {
    await lockSchema(tx);
    // Blocks concurrent writers (a memory added meanwhile would keep an old-dimension vector); reads go on.
    await tx.query('LOCK TABLE sqlrecall_memories IN SHARE ROW EXCLUSIVE MODE');
    const rows = await tx.query<{ id: string; text: string }>(
      'SELECT id, text FROM sqlrecall_memories ORDER BY seq',
    );
    const total = rows.length;
    onProgress?.({ done: 0, total });
    const vectors = await embedInBatches(
      rows.map((row) => row.text),
      embed,
      (done) => onProgress?.({ done, total }),
    );
    const literals = vectors.map((vector) => toVectorSql(vector, { dimensions, model }));
    await tx.query('ALTER TABLE sqlrecall_memories ALTER COLUMN embedding DROP NOT NULL');
    await tx.query(
      `ALTER TABLE sqlrecall_memories ALTER COLUMN embedding TYPE vector(${dimensions}) USING NULL::vector(${dimensions})`,
    );
    for (let start = 0; start < rows.length; start += UPDATE_BATCH) {
      const ids = rows.slice(start, start + UPDATE_BATCH).map((row) => String(row.id));
      await tx.query(
        `UPDATE sqlrecall_memories m SET embedding = v.embedding::vector, embedding_model = $3
         FROM unnest($1::uuid[], $2::text[]) AS v(id, embedding) WHERE m.id = v.id`,
        [ids, literals.slice(start, start + UPDATE_BATCH), model],
      );
    }
    await tx.query('ALTER TABLE sqlrecall_memories ALTER COLUMN embedding SET NOT NULL');
    await setupEmbedding(tx, dimensions);
    await writeEmbeddingMeta(tx, model, dimensions);
    return { reembedded: total };
  });
}
