/**
 * Chooses a chart for a result (issue 6): exactly one category or date column plus one or more
 * numeric columns → a line chart over a date axis, a bar chart over categories. Otherwise none.
 */
import type { QueryResult } from '../core/ports.js';

/** A chart the UI draws with Chart.js. */
export interface ChartSpec {
  type: 'bar' | 'line';
  /** The category or date column (x axis). */
  x: string;
  /** Numeric columns, one series each. */
  series: string[];
}

/**
 * Type names (as the server reports them) that are numbers. int8, numeric and money values arrive
 * as exact decimal strings (money without its currency symbol: `-1234.56`, issue 14), which the
 * chart reads with `Number()`.
 */
const NUMERIC = new Set([
  'int2',
  'int4',
  'int8',
  'smallint',
  'integer',
  'bigint',
  'numeric',
  'decimal',
  'float4',
  'float8',
  'real',
  'double precision',
  'money',
]);

/** Type names that are dates or times. */
const DATES = new Set([
  'date',
  'timestamp',
  'timestamptz',
  'timestamp without time zone',
  'timestamp with time zone',
]);

/** Most points a chart is drawn for (beyond it the table says more). */
export const MAX_CHART_POINTS = 500;

const baseType = (type: string) =>
  type
    .toLowerCase()
    .replace(/\(.*\)$/, '')
    .trim();

/** The chart for `result`, or null when none fits. */
export function chartFor(result: QueryResult | null): ChartSpec | null {
  if (!result || result.rowCount < 2 || result.rowCount > MAX_CHART_POINTS) return null;
  const numeric = result.columns.filter((c) => NUMERIC.has(baseType(c.type)));
  const others = result.columns.filter((c) => !NUMERIC.has(baseType(c.type)));
  if (numeric.length === 0 || others.length !== 1) return null;
  const x = others[0]!;
  if (baseType(x.type) === 'bool' || baseType(x.type).endsWith('[]') || baseType(x.type).startsWith('json'))
    return null;
  return {
    type: DATES.has(baseType(x.type)) ? 'line' : 'bar',
    x: x.name,
    series: numeric.map((c) => c.name),
  };
}
