/**
 * Execution-accuracy scoring, written for sqlrecall after defog's sql-eval (`eval/eval.py`:
 * `compare_df`, `subset_df`, `get_all_minimal_queries`), with the rules below stated one by one.
 *
 * A prediction is correct when its result equals the result of SOME gold alternative:
 * 1. **Alternatives.** The gold field is split on top-level `;` (each piece counts) and every `{a, b}`
 *    group is expanded to every non-empty subset ({@link expandGoldQuery} `'all'`), as
 *    sql-eval's `get_all_minimal_queries` does. The first alternative that matches wins.
 * 2. **Column names are ignored**, and so is column order: gold columns are matched to prediction
 *    columns by their values (sql-eval sorts columns by name, then by values in `subset_df`).
 * 3. **Extra prediction columns are allowed** when every gold column matches a distinct prediction
 *    column (sql-eval's `subset_df`: "the gold result is a subset of the generated result"). The
 *    prediction is projected onto the matched columns and then compared as below.
 * 4. **Rows are a multiset** (duplicates count) unless the gold query has a top-level ORDER BY
 *    ({@link goldIsOrdered}); then the row sequence must be equal, position by position. This is
 *    stricter than sql-eval on duplicates (it drops duplicate rows before comparing) and on order
 *    (it guesses order-sensitivity from the category and the words order/sort/arrange in the
 *    question); the issue asks for a multiset and the gold SQL says exactly when order matters.
 * 5. **Numbers** (JS numbers, and values of numeric-typed columns: int2/int4/int8/oid/float4/float8/
 *    numeric/money, which arrive as strings) compare with `|a − b| ≤ max(1e-5 · max(|a|, |b|), 1e-8)`:
 *    the defaults of pandas' `assert_series_equal` / `assert_frame_equal` (rtol 1e-5, atol 1e-8)
 *    that sql-eval's subset check relies on. So `5`, `'5'` (bigint) and `5.000001` are equal.
 * 6. **NULL equals NULL** (pandas' comparison treats missing values in the same place as equal).
 * 7. **Empty results:** an empty gold result matches only an empty prediction with the same number
 *    of columns (sql-eval: `subset_df` returns False for an empty gold frame, `compare_df` needs the
 *    same shape), so "SELECT nothing" can never pass for an empty answer by accident of shape.
 * 8. A prediction cut by the row cap (`truncated`) is wrong: its full result is unknown.
 * Other values compare by their canonical text (booleans as `true`/`false`, JSON as sorted JSON).
 */
import type { CellValue, ResultColumn } from '../core/ports.js';
import { loadSqlParser, parseResult } from '../sql/parse-tree.js';
import { expandGoldQuery, splitGoldQueries } from './gold.js';

/** Relative tolerance for numbers (pandas `rtol` default, used by sql-eval). */
export const NUMBER_RELATIVE_TOLERANCE = 1e-5;
/** Absolute tolerance for numbers near zero (pandas `atol` default). */
export const NUMBER_ABSOLUTE_TOLERANCE = 1e-8;
/** Most rows for the quadratic tolerant matching fallback (beyond it only sorted comparison). */
const MAX_ROWS_FOR_PAIRING = 3000;
/** Most column mappings tried when several prediction columns have the same values. */
const MAX_MAPPINGS = 200;

/** A result as scored: columns (names unused) and rows. */
export interface ResultTable {
  columns: ResultColumn[];
  rows: CellValue[][];
  /** True when the row cap cut the result. */
  truncated?: boolean;
}

/** Outcome of comparing one gold result with a prediction. */
export interface Comparison {
  match: boolean;
  /** Why it does not match (one short sentence), when it does not. */
  why?: string;
}

const NUMERIC_TYPES = new Set(['int2', 'int4', 'int8', 'oid', 'float4', 'float8', 'numeric', 'money']);

/** A cell reduced to what comparison needs. */
type Norm = { k: 'null' } | { k: 'num'; v: number } | { k: 'text'; v: string };

function normalizeCell(value: CellValue, numericColumn: boolean): Norm {
  if (value === null) return { k: 'null' };
  if (typeof value === 'number') return { k: 'num', v: value };
  if (typeof value === 'boolean') return { k: 'text', v: value ? 'true' : 'false' };
  if (typeof value === 'string') {
    if (numericColumn) {
      const n = Number(value.replace(/[$,]/g, ''));
      if (!Number.isNaN(n) || value === 'NaN') return { k: 'num', v: n };
    }
    return { k: 'text', v: value };
  }
  return { k: 'text', v: canonicalJson(value) };
}

