/**
 * Turns DuckDB result values into JSON-safe {@link CellValue}s, following the same model as the
 * PostgreSQL dialect (docs/operations.md, "How values reach you"): small integers and floats →
 * number (NaN and infinities as text; a REAL as its shortest decimal); BIGINT, HUGEINT and their unsigned kin, and DECIMAL → exact
 * decimal string; DATE → `YYYY-MM-DD`; TIMESTAMP → `YYYY-MM-DDTHH:MM:SS(.ffffff)`, TIMESTAMPTZ →
 * the same with `+00:00` (the client prints it in UTC); INTERVAL, TIME, UUID, ENUM, BIT and JSON →
 * their text; BLOB and GEOMETRY → `<binary N bytes>`; LIST and ARRAY → arrays, STRUCT → objects,
 * MAP → `[{key, value}]`, UNION → `{tag, value}`, each part converted the same way.
 *
 * The client's own JSON converter does most of it (it never hands out a BigInt, which
 * `JSON.stringify` cannot write); the types it would print differently from the model are
 * converted here first, nested values included.
 */
import type {
  DuckDBBlobValue,
  DuckDBDateValue,
  DuckDBGeometryValue,
  DuckDBType,
  DuckDBValueConverter,
} from '@duckdb/node-api';
import type { CellValue } from '../../core/ports.js';
import type { DuckdbModule } from './load.js';

/**
 * `2024-04-01 10:00:00.5` → `2024-04-01T10:00:00.5`; with `zoned`, an offset `+00` → `+00:00`.
 * Texts without a date in front (`infinity`, a date before the common era) are kept as printed.
 */
export function isoTimestamp(text: string, zoned = false): string {
  if (!/^\d{4,}-\d\d-\d\d \d/.test(text)) return text;
  const iso = text.replace(' ', 'T');
  return zoned
    ? iso.replace(
        /([+-]\d\d)(?::?(\d\d))?$/,
        (_, hours: string, minutes?: string) => `${hours}:${minutes ?? '00'}`,
      )
    : iso;
}

/**
 * A REAL (32-bit float) as the shortest decimal that reads back as the same float, as PostgreSQL
 * prints a `real`: the float 4.3 is 4.3, not the 4.300000190734863 of its exact double. NaN and
 * the infinities as text.
 */
export function shortestFloat32(value: number): number | string {
  if (!Number.isFinite(value)) return String(value);
  for (let digits = 1; digits < 9; digits += 1) {
    const candidate = Number(value.toPrecision(digits));
    if (Math.fround(candidate) === value) return candidate;
  }
  return Number(value.toPrecision(9));
}

/**
 * The converter of every result value (`DuckDBDataChunk.convertColumnValues`): see the module
 * comment. Never throws for a value of a known type; SQL NULL is null.
 */
export function cellConverter(duckdb: DuckdbModule): DuckDBValueConverter<CellValue> {
  const T = duckdb.DuckDBTypeId;
  const json = duckdb.JsonDuckDBValueConverter as unknown as DuckDBValueConverter<CellValue>;
  const convert: DuckDBValueConverter<CellValue> = (value, type) => {
    if (value === null || value === undefined) return null;
    switch (type.typeId) {
      case T.BLOB:
      case T.GEOMETRY:
        return `<binary ${(value as DuckDBBlobValue | DuckDBGeometryValue).bytes.length} bytes>`;
      case T.DATE: {
        const date = value as DuckDBDateValue;
        if (date.isFinite) return String(date);
        return date.days > 0 ? 'infinity' : '-infinity';
      }
      case T.TIMESTAMP:
      case T.TIMESTAMP_S:
      case T.TIMESTAMP_MS:
      case T.TIMESTAMP_NS:
        return isoTimestamp(String(value));
      case T.TIMESTAMP_TZ:
        return isoTimestamp(String(value), true);
      case T.INTERVAL:
        return String(value);
      case T.FLOAT:
        return shortestFloat32(value as number);
      default:
        return json(value, type, convert);
    }
  };
  return convert;
}

/** The type name shown for a result column: DuckDB's own spelling (`DECIMAL(12,2)`, `INTEGER[]`), or its alias (`JSON`). */
export function duckdbTypeName(type: DuckDBType): string {
  return type.alias ?? type.toString();
}

/** The UTF-8 size of a cell's text form, as the byte budget counts it (`null` is 0). */
export function cellBytes(cell: CellValue): number {
  if (cell === null) return 0;
  if (typeof cell === 'string') return Buffer.byteLength(cell, 'utf8');
  if (typeof cell === 'number' || typeof cell === 'boolean') return String(cell).length;
  return Buffer.byteLength(JSON.stringify(cell), 'utf8');
}
