import { describe, expect, it } from 'vitest';
import { cosineSimilarity, DEFAULT_EMBEDDING_DIMENSIONS, hashEmbedding } from './embedding.js';

const sim = (a: string, b: string) => cosineSimilarity(hashEmbedding(a), hashEmbedding(b));

describe('lexical hash embedding', () => {
  it('is deterministic, 384-dimensional by default and unit length', () => {
    const v = hashEmbedding('Only show customers from India');
    expect(v).toHaveLength(DEFAULT_EMBEDDING_DIMENSIONS);
    expect(hashEmbedding('Only show customers from India')).toEqual(v);
    expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    expect(hashEmbedding('x', 768)).toHaveLength(768);
  });

  it('gives related texts a much higher similarity than unrelated ones', () => {
    const related = sim('only show customers from India', 'show only customers located in India');
    const unrelated = sim('only show customers from India', 'a high value order means total_amount > 10000');
    expect(related).toBeGreaterThan(0.7);
    expect(Math.abs(unrelated)).toBeLessThan(0.2);
    expect(
      sim('TPV = sum of settled transaction amounts', 'TPV means the sum of settled transactions'),
    ).toBeGreaterThan(
      sim('TPV = sum of settled transaction amounts', 'only show customers from India') + 0.5,
    );
    // word fragments count: plural and singular are close
    expect(sim('orders', 'order')).toBeGreaterThan(0.3);
    expect(sim('How many orders were placed last month?', 'What is the weather like today?')).toBeLessThan(
      0.2,
    );
  });

  it('is case- and punctuation-insensitive and handles non-Latin text', () => {
    expect(sim('Customers, India!', 'customers india')).toBeCloseTo(1, 5);
    expect(sim('заказы за прошлый месяц', 'заказы за месяц')).toBeGreaterThan(0.6);
  });

  it('never returns a zero vector (empty or symbol-only text)', () => {
    for (const text of ['', '   ', '!!!', '→']) {
      const v = hashEmbedding(text);
      expect(Math.hypot(...v)).toBeCloseTo(1, 5);
    }
    expect(Number.isNaN(sim('', 'hello'))).toBe(false);
  });

  it('rejects bad dimensions and mismatched vectors', () => {
    expect(() => hashEmbedding('a', 0)).toThrow(RangeError);
    expect(() => hashEmbedding('a', 1.5)).toThrow(RangeError);
    expect(() => cosineSimilarity([1], [1, 0])).toThrow(RangeError);
    expect(cosineSimilarity([0, 0], [1, 0])).toBe(0);
  });
});