function canonicalJson(value: CellValue): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k] ?? null)}`).join(',')}}`;
}

/** True when two numbers are equal within the tolerance (NaN equals NaN, like pandas). */
export function numbersClose(a: number, b: number): boolean {
  if (Number.isNaN(a) || Number.isNaN(b)) return Number.isNaN(a) && Number.isNaN(b);
  if (a === b) return true;
  if (!Number.isFinite(a) || !Number.isFinite(b)) return false;
  const scale = Math.max(Math.abs(a), Math.abs(b));
  return Math.abs(a - b) <= Math.max(NUMBER_RELATIVE_TOLERANCE * scale, NUMBER_ABSOLUTE_TOLERANCE);
}

function cellsEqual(a: Norm, b: Norm): boolean {
  if (a.k === 'null' || b.k === 'null') return a.k === b.k;
  if (a.k === 'num' && b.k === 'num') return numbersClose(a.v, b.v);
  if (a.k === 'num' || b.k === 'num') {
    // A number against text: equal when the text is that number (e.g. count in a text column).
    const text = a.k === 'text' ? a.v : (b as { v: string }).v;
    const num = a.k === 'num' ? a.v : (b as { v: number }).v;
    const parsed = text.trim() === '' ? Number.NaN : Number(text);
    return !Number.isNaN(parsed) && numbersClose(parsed, num);
  }
  return a.v === b.v;
}

const KIND_ORDER = { null: 0, num: 1, text: 2 } as const;

function compareCells(a: Norm, b: Norm): number {
  if (a.k !== b.k) return KIND_ORDER[a.k] - KIND_ORDER[b.k];
  if (a.k === 'num' && b.k === 'num') {
    if (Number.isNaN(a.v)) return Number.isNaN(b.v) ? 0 : 1;
    if (Number.isNaN(b.v)) return -1;
    return a.v - b.v;
  }
  if (a.k === 'text' && b.k === 'text') return a.v < b.v ? -1 : a.v > b.v ? 1 : 0;
  return 0;
}

