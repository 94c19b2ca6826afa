/**
 * Exact numbers for data files. DuckDB's readers take a CSV, TSV or JSON column of decimals
 * (`12345678901234.56789`, `0.1`) for DOUBLE: the first loses digits, and sums of the second are
 * off in the last place (`0.1 + 0.2`). Before a view is made of such a file, every column the
 * reader calls DOUBLE is read again as the text the file holds, and gets:
 * - `DECIMAL(p,s)` when every value is a plain decimal that fits (at most 38 digits): CSV and TSV
 *   values are then parsed from their text, exactly; JSON values, which the JSON reader can only
 *   give as doubles, only when no value has more than 15 significant digits (a double keeps
 *   those, so rounding it to the scale gives the written value back);
 * - DOUBLE, as before, when every value the double would change is not one: values of at most
 *   15 significant digits, or written as a double prints itself (`0.30000000000000004`, `1e+300`);
 * - otherwise, in CSV and TSV, VARCHAR: the text as written, never a number it is not. A JSON
 *   file holding such a value is refused with a configuration error saying which column, since
 *   its reader cannot give the written digits back at all.
 */
import { SqlrecallError } from '../../core/errors.js';

/** Runs one statement and returns its rows as JSON-friendly objects. */
export type CatalogQuery = (sql: string) => Promise<Record<string, unknown>[]>;

/** What a DOUBLE column of a data file becomes. */
export type ExactNumberType =
  | { kind: 'decimal'; precision: number; scale: number }
  | { kind: 'double' }
  | { kind: 'varchar' }
  | { kind: 'inexact' };

/** What the text of one DOUBLE column holds, gathered in one pass over the file. */
export interface NumberTextStats {
  /** Non-null values that are not plain decimals (an exponent, `inf`, `nan`, stray text). */
  notPlain: number;
  /** Most digits before the point of a plain value, leading zeros left out. */
  integerDigits: number;
  /** Most digits after the point of a plain value. */
  scale: number;
  /** Most significant digits of any value. */
  significant: number;
  /** Values that a double would change: more than 15 significant digits and not a double's own spelling. */
  inexact: number;
}

/** Most digits of a DECIMAL in DuckDB. */
const MAX_DECIMAL_DIGITS = 38;

/** Significant digits any double keeps exactly. */
const DOUBLE_DIGITS = 15;

/**
 * The type a DOUBLE column gets from what its text holds (see the module comment); `inexact`
 * means a JSON column no type can give back as written.
 */
export function exactNumberType(stats: NumberTextStats, textual: boolean): ExactNumberType {
  const precision = Math.max(1, stats.integerDigits + stats.scale);
  const decimal = { kind: 'decimal', precision, scale: stats.scale } as const;
  if (stats.notPlain === 0 && precision <= MAX_DECIMAL_DIGITS) {
    if (textual || stats.significant <= DOUBLE_DIGITS) return decimal;
  }
  if (stats.inexact === 0) return { kind: 'double' };
  return textual ? { kind: 'varchar' } : { kind: 'inexact' };
}

/** The SQL type of a decision (undefined: the column keeps DOUBLE). */
function sqlType(type: ExactNumberType): string | undefined {
  if (type.kind === 'decimal') return `DECIMAL(${type.precision},${type.scale})`;
  if (type.kind === 'varchar') return 'VARCHAR';
  return undefined;
}

const literal = (text: string): string => `'${text.replace(/'/g, "''")}'`;
const identifier = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** A plain decimal: digits with at most one point, an optional sign, spaces around. */
const PLAIN_DECIMAL = `'\\s*[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)\\s*'`;

/**
 * Aggregates of the shape of one column's text `v`, named `prefix_*` (`notplain`, `int`, `scale`),
 * over a projection holding `v`, its point's position `p` and its byte length `l`. Kept to one
 * pattern match and two lengths a value: a sign, a leading zero or a space counts as one more
 * integer digit, which only widens the DECIMAL.
 */
function shapeAggregates(v: string, p: string, l: string, prefix: string): string {
  return [
    `count(*) FILTER (WHERE ${v} IS NOT NULL AND NOT regexp_full_match(${v}, ${PLAIN_DECIMAL})) AS ${prefix}_notplain`,
    `coalesce(max(CASE ${p} WHEN 0 THEN ${l} ELSE ${p} - 1 END), 0) AS ${prefix}_int`,
    `coalesce(max(${l} - ${p}) FILTER (WHERE ${p} > 0), 0) AS ${prefix}_scale`,
  ].join(',\n');
}

/**
 * Every aggregate of {@link NumberTextStats} over the trimmed text `t` of one column, named
 * `prefix_*`: its shape, and its significant digits (`sig`, `inexact`), which cost more and are
 * only needed when the shape alone does not settle the type.
 */
function statsAggregates(t: string, prefix: string): string {
  const mantissa = `regexp_replace(lower(ltrim(${t}, '+-')), 'e.*$', '')`;
  const significant = `length(trim(replace(${mantissa}, '.', ''), '0'))`;
  const unsigned = `ltrim(${t}, '+-0')`;
  return [
    shapeAggregates(t, `instr(${unsigned}, '.')`, `strlen(${unsigned})`, prefix),
    `coalesce(max(${significant}), 0) AS ${prefix}_sig`,
    `count(*) FILTER (WHERE ${t} IS NOT NULL AND ${significant} > ${DOUBLE_DIGITS}
       AND TRY_CAST(TRY_CAST(${t} AS DOUBLE) AS VARCHAR) IS DISTINCT FROM ${t}) AS ${prefix}_inexact`,
  ].join(',\n');
}

