import { describe, expect, it } from 'vitest';
import { convertValue, isoTimestamp, OID, parseArrayLiteral } from './values.js';

describe('convertValue', () => {
  it('keeps exact numbers exact', () => {
    expect(convertValue('9007199254740993', OID.int8)).toBe('9007199254740993');
    expect(convertValue('-12345678901234567890.0123456789', OID.numeric)).toBe(
      '-12345678901234567890.0123456789',
    );
    expect(convertValue('$1,234.50', OID.money)).toBe('1234.50');
    expect(convertValue('-$92,233,720,368,547,758.08', OID.money)).toBe('-92233720368547758.08');
    expect(convertValue('($0.50)', OID.money)).toBe('-0.50');
    expect(convertValue('-$0.00', OID.money)).toBe('0.00');
    expect(convertValue('42', OID.int4)).toBe(42);
    expect(convertValue('-32768', OID.int2)).toBe(-32768);
    expect(convertValue('0.1', OID.float8)).toBe(0.1);
  });

  it('keeps non-finite floats as text (JSON has no NaN)', () => {
    expect(convertValue('NaN', OID.float8)).toBe('NaN');
    expect(convertValue('-Infinity', OID.float4)).toBe('-Infinity');
  });

  it('converts booleans, json, bytea and NULL', () => {
    expect(convertValue('t', OID.bool)).toBe(true);
    expect(convertValue('f', OID.bool)).toBe(false);
    expect(convertValue(null, OID.int4)).toBeNull();
    // json/jsonb: always the JSON text (same shape for every row; JSON null ≠ SQL NULL)
    expect(convertValue('{"a": [1, null, {"b": "c"}]}', OID.jsonb)).toBe('{"a": [1, null, {"b": "c"}]}');
    expect(convertValue('"just a string"', OID.json)).toBe('"just a string"');
    expect(convertValue('null', OID.jsonb)).toBe('null');
    expect(convertValue('12345678901234567890', OID.jsonb)).toBe('12345678901234567890');
    expect(convertValue('\\x', OID.bytea)).toBe('<binary 0 bytes>');
    expect(convertValue('\\xdeadbeef', OID.bytea)).toBe('<binary 4 bytes>');
    expect(convertValue('a\\000b\\\\', OID.bytea)).toBe('<binary 4 bytes>');
  });

  it('returns dates and timestamps as ISO text without shifting', () => {
    expect(convertValue('2024-02-29', OID.date)).toBe('2024-02-29');
    expect(convertValue('2024-02-29 13:14:15', OID.timestamp)).toBe('2024-02-29T13:14:15');
    expect(convertValue('2024-02-29 13:14:15.123456', OID.timestamp)).toBe('2024-02-29T13:14:15.123456');
    expect(convertValue('2024-02-29 13:14:15+00', OID.timestamptz)).toBe('2024-02-29T13:14:15+00:00');
    expect(convertValue('2024-02-29 13:14:15.5-03:30', OID.timestamptz)).toBe('2024-02-29T13:14:15.5-03:30');
    expect(convertValue('infinity', OID.timestamp)).toBe('infinity');
    expect(convertValue('0044-03-15 12:00:00 BC', OID.timestamp)).toBe('0044-03-15 12:00:00 BC');
    expect(isoTimestamp('1900-01-01 00:00:00+00:19:32')).toBe('1900-01-01T00:00:00+00:19:32');
  });

  it('converts arrays element by element', () => {
    expect(convertValue('{1,NULL,3}', 1007)).toEqual([1, null, 3]);
    expect(convertValue('{9007199254740993}', 1016)).toEqual(['9007199254740993']);
    expect(convertValue('{{1,2},{3,4}}', 1007)).toEqual([
      [1, 2],
      [3, 4],
    ]);
    expect(convertValue('{t,f}', 1000)).toEqual([true, false]);
    expect(convertValue('{"2024-01-01 10:00:00+00"}', 1185)).toEqual(['2024-01-01T10:00:00+00:00']);
    expect(convertValue('{"{\\"a\\": 1}"}', 3807)).toEqual(['{"a": 1}']); // jsonb text
    expect(convertValue('{}', 1009)).toEqual([]);
    // an unknown array type (enum array) is resolved through the lookup
    expect(convertValue('{sad,happy}', 99999, (oid) => (oid === 99999 ? 99998 : undefined))).toEqual([
      'sad',
      'happy',
    ]);
  });
});

describe('parseArrayLiteral', () => {
  it('handles quoting, escapes, NULL and the literal string NULL', () => {
    expect(parseArrayLiteral('{"a,b","say \\"hi\\"",NULL,"NULL","back\\\\slash"}')).toEqual([
      'a,b',
      'say "hi"',
      null,
      'NULL',
      'back\\slash',
    ]);
  });

  it('handles empty strings, braces inside quotes and explicit bounds', () => {
    expect(parseArrayLiteral('{"","{x}"}')).toEqual(['', '{x}']);
    expect(parseArrayLiteral('[0:1]={7,8}')).toEqual(['7', '8']);
    expect(parseArrayLiteral('{{a,b},{c,NULL}}')).toEqual([
      ['a', 'b'],
      ['c', null],
    ]);
  });

  it('keeps text that is not an array literal whole', () => {
    expect(parseArrayLiteral('(1,1),(0,0)')).toEqual(['(1,1),(0,0)']);
  });
});
