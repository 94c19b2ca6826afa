/**
 * Bounds on what the MCP server returns to a client: a row cap (the configured `maxRows`) and a
 * byte cap on the JSON text of each tool result, so an assistant's context is never flooded.
 */
import type { CellValue } from '../core/ports.js';

/**
 * Default byte cap of one tool result's text: 64 KiB (UTF-8). Chosen as roughly 16k tokens at
 * ~4 bytes per token, a large but bounded share of a desktop assistant's context window.
 */
export const DEFAULT_MCP_MAX_BYTES = 65_536;

/** Least accepted `--max-bytes` (a result's envelope with an error must still fit): 1 KiB. */
export const MIN_MCP_MAX_BYTES = 1024;

/** A result document with rows (the `ask` and `sql` tools). */
export interface RowsDocument {
  columns: string[];
  rows: CellValue[][];
  rowCount: number;
  truncated: boolean;
  truncatedReason?: 'max_rows' | 'max_bytes';
  [key: string]: unknown;
}

/** UTF-8 byte length of a string. */
export function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/**
 * Serializes `doc` as JSON within `maxBytes`: when too big, drops rows from the end (keeping the
 * first ones) and marks the document `truncated: true, truncatedReason: 'max_bytes'`; `rowCount`
 * then counts the rows returned. When even zero rows do not fit (e.g. a huge answer text), long
 * string fields are clipped with a trailing "…".
 * @param doc the document; not modified
 * @param maxBytes byte cap of the returned text (UTF-8)
 * @returns the JSON text, at most `maxBytes` bytes
 */
export function boundedJson(doc: RowsDocument, maxBytes: number): string {
  const full = JSON.stringify(doc);
  if (byteLength(full) <= maxBytes) return full;
  const withRows = (n: number): RowsDocument => ({
    ...doc,
    rows: doc.rows.slice(0, n),
    rowCount: n,
    truncated: true,
    truncatedReason: 'max_bytes',
  });
  // Largest row count that fits: binary search over 0..rows.length-1.
  let lo = 0;
  let hi = doc.rows.length - 1;
  let best = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (byteLength(JSON.stringify(withRows(mid))) <= maxBytes) {
      best = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (best >= 0) return JSON.stringify(withRows(best));
  return clipStrings(withRows(0), maxBytes);
}

/** Clips the document's longest string fields until its JSON fits in `maxBytes`. */
function clipStrings(doc: Record<string, unknown>, maxBytes: number): string {
  const copy: Record<string, unknown> = { ...doc };
  for (let limit = 4096; limit >= 16; limit = Math.floor(limit / 2)) {
    for (const [key, value] of Object.entries(copy))
      if (typeof value === 'string' && value.length > limit) copy[key] = `${value.slice(0, limit)}…`;
    const text = JSON.stringify(copy);
    if (byteLength(text) <= maxBytes) return text;
  }
  return JSON.stringify({ truncated: true, truncatedReason: 'max_bytes', rows: [], rowCount: 0 });
}

/**
 * Serializes any JSON value within `maxBytes`; a value that does not fit is replaced by a
 * document saying so (`{ truncated: true, truncatedReason: 'max_bytes', text }` with a clipped
 * prefix of the JSON).
 */
export function boundedText(value: unknown, maxBytes: number): string {
  const full = typeof value === 'string' ? value : JSON.stringify(value);
  if (byteLength(full) <= maxBytes) return full;
  const note = '\n… (truncated: max_bytes)';
  const budget = maxBytes - byteLength(note);
  let cut = Math.min(full.length, budget);
  while (cut > 0 && byteLength(full.slice(0, cut)) > budget) cut = Math.floor(cut * 0.9);
  return `${full.slice(0, cut)}${note}`;
}
