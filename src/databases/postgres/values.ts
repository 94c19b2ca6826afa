/**
 * Turns PostgreSQL's text output into JSON-safe {@link CellValue}s. Both connectors (pg and PGlite)
 * ask their driver for the raw text of every value and convert it here, so the two engines can
 * never disagree on how a bigint or a timestamp looks.
 *
 * Rules (docs/operations.md, "How values reach you"): int2/int4/oid/float → number; int8,
 * numeric and money → exact decimal string (a float would silently lose digits; money without its
 * currency symbol or grouping: `-1234.56`); bool → boolean; json/jsonb → the JSON *text* as a
 * string, always (so every row of a column has the same shape, big numbers keep their digits, and
 * JSON `null` is the string `"null"`, distinct from SQL NULL → `null`);
 * date → `YYYY-MM-DD`; timestamp → `YYYY-MM-DDTHH:MM:SS(.ffffff)` (the server's text, no time zone
 * shifting); timestamptz → the same with its offset (`+00:00`); bytea → `<binary N bytes>`;
 * arrays → arrays of converted elements; everything else → its text.
 * The execution session sets `DateStyle = ISO`, `bytea_output = hex`, `lc_monetary = C`, so the
 * inputs below are stable.
 */

import { parse as parsePgArray } from 'postgres-array';
import type { CellValue } from '../../core/ports.js';

/** Well-known type oids (from PostgreSQL's `pg_type.dat`; identical on every server version). */
export const OID = {
  bool: 16,
  bytea: 17,
  int8: 20,
  int2: 21,
  int4: 23,
  oid: 26,
  json: 114,
  float4: 700,
  float8: 701,
  money: 790,
  date: 1082,
  timestamp: 1114,
  timestamptz: 1184,
  numeric: 1700,
  jsonb: 3802,
} as const;

/** Element type of the common built-in array types (array oid → element oid). */
export const ARRAY_ELEMENT_OIDS: ReadonlyMap<number, number> = new Map([
  [1000, OID.bool],
  [1001, OID.bytea],
  [1002, 18], // char
  [1003, 19], // name
  [1005, OID.int2],
  [1007, OID.int4],
  [1016, OID.int8],
  [1009, 25], // text
  [1014, 1042], // bpchar
  [1015, 1043], // varchar
  [1021, OID.float4],
  [1022, OID.float8],
  [1028, OID.oid],
  [791, OID.money],
  [1182, OID.date],
  [1183, 1083], // time
  [1115, OID.timestamp],
  [1185, OID.timestamptz],
  [1187, 1186], // interval
  [1231, OID.numeric],
  [199, OID.json],
  [3807, OID.jsonb],
  [2951, 2950], // uuid
]);

/** Finds the element type of an array type oid, or undefined when `oid` is not an array type. */
export type ElementOidLookup = (oid: number) => number | undefined;

/** Default lookup: the static map of built-in array types. */
export const builtinElementOid: ElementOidLookup = (oid) => ARRAY_ELEMENT_OIDS.get(oid);

/**
 * Converts one value from its PostgreSQL text form.
 * @param text the server's text output, or `null` for SQL NULL
 * @param typeOid the column's type oid (from the row description)
 * @param elementOf resolves array oids to their element oid (built-ins by default)
 */
export function convertValue(
  text: string | null,
  typeOid: number,
  elementOf: ElementOidLookup = builtinElementOid,
): CellValue {
  if (text === null) return null;
  const elementOid = elementOf(typeOid);
  if (elementOid !== undefined) {
    return convertArray(parseArrayLiteral(text), elementOid, elementOf);
  }
  switch (typeOid) {
    case OID.int2:
    case OID.int4:
    case OID.oid:
    case OID.float4:
    case OID.float8: {
      const value = Number(text);
      // NaN and ±Infinity have no JSON form: keep the server's spelling.
      return Number.isFinite(value) ? value : text;
    }
    case OID.bool:
      return text === 't' || text === 'true';
    case OID.money:
      return moneyDecimal(text);
    case OID.timestamp:
    case OID.timestamptz:
      return isoTimestamp(text);
    case OID.bytea:
      return `<binary ${byteaLength(text)} bytes>`;
    default:
      // int8, numeric, money, date (already ISO), time, interval, uuid, text, enums, …
      return text;
  }
}

function convertArray(items: ArrayItem[], elementOid: number, elementOf: ElementOidLookup): CellValue[] {
  return items.map((item) =>
    Array.isArray(item)
      ? convertArray(item, elementOid, elementOf)
      : convertValue(item, elementOid, elementOf),
  );
}

/**
 * money text in the C locale (`$1,234.56`, `-$1,234.56`, or `($1,234.56)` in some locales) → the
 * exact decimal `-1234.56`. Text in any other shape is kept as it is.
 */
export function moneyDecimal(text: string): string {
  const negative = /^\s*-|^\s*\(.*\)\s*$/.test(text);
  const digits = text.replace(/[^0-9.]/g, '');
  if (!/^\d+(\.\d+)?$/.test(digits)) return text;
  return negative && /[1-9]/.test(digits) ? `-${digits}` : digits;
}

/** `2024-01-02 03:04:05.123+05:30` → `2024-01-02T03:04:05.123+05:30`; `+00` → `+00:00`. */
export function isoTimestamp(text: string): string {
  const match = /^(\d{4,}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)(?:([+-]\d\d)(?::(\d\d))?(?::(\d\d))?)?$/.exec(
    text,
  );
  if (!match) return text; // infinity, BC dates, or a DateStyle we did not ask for
  const [, date, time, offsetHours, offsetMinutes, offsetSeconds] = match;
  let offset = '';
  if (offsetHours !== undefined) {
    offset = `${offsetHours}:${offsetMinutes ?? '00'}${offsetSeconds === undefined ? '' : `:${offsetSeconds}`}`;
  }
  return `${date}T${time}${offset}`;
}

function byteaLength(text: string): number {
  if (text.startsWith('\\x')) return (text.length - 2) / 2;
  // escape format (bytea_output = escape): count octal escapes as one byte each
  return text.replace(/\\\\|\\[0-7]{3}/g, '.').length;
}

/** A parsed array literal: elements are raw text (or null), nested for multi-dimensional arrays. */
export type ArrayItem = string | null | ArrayItem[];

/**
 * Parses PostgreSQL's array output (`{1,2,NULL}`, `{"a b","x\"y"}`, `{{1,2},{3,4}}`,
 * `[0:1]={a,b}`) into nested arrays of element text, through `postgres-array` (the parser `pg`
 * itself uses). Delimiter `,` only: every built-in array type but `box[]`, which is not converted.
 * Text that is not an array literal comes back as a one-element list of itself.
 */
export function parseArrayLiteral(text: string): ArrayItem[] {
  if (!/^(?:\[[^=]*\]=)?\{/.test(text)) return [text];
  return parsePgArray(text) as ArrayItem[];
}
