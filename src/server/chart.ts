/**
 * Chooses a chart for a result: exactly one category or date column plus one or more
 * numeric columns → a line chart over a date axis, a bar chart over categories. Otherwise none.
 */
import { baseTypeName, isNumericType } from '../core/pg-types.js';
import type { QueryResult } from '../core/ports.js';

/** A chart the UI draws with Chart.js. */
export interface ChartSpec {
  type: 'bar' | 'line';
  /** The category or date column (x axis). */
  x: string;
  /** Numeric columns, one series each. */
  series: string[];
}

const DATES = new Set([
  'date',
  'timestamp',
  'timestamptz',
  'timestamp without time zone',
  'timestamp with time zone',
]);

/** Most points a chart is drawn for (beyond it the table says more). */
export const MAX_CHART_POINTS = 500;

const baseType = baseTypeName;

/** The chart for `result`, or null when none fits. */
export function chartFor(result: QueryResult | null): ChartSpec | null {
  if (!result || result.rowCount < 2 || result.rowCount > MAX_CHART_POINTS) return null;
  const numeric = result.columns.filter((c) => isNumericType(c.type));
  const others = result.columns.filter((c) => !isNumericType(c.type));
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
