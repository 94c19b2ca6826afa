/**
 * The rows block the answer model reads: JSON lines, so every value is encoded
 * unambiguously and no value — a newline, a `|`, a quote, the text `NULL` — can forge a row or a
 * column. Line 1: the column names as a JSON array; line 2: their types; then one JSON array per
 * row, values as in `ask --json` (SQL NULL → `null`, the text `'NULL'` → `"NULL"`, json/jsonb as
 * their JSON text, int8/numeric/money as exact decimal strings). Bounded in rows and characters.
 */
import type { CellValue, QueryResult } from '../core/ports.js';

/** Most rows of the block (the answer is a few sentences; the table shows the rest). */
export const ROWS_BLOCK_MAX_ROWS = 50;
/** Most characters of the block's row lines. */
export const ROWS_BLOCK_MAX_CHARS = 6000;
/** Longest string value kept whole; longer ones are cut and say how much was cut. */
export const ROWS_BLOCK_MAX_VALUE = 500;

/** A string value cut to {@link ROWS_BLOCK_MAX_VALUE} code points, marked `…[+N chars]`. */
function shorten(value: CellValue): CellValue {
  if (typeof value === 'string') {
    const points = Array.from(value);
    if (points.length <= ROWS_BLOCK_MAX_VALUE) return value;
    return `${points.slice(0, ROWS_BLOCK_MAX_VALUE).join('')}…[+${points.length - ROWS_BLOCK_MAX_VALUE} chars]`;
  }
  if (Array.isArray(value)) return value.map(shorten);
  return value;
}

/**
 * Renders `result` as the rows block.
 * @param maxRows most rows (default {@link ROWS_BLOCK_MAX_ROWS})
 * @param maxChars most characters of the row lines (default {@link ROWS_BLOCK_MAX_CHARS})
 * @returns the lines joined by `\n`; a last line `(shown of total rows shown…)` when rows are left
 *   out here or the result itself was truncated (with the reason)
 */
export function rowsBlock(
  result: QueryResult,
  maxRows = ROWS_BLOCK_MAX_ROWS,
  maxChars = ROWS_BLOCK_MAX_CHARS,
): string {
  const lines = [
    `columns: ${JSON.stringify(result.columns.map((c) => c.name))}`,
    `types: ${JSON.stringify(result.columns.map((c) => c.type))}`,
  ];
  let size = 0;
  let shown = 0;
  for (const row of result.rows.slice(0, maxRows)) {
    const line = JSON.stringify(row.map(shorten));
    if (size + line.length > maxChars) break;
    lines.push(line);
    size += line.length + 1;
    shown += 1;
  }
  if (shown < result.rowCount || result.truncated) {
    const reason =
      result.truncatedReason === 'max_bytes'
        ? '; the result was cut at its byte budget'
        : result.truncated
          ? '; the result was cut at its row cap'
          : '';
    lines.push(`(${shown} of ${result.rowCount}${result.truncated ? '+' : ''} rows shown${reason})`);
  }
  return lines.join('\n');
}
