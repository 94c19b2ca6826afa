/**
 * Renders chosen tables for the prompt in the same one-line format as `renderTable` (it is used
 * underneath), with two additions: a subset of columns (`… +N more columns`) and value hints shown
 * like enum labels, `status text['delivered','pending']`, so the model copies the exact spelling.
 * Values are untrusted: ones that could break out of the schema block are never shown.
 */
import type { Column, Table } from '../core/schema.js';
import { renderTable } from '../sql/render.js';
import type { ValueHint } from './documents.js';

/** How one table is shown. */
export interface TableView {
  table: Table;
  hints: readonly ValueHint[];
  /** Columns kept (catalog names); `undefined` keeps all. */
  keep?: ReadonlySet<string>;
  /** Most values shown per hinted column (0 hides sampled values; enum labels are cut to this too). */
  maxValues: number;
  /** Only these columns show sampled values (`undefined`: all hinted columns). */
  valueColumns?: ReadonlySet<string>;
}

/** A value is shown only when it cannot end the schema block, a fence or a comment. */
export function isDisplayableValue(value: string): boolean {
  return !/[<>`\u0000-\u001f\u007f]|\*\/|\/\*|--/.test(value) && value.trim().length > 0;
}

/** Column names that announce a category even in tiny tables (`status`, `payment_method`, …). */
const CATEGORY_NAME =
  /(^|_)(status|state|type|kind|category|segment|method|mode|level|tier|class|gender|currency|channel|stage|role|priority|grade|flag|unit|day|weekday|season)s?$/i;

/**
 * Whether a sampled hint is shown in the prompt (every hint still counts for lexical matching):
 * short values (≤ 25 characters on average) that repeat in the sample (distinct ≤ 70% of the rows
 * sampled), or any short values in a column named like a category.
 */
export function isPromptHint(hint: ValueHint): boolean {
  if (hint.source === 'enum') return false; // enum labels are already part of the column type
  if (hint.values.length === 0) return false;
  const avg = hint.values.reduce((sum, v) => sum + v.length, 0) / hint.values.length;
  if (avg > 25) return false;
  if (CATEGORY_NAME.test(hint.column)) return true;
  return hint.sampledRows !== null && hint.values.length <= Math.max(2, 0.7 * hint.sampledRows);
}

/** One line for `view` (see the module comment). */
export function renderView(view: TableView): string {
  const { table } = view;
  const keep = view.keep;
  const hintByColumn = new Map(view.hints.filter(isPromptHint).map((h) => [h.column, h]));
  const columns: Column[] = [];
  for (const column of table.columns) {
    if (keep && !keep.has(column.name)) continue;
    const hint = hintByColumn.get(column.name);
    const showValues =
      hint && view.maxValues > 0 && (view.valueColumns === undefined || view.valueColumns.has(column.name));
    if (showValues) {
      const values = hint.values.filter(isDisplayableValue);
      columns.push(values.length > 0 ? { ...column, enumValues: values } : column);
    } else {
      columns.push(column);
    }
  }
  const kept = new Set(columns.map((c) => c.name));
  const pruned: Table = {
    ...table,
    columns,
    primaryKey: table.primaryKey.every((c) => kept.has(c)) ? table.primaryKey : [],
    foreignKeys: table.foreignKeys.filter((fk) => fk.columns.every((c) => kept.has(c))),
    uniqueIndexes: table.uniqueIndexes.filter((index) => index.columns.every((c) => kept.has(c))),
  };
  let line = renderTable(pruned, { maxEnumValues: view.maxValues > 0 ? view.maxValues : 3 });
  const hidden = table.columns.length - columns.length;
  if (hidden > 0) line += ` (+${hidden} more column${hidden === 1 ? '' : 's'} not shown)`;
  return line;
}

/** Ranking inputs of {@link rankColumns}. */
export interface ColumnSignals {
  /** Lexical points per matched column. */
  matched: ReadonlyMap<string, number>;
  /** Columns used by joins to other chosen tables. */
  joins: ReadonlySet<string>;
}

/**
 * Columns of `table` in keep-priority order: primary key, declared FK and join columns, matched
 * columns (by points), columns with value hints, then the rest in catalog order.
 */
export function rankColumns(table: Table, hints: readonly ValueHint[], signals: ColumnSignals): string[] {
  const fkColumns = new Set(table.foreignKeys.flatMap((fk) => fk.columns));
  const hinted = new Set(hints.map((h) => h.column));
  const priority = (column: Column): number => {
    if (table.primaryKey.includes(column.name)) return 1000;
    if (signals.joins.has(column.name) || fkColumns.has(column.name)) return 900;
    const points = signals.matched.get(column.name);
    if (points !== undefined) return 500 + points;
    if (hinted.has(column.name)) return 100;
    return 0;
  };
  return table.columns
    .map((column, position) => ({ name: column.name, p: priority(column), position }))
    .sort((a, b) => b.p - a.p || a.position - b.position)
    .map((c) => c.name);
}
