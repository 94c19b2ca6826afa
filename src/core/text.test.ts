import { describe, expect, it } from 'vitest';
import { editDistance, QUESTION_STOP_WORDS, splitWords, stem, TERM_STOP_WORDS } from './text.js';

describe('core text', () => {
  it('counts edits, a swap of adjacent letters as one', () => {
    expect(editDistance('kitten', 'sitting')).toBe(3);
    expect(editDistance('', 'abc')).toBe(3);
    expect(editDistance('abc', '')).toBe(3);
    expect(editDistance('same', 'same')).toBe(0);
    expect(editDistance('ordres', 'orders')).toBe(1);
    expect(editDistance('ca', 'abc')).toBe(3); // optimal string alignment: no edit of a swapped pair
  });

  it('stops at the bound and answers max + 1 beyond it', () => {
    expect(editDistance('customer', 'custmer', 1)).toBe(1);
    expect(editDistance('kitten', 'sitting', 1)).toBe(2);
    expect(editDistance('a', 'abcdef', 2)).toBe(3);
    expect(editDistance('kitten', 'sitting', 3)).toBe(3);
  });

  it('stems plurals, possessives, verb endings and irregular forms', () => {
    expect(stem('orders')).toBe('order');
    expect(stem("customer's")).toBe('customer');
    expect(stem("customers'")).toBe('customer');
    expect(stem('statuses')).toBe(stem('status'));
    expect(stem('shipped')).toBe('ship');
    expect(stem('people')).toBe('person');
    expect(stem('bonus')).toBe('bonus');
    expect(stem('2021s')).toBe('2021s');
  });

  it('keeps selective words in a term and drops them from a question', () => {
    for (const word of ['top', 'last', 'per']) {
      expect(QUESTION_STOP_WORDS.has(word)).toBe(true);
      expect(TERM_STOP_WORDS.has(word)).toBe(false);
    }
    for (const word of ['means', 'call']) {
      expect(TERM_STOP_WORDS.has(word)).toBe(true);
      expect(QUESTION_STOP_WORDS.has(word)).toBe(false);
    }
    expect(QUESTION_STOP_WORDS.has('the') && TERM_STOP_WORDS.has('the')).toBe(true);
  });

  it('splits identifiers into words', () => {
    expect(splitWords('OrderItems2')).toEqual(['order', 'items', '2']);
  });
});
