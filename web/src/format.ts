/**
 * Pure display logic of result tables: which columns are numeric, exact numeric
 * comparison of decimal strings (int8/numeric/money arrive as exact strings — never parsed to a
 * float, which would make …993 and …992 equal), locale grouping for display only, and the value a
 * chart plots for a money or numeric cell.
 */

/** A result value as the API sends it. */
export type Value = string | number | boolean | null | Value[] | { [key: string]: Value };

/** True when values of this PostgreSQL type are numbers (right-aligned, numeric sort, chartable). */
export { isNumericType } from '../../src/core/pg-types.js';

/** An exact decimal: optional sign, digits, optional fraction. */
const DECIMAL = /^([-+]?)(\d*)(?:\.(\d*))?$/;

/**
 * Parses a decimal string (money with grouping commas or a currency sign is tolerated) into sign,
 * integer digits and fraction digits; undefined when it is not a finite decimal number.
 */
function parseDecimal(raw: string): { neg: boolean; int: bigint; frac: string } | undefined {
  const text = raw
    .trim()
    .replace(/[,\s]/g, '')
    .replace(/^(-?)[^\d.\-+]+/, '$1');
  const m = DECIMAL.exec(text);
  if (!m || (m[2] === '' && (m[3] ?? '') === '')) return undefined;
  const frac = (m[3] ?? '').replace(/0+$/, '');
  const int = BigInt(m[2] || '0');
  const neg = m[1] === '-' && (int !== 0n || frac !== '');
  return { neg, int, frac };
}

/** Compares two non-negative decimals given as integer part + fraction digits. */
function compareMagnitude(a: { int: bigint; frac: string }, b: { int: bigint; frac: string }): number {
  if (a.int !== b.int) return a.int < b.int ? -1 : 1;
  const len = Math.max(a.frac.length, b.frac.length);
  const fa = a.frac.padEnd(len, '0');
  const fb = b.frac.padEnd(len, '0');
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** The number a cell holds as a decimal string, or undefined (scientific notation becomes plain digits). */
function decimalText(v: Value): string | undefined {
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return undefined;
    const s = String(v);
    return /e/i.test(s) ? v.toFixed(20).replace(/\.?0+$/, '') : s;
  }
  return typeof v === 'string' ? v : undefined;
}

/**
 * Compares two numeric cells exactly (BigInt on the integer part, digit-wise on the fraction).
 * Returns undefined when either is not a decimal number (the caller falls back to text order).
 */
export function compareNumeric(a: Value, b: Value): number | undefined {
  const ta = decimalText(a);
  const tb = decimalText(b);
  if (ta === undefined || tb === undefined) return undefined;
  const da = parseDecimal(ta);
  const db = parseDecimal(tb);
  if (!da || !db) return undefined;
  if (da.neg !== db.neg) return da.neg ? -1 : 1;
  const m = compareMagnitude(da, db);
  return da.neg ? -m : m;
}

