/** Pure display logic of web result tables (issue 14/16): exact numeric sort, grouping, chart values. */
import { describe, expect, it } from 'vitest';
import {
  chartValue,
  compareCells,
  compareNumeric,
  formatNumber,
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
