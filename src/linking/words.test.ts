import { describe, expect, it } from 'vitest';
import { compoundMatch, learnNamePrefixes, matchQuality, splitWords, stem, terms } from './words.js';

describe('words', () => {
  it('splits snake_case, camelCase and digits', () => {
    expect(splitWords('order_items')).toEqual(['order', 'items']);
    expect(splitWords('OrderItems2')).toEqual(['order', 'items', '2']);
    expect(splitWords('HTTPServer log')).toEqual(['http', 'server', 'log']);
    expect(splitWords('  ')).toEqual([]);
  });

  it('conflates plural and singular, keeps short and numeric words', () => {
    expect(stem('categories')).toBe('category');
    expect(stem('orders')).toBe('order');
    expect(stem('boxes')).toBe('box');
    expect(stem('status')).toBe('status');
    expect(stem('analysis')).toBe('analysis');
    expect(stem('written')).toBe('write');
    expect(stem('shipping')).toBe('ship');
    expect(stem('2021')).toBe('2021');
    expect(stem('bus')).toBe('bus');
  });

  it('drops stop words from questions', () => {
    expect(terms('How many orders were placed in each city?')).toEqual(['order', 'place', 'city']);
  });

  it('matches derivations and typos but not false friends', () => {
    expect(matchQuality('enroll', 'enrollment')).toBeGreaterThan(0);
    expect(matchQuality('customer', 'custmer')).toBe(0.6);
    expect(matchQuality('count', 'county')).toBe(0);
    expect(matchQuality('state', 'statement')).toBe(0);
    expect(matchQuality('2', 'v2')).toBe(0);
    expect(matchQuality('year', 'year')).toBe(1);
  });

  it('finds words inside compound identifiers only when the rest is made of parts', () => {
    const vocabulary = new Set(['line', 'order', 'id', 'price', 'daily']);
    const isPart = (part: string) => vocabulary.has(part);
    expect(compoundMatch('orderline', 'order', isPart)).toBe(true);
    expect(compoundMatch('orderline', 'line', isPart)).toBe(true);
    expect(compoundMatch('tblcustomer', 'customer', isPart)).toBe(true);
    expect(compoundMatch('tbldailyprice', 'price', isPart)).toBe(true);
    // An unknown two-letter prefix counts only when the schema uses it (see learnNamePrefixes).
    expect(compoundMatch('qxcustomer', 'customer', isPart)).toBe(false);
    expect(compoundMatch('qxcustomer', 'customer', isPart, (p) => p === 'qx')).toBe(true);
    expect(compoundMatch('discount', 'count', isPart)).toBe(false);
    expect(compoundMatch('account', 'count', isPart)).toBe(false);
    expect(compoundMatch('county', 'count', isPart)).toBe(false);
    expect(compoundMatch('statement', 'state', isPart)).toBe(false);
  });

  it("learns a schema's own table-name prefix only when several tables share it", () => {
    const isPart = (part: string) => ['car', 'order'].includes(part);
    expect(learnNamePrefixes(['qxorder', 'qxcustomer', 'qxinvoice', 'product'], isPart)).toEqual(
      new Set(['qx']),
    );
    expect(learnNamePrefixes(['qxorder', 'qxcustomer', 'product'], isPart).size).toBe(0);
    // `car` is a word, so `cargo`/`carrier`/`carpool` do not make it a prefix.
    expect(learnNamePrefixes(['cartons', 'carrier', 'carpool'], isPart).has('car')).toBe(false);
  });

  it('maps irregular verb forms to their base, not to a noun', () => {
    expect(stem('sold')).toBe('sell');
    expect(stem('bought')).toBe('buy');
    expect(stem('paid')).toBe('pay');
  });
});