/** Text of a non-null cell: JSON text for arrays/objects, the string itself otherwise. */
export function cellText(v: Value): string {
  if (v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/**
 * Sort order of two cells of one column, ascending: NULLs last (as PostgreSQL's default ASC),
 * numbers exactly by value when the column is numeric (or both cells are JS numbers; any
 * non-number after the numbers), else text
 * order by the locale collation with numeric runs compared as numbers.
 */
export function compareCells(a: Value, b: Value, numeric: boolean): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  if (numeric || (typeof a === 'number' && typeof b === 'number')) {
    const n = compareNumeric(a, b);
    if (n !== undefined) return n;
    // A numeric column with a non-number (NaN, text): numbers first, so the order stays total.
    const na = compareNumeric(a, a) !== undefined;
    const nb = compareNumeric(b, b) !== undefined;
    if (na !== nb) return na ? -1 : 1;
  }
  return cellText(a).localeCompare(cellText(b), undefined, { numeric: true });
}

/**
 * Sorts rows by one column (stable; NULLs last in both directions, as a person expects).
 * @param dir 1 ascending, -1 descending
 */
export function sortRows<R extends Value[]>(rows: R[], col: number, dir: 1 | -1, numeric: boolean): R[] {
  return rows
    .map((r, i) => [r, i] as const)
    .sort(([a, ia], [b, ib]) => {
      const va = a[col] ?? null;
      const vb = b[col] ?? null;
      if (va === null || vb === null) return va === vb ? ia - ib : va === null ? 1 : -1;
      return dir * compareCells(va, vb, numeric) || ia - ib;
    })
    .map(([r]) => r);
}

/**
 * Display text of a numeric cell with the locale's digit grouping, keeping every digit (no float
 * rounding): the integer part is grouped through BigInt, the fraction is kept as sent.
 * Non-decimal text (NaN, Infinity) is returned unchanged.
 * @param locale a BCP 47 tag; default the browser's
 */
export function formatNumber(v: Value, locale?: string): string {
  const text = decimalText(v);
  if (text === undefined) return cellText(v);
  const d = parseDecimal(text);
  const m = /^\s*[-+]?[^\d.]*(\d*)(?:\.(\d*))?/.exec(text.replace(/,/g, ''));
  if (!d || !m) return cellText(v);
  const decimalSep =
    new Intl.NumberFormat(locale).formatToParts(1.5).find((p) => p.type === 'decimal')?.value ?? '.';
  const grouped = new Intl.NumberFormat(locale).format(d.int);
  const fraction = m[2] ?? '';
  const negative = /^\s*-/.test(text) && (d.int !== 0n || /[1-9]/.test(fraction));
  return `${negative ? '-' : ''}${grouped}${fraction ? decimalSep + fraction : ''}`;
}

/**
 * The number a chart plots for a cell: money and numeric strings become numbers (a currency sign
 * or grouping commas are dropped); NULL or non-numeric text becomes null (a gap, never NaN).
 */
export function chartValue(v: Value): number | null {
  if (v === null) return null;
  if (typeof v === 'number') return Number.isFinite(v) ? v : null;
  if (typeof v !== 'string') return null;
  const text = v
    .trim()
    .replace(/[,\s]/g, '')
    .replace(/^(-?)[^\d.\-+]+/, '$1');
  if (!/^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text)) return null;
  return Number(text);
}

/** Integer PostgreSQL types (a column of these can hold identifiers or years). */
const INTEGER_TYPES = /^(int[248]|smallint|integer|bigint|smallserial|serial|bigserial)$/;

/**
 * True when an integer column names things rather than counting them (`id`, `customer_id`,
 * `year`, `order_year`, `zip_code`): its values are shown without digit grouping ("1455", not
 * "1,455"), as identifiers and years are written.
 */
export function isIdentifierColumn(name: string, type: string): boolean {
  if (!INTEGER_TYPES.test(type)) return false;
  return /(^|_)(id|year|yr|code|no|number|zip)$/i.test(name) || /Id$/.test(name);
}

/** `YYYY-MM-DD` at the start of a cell (a date, timestamp or timestamptz as the API sends it). */
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;

/**
 * The rows a line chart draws, in x order when every non-null x is a date or timestamp (ISO text
 * sorts as time): a line over dates reads left to right in time whatever the statement's ORDER BY
 * was. Rows with another x, or bar charts, keep their order. Never mutates `rows`.
 * @param xi index of the x column
 */
export function chartRows<R extends Value[]>(rows: readonly R[], xi: number, type: 'bar' | 'line'): R[] {
  if (type !== 'line' || xi < 0) return [...rows];
  const xs = rows.map((r) => r[xi]);
  const dated = xs.filter((x) => x !== null && x !== undefined);
  if (dated.length === 0 || !dated.every((x) => typeof x === 'string' && ISO_DATE.test(x))) return [...rows];
  return rows
    .map((r, i) => [r, i] as const)
    .sort(([a, ia], [b, ib]) => {
      const xa = a[xi] as string | null;
      const xb = b[xi] as string | null;
      if (xa === null || xb === null) return xa === xb ? ia - ib : xa === null ? 1 : -1;
      return xa < xb ? -1 : xa > xb ? 1 : ia - ib;
    })
    .map(([r]) => r);
}
