/**
 * The one pgvector conversion (core/vector.ts): dimension and finiteness checks, and a round trip
 * through a real `vector` column (PGlite + pgvector) for both users, the memory store and the
 * schema-index store, which once disagreed on non-finite values (one threw, one wrote 0).
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryPgliteOptions } from '../../test/support/pglite-template.js';
import { PgSchemaIndexStore } from '../linking/pg-store.js';
import { SqlrecallError } from './errors.js';
import { fromVectorSql, MAX_VECTOR_DIMENSIONS, toVectorSql } from './vector.js';

function thrown(run: () => unknown): SqlrecallError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected a SqlrecallError');
}

describe('toVectorSql', () => {
  it('writes the text form pgvector reads', () => {
    expect(toVectorSql([1, -2.5, 0.125])).toBe('[1,-2.5,0.125]');
    expect(toVectorSql([0.5, 1], { dimensions: 2, model: 'm' })).toBe('[0.5,1]');
  });

  it('refuses every non-finite component with model_output, naming the value and its position', () => {
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) {
      const error = thrown(() => toVectorSql([0.1, bad, 0.3]));
      expect(error.code).toBe('model_output');
      expect(error.message).toContain(`(${bad}) at position 1`);
    }
  });

  it('refuses a length other than the store’s with memory_embedding_mismatch and the fixing command', () => {
    const error = thrown(() => toVectorSql([1, 2, 3], { dimensions: 4, model: 'all-minilm' }));
    expect(error.code).toBe('memory_embedding_mismatch');
    expect(error.message).toContain('3 dimensions');
    expect(error.message).toContain('4-dimensional vectors from all-minilm');
    expect(error.details.hint).toBe('sqlrecall memory reembed');
  });

  it('refuses an empty vector and one longer than pgvector stores', () => {
    expect(thrown(() => toVectorSql([])).code).toBe('model_output');
    expect(thrown(() => toVectorSql(new Array(MAX_VECTOR_DIMENSIONS + 1).fill(0))).code).toBe('model_output');
    expect(toVectorSql(new Array(MAX_VECTOR_DIMENSIONS).fill(0)).length).toBeGreaterThan(
      MAX_VECTOR_DIMENSIONS,
    );
  });
});

describe('fromVectorSql', () => {
  it('reads the text form and driver arrays; anything else is null', () => {
    expect(fromVectorSql('[1,-2.5,0.125]')).toEqual([1, -2.5, 0.125]);
    expect(fromVectorSql([1, '2'])).toEqual([1, 2]);
    expect(fromVectorSql(null)).toBeNull();
    expect(fromVectorSql('{1,2}')).toBeNull();
    expect(fromVectorSql(7)).toBeNull();
  });
});

describe('through a real vector column (PGlite + pgvector)', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
    await db.exec('CREATE EXTENSION IF NOT EXISTS vector');
  });
  afterAll(async () => {
    await db?.close();
  });

  it('round-trips values PostgreSQL stores exactly (float4)', async () => {
    const values = [1, -2.5, 0.125, 1e-3, 3.0517578125e-5];
    const rows = await db.query<{ v: string }>('SELECT $1::vector::text AS v', [toVectorSql(values)]);
    const back = fromVectorSql(rows.rows[0]?.v);
    expect(back).toHaveLength(values.length);
    back?.forEach((value, i) => {
      expect(value).toBeCloseTo(values[i] ?? Number.NaN, 6);
    });
  });

  it('the schema-index store refuses a NaN embedding instead of storing zeros, and writes nothing', async () => {
    const store = new PgSchemaIndexStore({
      query: async (text, params) => (await db.query(text, params)).rows as never[],
      transaction: (fn) =>
        db.transaction((tx) =>
          fn({ query: async (text, params) => (await tx.query(text, params)).rows as never[] }),
        ),
    });
    const entry = {
      tableKey: 'public.t',
      catalogHash: 'h',
      document: 'table t',
      embedding: [0.5, Number.NaN, 0.5],
      embeddingModel: 'hash-3',
      valueHints: [],
    };
    await expect(store.upsert('fp', [entry])).rejects.toMatchObject({ code: 'model_output' });
    expect(await store.load('fp', { withEmbeddings: true })).toEqual([]);
    await store.upsert('fp', [{ ...entry, embedding: [0.5, 0.25, 0.5] }]);
    const [stored] = await store.load('fp', { withEmbeddings: true });
    expect(stored?.embedding).toEqual([0.5, 0.25, 0.5]);
    await expect(store.nearest('fp', [Number.POSITIVE_INFINITY, 0, 0], 'hash-3', 1)).rejects.toMatchObject({
      code: 'model_output',
    });
    expect(await store.nearest('fp', [0.5, 0.25, 0.5], 'hash-3', 1)).toEqual([
      { tableKey: 'public.t', similarity: expect.closeTo(1, 6) },
    ]);
  });
});
