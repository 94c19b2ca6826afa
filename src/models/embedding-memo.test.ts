import { describe, expect, it } from 'vitest';
import type { EmbeddingModel } from '../core/ports.js';
import { rememberEmbeddings } from './embedding-memo.js';

function countingModel(fail = new Set<string>()) {
  const calls: string[][] = [];
  const model: EmbeddingModel = {
    id: 'm',
    dimensions: async () => 2,
    embed: async (texts) => {
      calls.push(texts);
      if (texts.some((t) => fail.has(t))) throw new Error('down');
      return texts.map((t) => [t.length, 1]);
    },
  };
  return { model, calls };
}

describe('rememberEmbeddings', () => {
  it('answers a repeated single text from memory, passes batches through, forgets the oldest', async () => {
    const { model, calls } = countingModel();
    const memo = rememberEmbeddings(model, 2);
    expect(await memo.embed(['how many orders'])).toEqual([[15, 1]]);
    const again = await memo.embed(['how many orders']);
    expect(again).toEqual([[15, 1]]);
    again[0]![0] = 99; // a copy: the remembered vector is unchanged
    expect(await memo.embed(['how many orders'])).toEqual([[15, 1]]);
    expect(calls).toEqual([['how many orders']]);
    await memo.embed(['a', 'b']);
    await memo.embed(['a', 'b']);
    expect(calls.slice(1)).toEqual([
      ['a', 'b'],
      ['a', 'b'],
    ]);
    await memo.embed(['second']);
    await memo.embed(['third']); // evicts 'how many orders' (the least recently used)
    await memo.embed(['how many orders']);
    expect(calls.filter((c) => c[0] === 'how many orders')).toHaveLength(2);
    expect(memo.id).toBe('m');
    expect(await memo.dimensions()).toBe(2);
  });

  it('does not remember a failure', async () => {
    const fail = new Set(['x']);
    const { model, calls } = countingModel(fail);
    const memo = rememberEmbeddings(model);
    await expect(memo.embed(['x'])).rejects.toThrow('down');
    fail.clear();
    expect(await memo.embed(['x'])).toEqual([[1, 1]]);
    expect(calls).toEqual([['x'], ['x']]);
  });

  it("by default still remembers a question after 200 other users' questions", async () => {
    const { model, calls } = countingModel();
    const memo = rememberEmbeddings(model);
    await memo.embed(['revenue per customer']);
    for (let i = 0; i < 200; i += 1) await memo.embed([`question ${i}`]);
    await memo.embed(['revenue per customer']);
    expect(calls.filter((c) => c[0] === 'revenue per customer')).toHaveLength(1);
  });
});
