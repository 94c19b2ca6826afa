/**
 * Turns MySQL/MariaDB result values into JSON-safe {@link CellValue}s, following the same model as
 * the PostgreSQL dialect (docs/operations.md, "How values reach you"): small integers, floats and
 * YEAR → number; BIGINT and DECIMAL → exact decimal string (a float would lose digits); DATE →
 * `YYYY-MM-DD`; DATETIME → `YYYY-MM-DDTHH:MM:SS(.ffffff)` (no time zone shifting); TIMESTAMP → the
 * same with `+00:00` (the session runs with `time_zone = '+00:00'`); JSON → its text, always;
 * binary strings, BLOBs and geometry → `<binary N bytes>`; BIT → number; everything else → text.
 *
 * The driver is asked for every value as raw bytes (mysql2 `typeCast: false`) so that the decision
 * rests on the column's type and character set here, in one place, and the byte budget counts the
 * bytes the server sent.
 */
import type { CellValue } from '../../core/ports.js';

/** Column type codes of the client/server protocol (`enum_field_types` in MySQL's `field_types.h`). */
export const MYSQL_TYPE = {
  decimal: 0,
  tiny: 1,
  short: 2,
  long: 3,
  float: 4,
  double: 5,
  null: 6,
  timestamp: 7,
  longlong: 8,
  int24: 9,
  date: 10,
  time: 11,
  datetime: 12,
  year: 13,
  newdate: 14,
  varchar: 15,
  bit: 16,
  json: 245,
  newdecimal: 246,
  enum: 247,
  set: 248,
  tinyBlob: 249,
  mediumBlob: 250,
  longBlob: 251,
  blob: 252,
  varString: 253,
  string: 254,
  geometry: 255,
} as const;

/** Character set number of the `binary` pseudo character set: the column holds bytes, not text. */
export const BINARY_CHARSET = 63;

/** What a result column's protocol definition tells about its values. */
export interface MysqlField {
  name: string;
  /** Protocol type code ({@link MYSQL_TYPE}). */
  columnType: number;
  /** Character set number; {@link BINARY_CHARSET} for bytes. */
  characterSet: number;
  /** Column flags (`UNSIGNED` is 32). */
  flags: number;
}

const UNSIGNED_FLAG = 32;

const TYPE_NAMES: Record<number, string> = {
  [MYSQL_TYPE.decimal]: 'decimal',
  [MYSQL_TYPE.tiny]: 'tinyint',
  [MYSQL_TYPE.short]: 'smallint',
  [MYSQL_TYPE.long]: 'int',
  [MYSQL_TYPE.float]: 'float',
  [MYSQL_TYPE.double]: 'double',
  [MYSQL_TYPE.null]: 'null',
  [MYSQL_TYPE.timestamp]: 'timestamp',
  [MYSQL_TYPE.longlong]: 'bigint',
  [MYSQL_TYPE.int24]: 'mediumint',
  [MYSQL_TYPE.date]: 'date',
  [MYSQL_TYPE.time]: 'time',
  [MYSQL_TYPE.datetime]: 'datetime',
  [MYSQL_TYPE.year]: 'year',
  [MYSQL_TYPE.newdate]: 'date',
  [MYSQL_TYPE.varchar]: 'varchar',
  [MYSQL_TYPE.bit]: 'bit',
  [MYSQL_TYPE.json]: 'json',
  [MYSQL_TYPE.newdecimal]: 'decimal',
  [MYSQL_TYPE.enum]: 'enum',
  [MYSQL_TYPE.set]: 'set',
  [MYSQL_TYPE.tinyBlob]: 'tinyblob',
  [MYSQL_TYPE.mediumBlob]: 'mediumblob',
  [MYSQL_TYPE.longBlob]: 'longblob',
  [MYSQL_TYPE.blob]: 'blob',
  [MYSQL_TYPE.varString]: 'varchar',
  [MYSQL_TYPE.string]: 'char',
  [MYSQL_TYPE.geometry]: 'geometry',
};

