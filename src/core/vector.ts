/**
 * Embeddings as pgvector values: the one place that turns a JavaScript vector into the text form
 * PostgreSQL's `vector` type accepts and back. Serialisation is the `pgvector` package's
 * (`toSql`/`fromSql`); this module adds the checks the library leaves to its caller.
 */
import pgvector from 'pgvector';
import { SqlrecallError } from './errors.js';

/**
 * Largest dimension pgvector's `vector` type stores (pgvector README, "Vector type": up to
 * 16,000 dimensions).
 */
export const MAX_VECTOR_DIMENSIONS = 16_000;

/** What the stored vectors are, when a caller knows: a mismatch is `memory_embedding_mismatch`. */
export interface ExpectedVector {
  /** Dimension of the stored vectors. */
  dimensions: number;
  /** Embedding model of the stored vectors (named in the message). */
  model: string;
  /** Command that fixes a mismatch, shown to the user; default `sqlrecall memory reembed`. */
  hint?: string;
}

/**
 * The pgvector text literal `[x,y,…]` of `embedding`, for a bound parameter cast with `::vector`.
 *
 * Non-finite components are refused rather than written as 0 or `null`: PostgreSQL rejects `NaN`
 * and `Infinity` in a vector, and a silently zeroed component would corrupt every distance. They
 * can only come from the embedding model, hence the code `model_output`.
 *
 * @param embedding the vector; 1 to {@link MAX_VECTOR_DIMENSIONS} finite numbers
 * @param expected dimension and model of the stored vectors, when the store has a fixed dimension
 * @throws SqlrecallError `memory_embedding_mismatch` when the length differs from
 *   `expected.dimensions`; `model_output` for an empty or oversized vector or a non-finite component
 */
export function toVectorSql(embedding: readonly number[], expected?: ExpectedVector): string {
  if (expected !== undefined && embedding.length !== expected.dimensions) {
    const hint = expected.hint ?? 'sqlrecall memory reembed';
    throw new SqlrecallError(
      'memory_embedding_mismatch',
      `An embedding has ${embedding.length} dimensions but the memory store holds ${expected.dimensions}-dimensional vectors from ${expected.model}. Run \`${hint}\` after switching embedding models.`,
      { details: { hint } },
    );
  }
  if (embedding.length === 0 || embedding.length > MAX_VECTOR_DIMENSIONS) {
    throw new SqlrecallError(
      'model_output',
      `An embedding has ${embedding.length} dimensions; a pgvector vector holds 1 to ${MAX_VECTOR_DIMENSIONS}.`,
    );
  }
  const index = embedding.findIndex((value) => !Number.isFinite(value));
  if (index !== -1) {
    throw new SqlrecallError(
      'model_output',
      `The embedding model returned a non-finite number (${embedding[index]}) at position ${index}; the vector cannot be stored or searched.`,
    );
  }
  return pgvector.toSql([...embedding]) as string;
}

/**
 * A vector read back from PostgreSQL: the text form `[x,y,…]` (pgvector's `fromSql`) or an array
 * some drivers already return; `null` for SQL NULL or anything else.
 */
export function fromVectorSql(value: unknown): number[] | null {
  if (Array.isArray(value)) return value.map(Number);
  if (typeof value !== 'string' || !value.startsWith('[')) return null;
  const parsed: unknown = pgvector.fromSql(value);
  return Array.isArray(parsed) ? parsed.map(Number) : null;
}
