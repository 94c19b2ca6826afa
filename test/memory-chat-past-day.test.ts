/**
 * A chat message that names a day already over ("… until 2020-01-01") is refused the way
 * `memory add --until 2020-01-01` is: the reply says the day is over and that nothing was stored;
 * nothing is queued, stored or applied to the answer. A day still to come is stored with its expiry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MemoryPipeline, startMemoryPipeline } from './support/memory-pipeline.js';

describe('chat: an expiry day already over', () => {
  let p: MemoryPipeline;
  beforeAll(async () => {
    p = await startMemoryPipeline();
  }, 120_000);
  afterAll(async () => {
    await p?.close();
  });

  const everything = async (user: string) => [
    ...(await p.store.list({ user }, { statuses: ['active', 'superseded', 'deleted'] })),
    ...(await p.store.listPending({ user })),
  ];

  it('an instruction "until 2020-01-01" is refused: the reply says so, nothing is stored or queued', async () => {
    const { outcome } = await p.ask('pia', 'Only show shipped orders until 2020-01-01');
    expect(outcome.kind).toBe('instruction');
    expect(outcome.remembered).toEqual([]);
    expect(outcome.answer).toMatch(
      /^Not remembered: The day 2020-01-01 is already over in .+ Nothing was stored\./,
    );
    expect(outcome.answer).not.toMatch(/^Remembered/m);
    expect(outcome.memoryProblems).toEqual([expect.stringContaining('2020-01-01 is already over')]);
    expect(await everything('pia')).toEqual([]);
  });

  it('a message that instructs and asks: answered without the expired instruction, which is not stored', async () => {
    const before = p.sqlPrompts.length;
    const { outcome } = await p.ask(
      'pia',
      'From now on only delivered orders until 2020-01-01 — how many orders are there?',
    );
    expect(outcome.kind).toBe('both');
    expect(outcome.sql).toMatch(/count/i);
    const prompt = p.sqlPrompts.slice(before).join('\n');
    expect(prompt).toContain('how many orders are there?');
    expect(prompt).not.toContain('only delivered orders');
    expect(outcome.appliedMemories).toEqual([]);
    expect(outcome.memoryProblems).toEqual([expect.stringContaining('2020-01-01 is already over')]);
    expect(await everything('pia')).toEqual([]);
  });

  it('a day still to come is stored with its expiry, as before', async () => {
    const { outcome } = await p.ask('pia', 'From now on only delivered orders until 2099-12-31');
    expect(outcome.remembered).toMatchObject([{ action: 'ADD', kind: 'preference' }]);
    const [stored] = await p.store.list({ user: 'pia' });
    expect(stored?.expiresOn).toBe('2099-12-31');
  });
});
