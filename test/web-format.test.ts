/** Pure display logic of web result tables (issue 14/16): exact numeric sort, grouping, chart values. */
import { describe, expect, it } from 'vitest';
import {
  chartRows,
  chartValue,
  compareCells,
  compareNumeric,
  formatNumber,
  isIdentifierColumn,
  isNumericType,
  sortRows,
} from '../web/src/format.js';

describe('web result formatting', () => {
  it('sorts int8 strings exactly, where parseFloat calls them equal', () => {
    const rows = [['9007199254740993'], ['9007199254740992'], ['9007199254740994']];
    expect(parseFloat('9007199254740993')).toBe(parseFloat('9007199254740992'));
    expect(sortRows(rows, 0, 1, true).map((r) => r[0])).toEqual([
      '9007199254740992',
      '9007199254740993',
      '9007199254740994',
    ]);
    expect(sortRows(rows, 0, -1, true).map((r) => r[0])).toEqual([
      '9007199254740994',
      '9007199254740993',
      '9007199254740992',
    ]);
  });

  it('compares signs, fractions and big numerics by value', () => {
    expect(compareNumeric('-10', '-9')).toBe(-1);
    expect(compareNumeric('-0.00', '0')).toBe(0);
    expect(compareNumeric('1.50', '1.5')).toBe(0);
    expect(compareNumeric('0.123456789012345678901', '0.123456789012345678902')).toBe(-1);
    expect(compareNumeric('123456789012345678901234567890.1', '123456789012345678901234567890')).toBe(1);
    expect(compareNumeric('2', '10')).toBe(-1);
    expect(compareNumeric('1,200.50', '999.99')).toBe(1); // money text
    expect(compareNumeric('abc', '1')).toBeUndefined();
    expect(compareNumeric(2.5, '2.25')).toBe(1);
  });

  it('keeps NULLs last in both directions and never mixes them with the text "NULL" or ""', () => {
    const rows = [[null], ['5'], [''], ['NULL'], ['-3']];
    expect(sortRows(rows, 0, 1, true).map((r) => r[0])).toEqual(['-3', '5', '', 'NULL', null]);
    expect(sortRows(rows, 0, -1, false).at(-1)?.[0]).toBeNull();
    expect(compareCells(null, '', false)).toBe(1);
  });

  it('groups digits for display without losing any', () => {
    expect(formatNumber('9007199254740993', 'en-US')).toBe('9,007,199,254,740,993');
    expect(formatNumber('-1234567.890', 'en-US')).toBe('-1,234,567.890');
    expect(formatNumber('1234.5', 'de-DE')).toBe('1.234,5');
    expect(formatNumber(42, 'en-US')).toBe('42');
    expect(formatNumber('NaN', 'en-US')).toBe('NaN');
  });

  it('plots money and numeric strings as numbers, NULL as a gap, never NaN', () => {
    expect(chartValue('$120.50')).toBe(120.5);
    expect(chartValue('-$1,200.00')).toBe(-1200);
    expect(chartValue('1200.25')).toBe(1200.25);
    expect(chartValue(null)).toBeNull();
    expect(chartValue('n/a')).toBeNull();
  });

  it('knows the numeric PostgreSQL types', () => {
    for (const t of ['int8', 'numeric', 'money', 'float8', 'numeric(10,2)'])
      expect(isNumericType(t)).toBe(true);
    for (const t of ['text', 'date', 'jsonb']) expect(isNumericType(t)).toBe(false);
  });
});

describe('identifier columns and date-ordered line charts', () => {
  it('integer ids and years are not digit-grouped; counts and amounts are', () => {
    expect(isIdentifierColumn('id', 'int4')).toBe(true);
    expect(isIdentifierColumn('customer_id', 'int8')).toBe(true);
    expect(isIdentifierColumn('year', 'int4')).toBe(true);
    expect(isIdentifierColumn('order_year', 'int2')).toBe(true);
    expect(isIdentifierColumn('orders', 'int8')).toBe(false);
    expect(isIdentifierColumn('revenue', 'numeric')).toBe(false);
    expect(isIdentifierColumn('id', 'numeric')).toBe(false); // not an integer column
    expect(formatNumber('1455', 'en-US')).toBe('1,455'); // the grouped form the table avoids for ids
  });

  it('a line chart over dates is drawn in date order whatever the row order; bars keep their order', () => {
    const rows = [
      ['2025-03-01', '30'],
      ['2025-01-01', '10'],
      [null, '0'],
      ['2025-02-01', '20'],
    ];
    expect(chartRows(rows, 0, 'line').map((r) => r[0])).toEqual([
      '2025-01-01',
      '2025-02-01',
      '2025-03-01',
      null,
    ]);
    expect(chartRows(rows, 0, 'bar').map((r) => r[0])).toEqual([
      '2025-03-01',
      '2025-01-01',
      null,
      '2025-02-01',
    ]);
    // Not dates: the statement's order stands.
    const countries = [['India'], ['China']];
    expect(chartRows(countries, 0, 'line')).toEqual(countries);
    expect(rows[0]![0]).toBe('2025-03-01'); // not mutated
  });
});