function compareRows(a: Norm[], b: Norm[]): number {
  for (let i = 0; i < a.length; i += 1) {
    const c = compareCells(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return 0;
}

const rowsEqual = (a: Norm[], b: Norm[]): boolean => a.every((cell, i) => cellsEqual(cell, b[i]!));

function normalizeTable(table: ResultTable): Norm[][] {
  const numeric = table.columns.map((c) => NUMERIC_TYPES.has(c.type));
  return table.rows.map((row) => row.map((value, i) => normalizeCell(value, numeric[i] ?? false)));
}

/** Multiset equality with tolerance: sorted pairwise, then (small results) greedy pairing. */
function sameMultiset(gold: Norm[][], pred: Norm[][]): boolean {
  if (gold.length !== pred.length) return false;
  const a = [...gold].sort(compareRows);
  const b = [...pred].sort(compareRows);
  if (a.every((row, i) => rowsEqual(row, b[i]!))) return true;
  if (a.length > MAX_ROWS_FOR_PAIRING) return false;
  // Tolerance can reorder near-equal numbers between the two sorts: pair rows one by one.
  const used = new Array<boolean>(b.length).fill(false);
  return a.every((row) => {
    const k = b.findIndex((candidate, j) => !used[j] && rowsEqual(row, candidate));
    if (k < 0) return false;
    used[k] = true;
    return true;
  });
}

function sameRows(gold: Norm[][], pred: Norm[][], ordered: boolean): boolean {
  if (!ordered) return sameMultiset(gold, pred);
  return gold.length === pred.length && gold.every((row, i) => rowsEqual(row, pred[i]!));
}

const column = (rows: Norm[][], i: number): Norm[] => rows.map((row) => row[i]!);

/** Prediction columns whose sorted values equal gold column `g`'s (the `subset_df` column test). */
function candidatesFor(gold: Norm[][], pred: Norm[][], g: number, predColumns: number): number[] {
  const goldValues = column(gold, g).sort(compareCells);
  const out: number[] = [];
  for (let p = 0; p < predColumns; p += 1) {
    const values = column(pred, p).sort(compareCells);
    if (values.every((v, i) => cellsEqual(v, goldValues[i]!))) out.push(p);
  }
  return out;
}

/** Every injective mapping gold column → prediction column from the candidates (bounded). */
function* mappings(candidates: number[][]): Generator<number[]> {
  const chosen: number[] = [];
  const used = new Set<number>();
  let yielded = 0;
  function* walk(g: number): Generator<number[]> {
    if (yielded >= MAX_MAPPINGS) return;
    if (g === candidates.length) {
      yielded += 1;
      yield [...chosen];
      return;
    }
    for (const p of candidates[g]!) {
      if (used.has(p)) continue;
      used.add(p);
      chosen.push(p);
      yield* walk(g + 1);
      chosen.pop();
      used.delete(p);
    }
  }
  yield* walk(0);
}

/**
 * Compares a prediction with ONE gold result under rules 2–8 of this module.
 * @param options.ordered compare rows in sequence (the gold query has a top-level ORDER BY)
 */
export function compareResults(
  gold: ResultTable,
  predicted: ResultTable,
  options: { ordered: boolean },
): Comparison {
  if (predicted.truncated) return { match: false, why: 'the result was cut by the row cap' };
  if (gold.truncated) return { match: false, why: 'the gold result was cut by the row cap' };
  const g = gold.columns.length;
  const p = predicted.columns.length;
  if (gold.rows.length === 0) {
    if (predicted.rows.length !== 0)
      return { match: false, why: `expected no rows, got ${predicted.rows.length}` };
    return p === g
      ? { match: true }
      : { match: false, why: `expected ${g} column(s) in an empty result, got ${p}` };
  }
  if (p < g) return { match: false, why: `expected ${g} column(s), got ${p}` };
  if (predicted.rows.length !== gold.rows.length)
    return { match: false, why: `expected ${gold.rows.length} row(s), got ${predicted.rows.length}` };
  const goldRows = normalizeTable(gold);
  const predRows = normalizeTable(predicted);
  // Fast path: same shape, columns in the same order.
  if (p === g && sameRows(goldRows, predRows, options.ordered)) return { match: true };
  const candidates = Array.from({ length: g }, (_, i) => candidatesFor(goldRows, predRows, i, p));
  const missing = candidates.findIndex((list) => list.length === 0);
  if (missing >= 0)
    return { match: false, why: `no column of the prediction has the values of gold column ${missing + 1}` };
  for (const mapping of mappings(candidates)) {
    const projected = predRows.map((row) => mapping.map((k) => row[k]!));
    if (sameRows(goldRows, projected, options.ordered)) return { match: true };
  }
  return {
    match: false,
    why: options.ordered
      ? 'the rows differ or are in a different order (the gold query orders)'
      : 'the rows differ (every column matches on its own, but not row by row)',
  };
}

/**
 * True when `sql` has a top-level ORDER BY (libpg-query: `sortClause` on the outermost SelectStmt,
 * including after WITH and set operations). SQL that does not parse counts as unordered.
 */
export async function goldIsOrdered(sql: string): Promise<boolean> {
  await loadSqlParser();
  try {
    const stmt = parseResult(sql).stmts?.[0]?.stmt;
    const select = stmt !== undefined && 'SelectStmt' in stmt ? stmt.SelectStmt : undefined;
    return (select?.sortClause?.length ?? 0) > 0;
  } catch {
    return false;
  }
}

/** Runs one gold SQL alternative (through the same read-only executor as predictions). */
export type GoldRunner = (sql: string) => Promise<ResultTable>;

/** Verdict for one prediction. */
export interface Score {
  correct: boolean;
  /** Why it was judged wrong (first alternative's reason, with the number of alternatives tried). */
  why?: string;
  /** The gold alternative that matched. */
  matchedGold?: string;
  /** Gold alternatives that failed to run (a broken benchmark row, not the model's fault). */
  goldErrors: string[];
}

/**
 * Scores a prediction against a defog gold field (rule 1, then {@link compareResults}). Gold
 * alternatives run in order and stop at the first match.
 */
export async function scoreAgainstGold(
  gold: string,
  predicted: ResultTable,
  runGold: GoldRunner,
): Promise<Score> {
  const alternatives = splitGoldQueries(gold).flatMap((q) => expandGoldQuery(q, 'all'));
  const goldErrors: string[] = [];
  let firstWhy: string | undefined;
  for (const sql of alternatives) {
    let result: ResultTable;
    try {
      result = await runGold(sql);
    } catch (error) {
      goldErrors.push(`${sql}: ${error instanceof Error ? error.message : String(error)}`);
      continue;
    }
    const verdict = compareResults(result, predicted, { ordered: await goldIsOrdered(sql) });
    if (verdict.match) return { correct: true, matchedGold: sql, goldErrors };
    firstWhy ??= verdict.why;
  }
  const tried = alternatives.length - goldErrors.length;
  const why =
    tried === 0
      ? 'no gold query could be run'
      : `${firstWhy ?? 'the result differs'}${tried > 1 ? ` (none of ${tried} gold alternatives matched)` : ''}`;
  return { correct: false, why, goldErrors };
}
