import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KEPT_TURNS,
  loadConversation,
  MAX_SUMMARY_CHARS,
  PROMPT_TURNS,
  recordTurn,
  renderConversation,
  rollSummary,
} from './conversation.js';
import { createMemoryStore, type SqlMemoryStore } from './store/index.js';
import { contentWords, definedTerm, normalizeText, stem, termOccursIn } from './text.js';

describe('conversation context', () => {
  let store: SqlMemoryStore;
  beforeAll(async () => {
    store = createMemoryStore();
    await store.init({ model: 'test-embed', dimensions: 4 });
  });
  afterAll(async () => {
    await store.close();
  });

  it('keeps the last turns verbatim and folds older ones into a rolling summary', async () => {
    const scope = { user: 'ann' };
    const total = KEPT_TURNS + 3;
    for (let i = 1; i <= total; i += 1) {
      await recordTurn(store, scope, 'c1', {
        question: `question ${i}`,
        sql: `SELECT ${i}`,
        rowCount: i,
        answer: `answer ${i}`,
      });
    }
    const context = await loadConversation(store, scope, 'c1');
    expect(context.turns.map((t) => t.question)).toEqual(
      Array.from({ length: PROMPT_TURNS }, (_, k) => `question ${total - PROMPT_TURNS + 1 + k}`),
    );
    // Turns 1..3 left the window of KEPT_TURNS and are in the summary, oldest first.
    expect(context.summary?.split('\n')).toEqual([
      '- question 1 [SQL: SELECT 1] → 1 row',
      '- question 2 [SQL: SELECT 2] → 2 rows',
      '- question 3 [SQL: SELECT 3] → 3 rows',
    ]);
    const text = renderConversation(context);
    expect(text).toContain('Earlier in this conversation:');
    expect(text).toContain(`Previous SQL: SELECT ${total}`);
    expect(text).toContain(`Answer: answer ${total}`);
    // Another user's conversation with the same id is empty.
    expect(await loadConversation(store, { user: 'bob' }, 'c1')).toEqual({
      conversationId: 'c1',
      summary: null,
      turns: [],
    });
    expect(renderConversation({ conversationId: 'x', summary: null, turns: [] })).toBe('');
  });

  it("records a fresh conversation's first turn without reading the conversation back", async () => {
    const scope = { user: 'cy' };
    const reads: string[] = [];
    const counting: Parameters<typeof recordTurn>[0] = {
      appendTurn: store.appendTurn.bind(store),
      getConversation: (...args: Parameters<typeof store.getConversation>) => {
        reads.push(args[1]);
        return store.getConversation(...args);
      },
      recentTurns: store.recentTurns.bind(store),
      setSummary: store.setSummary.bind(store),
    };
    const turn = { question: 'first', sql: 'SELECT 1', rowCount: 1, answer: 'one' };
    await recordTurn(counting, scope, 'fresh-1', turn, { firstTurn: true });
    expect(reads).toEqual([]);
    await recordTurn(counting, scope, 'fresh-1', { ...turn, question: 'second' });
    expect(reads).toEqual(['fresh-1']);
    const context = await loadConversation(store, scope, 'fresh-1');
    expect(context.turns.map((t) => t.question)).toEqual(['first', 'second']);
  });

  it('the rolling summary stays bounded, dropping the oldest lines first', () => {
    let summary: string | null = null;
    for (let i = 0; i < 200; i += 1) summary = rollSummary(summary, `- line ${i} ${'x'.repeat(40)}`);
    expect(summary!.length).toBeLessThanOrEqual(MAX_SUMMARY_CHARS);
    expect(summary).toContain('line 199');
    expect(summary).not.toContain('line 0 ');
  });
});

describe('text helpers', () => {
  it('normalises for exact duplicates', () => {
    expect(normalizeText('  Only  India customers!! ')).toBe('only india customers');
  });

  it('finds the defined term of a definition', () => {
    expect(definedTerm('High value order means total amount over 10000')).toBe('High value order');
    expect(definedTerm('Define VIP as a customer with 10 orders')).toBe('VIP');
    expect(definedTerm('By churned I mean no order in 90 days')).toBe('churned');
    expect(definedTerm('TPV = sum of settled amounts')).toBe('TPV');
    expect(definedTerm('Always show me customers from India')).toBeNull();
  });

  it('matches a term in any word order and number, never an empty term', () => {
    expect(termOccursIn('High value order', 'customers who have a high order value')).toBe(true);
    expect(termOccursIn('High value orders', 'a high value order')).toBe(true);
    expect(termOccursIn('High value order', 'customers with high value')).toBe(false);
    expect(termOccursIn('the', 'the orders')).toBe(false);
    expect(stem('statuses')).toBe(stem('status'));
    expect(stem('categories')).toBe('category');
    expect(contentWords('Show me the orders')).toEqual(['order']);
  });
});