const TEXTUAL = new Set<number>([
  MYSQL_TYPE.varchar,
  MYSQL_TYPE.varString,
  MYSQL_TYPE.string,
  MYSQL_TYPE.tinyBlob,
  MYSQL_TYPE.mediumBlob,
  MYSQL_TYPE.longBlob,
  MYSQL_TYPE.blob,
]);

/** True when the column carries bytes rather than text (BINARY, VARBINARY, BLOB, geometry). */
function isBinary(field: MysqlField): boolean {
  if (field.columnType === MYSQL_TYPE.geometry) return true;
  return TEXTUAL.has(field.columnType) && field.characterSet === BINARY_CHARSET;
}

/**
 * The type name shown for a result column: `bigint`, `decimal`, `datetime`, `text`, `varbinary`…
 * (text and binary strings told apart by the character set; `unsigned` appended for integers).
 */
export function mysqlTypeName(field: MysqlField): string {
  const blobLike =
    field.columnType === MYSQL_TYPE.tinyBlob ||
    field.columnType === MYSQL_TYPE.mediumBlob ||
    field.columnType === MYSQL_TYPE.longBlob ||
    field.columnType === MYSQL_TYPE.blob;
  if (blobLike) return field.characterSet === BINARY_CHARSET ? 'blob' : 'text';
  if (field.columnType === MYSQL_TYPE.varString || field.columnType === MYSQL_TYPE.varchar)
    return field.characterSet === BINARY_CHARSET ? 'varbinary' : 'varchar';
  if (field.columnType === MYSQL_TYPE.string)
    return field.characterSet === BINARY_CHARSET ? 'binary' : 'char';
  const name = TYPE_NAMES[field.columnType] ?? 'unknown';
  const integer =
    field.columnType === MYSQL_TYPE.tiny ||
    field.columnType === MYSQL_TYPE.short ||
    field.columnType === MYSQL_TYPE.long ||
    field.columnType === MYSQL_TYPE.int24 ||
    field.columnType === MYSQL_TYPE.longlong;
  return integer && (field.flags & UNSIGNED_FLAG) !== 0 ? `${name} unsigned` : name;
}

/**
 * Converts one raw value (the bytes the server sent in the text protocol, or null for SQL NULL).
 */
export function convertMysqlValue(raw: Buffer | null, field: MysqlField): CellValue {
  if (raw === null) return null;
  if (isBinary(field)) return `<binary ${raw.length} bytes>`;
  switch (field.columnType) {
    case MYSQL_TYPE.bit: {
      // BIT(n) arrives as n/8 bytes, most significant first; up to 53 bits fit a number exactly.
      let value = 0n;
      for (const byte of raw) value = (value << 8n) | BigInt(byte);
      return value <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(value) : value.toString();
    }
    default:
      break;
  }
  const text = raw.toString('utf8');
  switch (field.columnType) {
    case MYSQL_TYPE.tiny:
    case MYSQL_TYPE.short:
    case MYSQL_TYPE.int24:
    case MYSQL_TYPE.long:
    case MYSQL_TYPE.year:
      return Number(text);
    case MYSQL_TYPE.float:
    case MYSQL_TYPE.double: {
      const value = Number(text);
      // inf/nan cannot appear in MySQL, but a value JSON cannot hold must never reach a document.
      return Number.isFinite(value) ? value : text;
    }
    case MYSQL_TYPE.longlong:
    case MYSQL_TYPE.decimal:
    case MYSQL_TYPE.newdecimal:
      return text;
    case MYSQL_TYPE.datetime:
      return text.replace(' ', 'T');
    case MYSQL_TYPE.timestamp:
      // The zero date `0000-00-00 00:00:00` has no instant: kept as the server printed it.
      return text.startsWith('0000-') ? text : `${text.replace(' ', 'T')}+00:00`;
    default:
      return text;
  }
}