function statsOf(row: Record<string, unknown>, prefix: string): NumberTextStats {
  const n = (key: string) => Number(row[`${prefix}_${key}`] ?? 0);
  return {
    notPlain: n('notplain'),
    integerDigits: n('int'),
    scale: n('scale'),
    significant: n('sig'),
    inexact: n('inexact'),
  };
}

/** A reader's columns and their types, as DESCRIBE gives them. */
async function describe(query: CatalogQuery, reader: string): Promise<{ name: string; type: string }[]> {
  const rows = await query(`DESCRIBE SELECT * FROM ${reader}`);
  return rows.map((row) => ({ name: String(row.column_name), type: String(row.column_type) }));
}

const isFloating = (type: string): boolean => type === 'DOUBLE' || type === 'FLOAT';

/**
 * The SELECT a CSV or TSV file's view runs: `reader(extra)` is the file's reader with extra named
 * arguments (`types = {…}`). DOUBLE columns are read once as text to choose their type.
 */
export async function exactCsvSelect(
  query: CatalogQuery,
  reader: (extra: string) => string,
): Promise<string> {
  const floating = (await describe(query, reader(''))).filter((column) => isFloating(column.type));
  if (floating.length === 0) return `SELECT * FROM ${reader('')}`;
  const asText = `types = {${floating.map((column) => `${literal(column.name)}: 'VARCHAR'`).join(', ')}}`;
  const source = reader(asText);
  const decide = async (select: string, aggregates: string[]) => {
    const [row = {}] = await query(`SELECT ${aggregates.join(',\n')} FROM (SELECT ${select} FROM ${source})`);
    return floating.map((_, i) => exactNumberType(statsOf(row, `c${i}`), true));
  };
  // The shape first, in one cheap pass; the digits only when a column is not all plain decimals.
  const shaped = await decide(
    floating
      .map((column, i) => {
        const v = identifier(column.name);
        return `${v} AS v${i}, instr(${v}, '.') AS p${i}, strlen(${v}) AS l${i}`;
      })
      .join(', '),
    floating.map((_, i) => shapeAggregates(`v${i}`, `p${i}`, `l${i}`, `c${i}`)),
  );
  const decided = shaped.every((type) => type.kind === 'decimal')
    ? shaped
    : await decide(
        floating.map((column, i) => `trim(${identifier(column.name)}) AS t${i}`).join(', '),
        floating.map((_, i) => statsAggregates(`t${i}`, `c${i}`)),
      );
  const types = floating.flatMap((column, i) => {
    const type = sqlType(decided[i]!);
    return type ? [`${literal(column.name)}: ${literal(type)}`] : [];
  });
  return types.length === 0
    ? `SELECT * FROM ${reader('')}`
    : `SELECT * FROM ${reader(`types = {${types.join(', ')}}`)}`;
}

/**
 * The SELECT a JSON file's view runs. The JSON reader parses numbers as doubles, so the written
 * digits of each DOUBLE column are read from the raw objects (`rawObjects`, a
 * `read_json_objects` call giving a `json` column), by key at any depth: a nested key of the same
 * name only adds values to judge, so it can make the verdict stricter, never looser.
 * @throws SqlrecallError `config` when a column holds a decimal no type gives back as written
 */
export async function exactJsonSelect(
  query: CatalogQuery,
  reader: string,
  rawObjects: string,
  fileName: string,
): Promise<string> {
  const floating = (await describe(query, reader)).filter((column) => isFloating(column.type));
  const casts: string[] = [];
  for (const column of floating) {
    const key = JSON.stringify(column.name).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const pattern = literal(`${key}\\s*:\\s*(-?[0-9][0-9.eE+-]*)`);
    const [row = {}] = await query(
      `SELECT ${statsAggregates('t', 'c')}, count(t) AS c_found FROM (
         SELECT unnest(regexp_extract_all(json, ${pattern}, 1)) AS t FROM ${rawObjects})`,
    );
    // A key written with escapes the pattern does not match: nothing to judge, it stays DOUBLE.
    if (Number(row.c_found ?? 0) === 0) continue;
    const type = exactNumberType(statsOf(row, 'c'), false);
    if (type.kind === 'inexact')
      throw new SqlrecallError(
        'config',
        `${fileName}: the numbers of "${column.name}" have more digits than DuckDB's JSON reader keeps (it reads them as doubles), so they cannot be shown exactly.`,
        {
          details: {
            hint: 'Write these numbers as JSON strings ("12345678901234.56789"), or give the data as CSV or Parquet.',
          },
        },
      );
    const sql = sqlType(type);
    if (sql) casts.push(`CAST(${identifier(column.name)} AS ${sql}) AS ${identifier(column.name)}`);
  }
  return casts.length === 0
    ? `SELECT * FROM ${reader}`
    : `SELECT * REPLACE (${casts.join(', ')}) FROM ${reader}`;
}
