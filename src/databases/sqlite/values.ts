/**
 * Turns SQLite values into JSON-safe {@link CellValue}s, following the same model as the other
 * engines (docs/operations.md, "How values reach you"). SQLite stores five kinds of value whatever a
 * column declares: INTEGER → number, or an exact decimal string beyond 2^53 (the statement is read
 * with better-sqlite3's safe integers, so no digit is lost on the way); REAL → number (a value JSON
 * cannot hold, such as Infinity, as its text); TEXT → the string as stored, which is how SQLite keeps
 * dates (ISO text, by convention) and decimals declared exactly; BLOB → `<binary N bytes>`.
 */
import type { CellValue } from '../../core/ports.js';

/** A value as better-sqlite3 returns it with safe integers on. */
export type SqliteRawValue = bigint | number | string | Buffer | Uint8Array | null;

const MAX_SAFE = BigInt(Number.MAX_SAFE_INTEGER);
const MIN_SAFE = BigInt(Number.MIN_SAFE_INTEGER);

/** One raw value → its cell. */
export function convertSqliteValue(value: SqliteRawValue | undefined): CellValue {
  if (value === null || value === undefined) return null;
  if (typeof value === 'bigint')
    return value >= MIN_SAFE && value <= MAX_SAFE ? Number(value) : value.toString();
  if (typeof value === 'number') return Number.isFinite(value) ? value : String(value);
  if (typeof value === 'string') return value;
  return `<binary ${value.byteLength} bytes>`;
}

/** Bytes a raw value counts against the result budget: the UTF-8 length of its text form, a blob's length. */
export function sqliteValueBytes(value: SqliteRawValue | undefined): number {
  if (value === null || value === undefined) return 0;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'bigint' || typeof value === 'number') return String(value).length;
  return value.byteLength;
}

/** The storage class of a raw value, the column type shown for an expression with no declared type. */
export function sqliteStorageClass(value: SqliteRawValue | undefined): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return 'integer';
  // With safe integers on, every INTEGER arrives as a bigint: a number is always a REAL.
  if (typeof value === 'number') return 'real';
  if (typeof value === 'string') return 'text';
  return 'blob';
}
