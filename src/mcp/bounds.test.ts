import { describe, expect, it } from 'vitest';
import { boundedJson, boundedText, byteLength, type RowsDocument } from './bounds.js';

const rows = (n: number, pad = 'x'.repeat(40)) => Array.from({ length: n }, (_, i) => [i + 1, pad]);
const docOf = (n: number): RowsDocument => ({
  sql: 'SELECT 1',
  columns: ['n', 'pad'],
  rows: rows(n),
  rowCount: n,
  truncated: false,
});

describe('MCP result bounds', () => {
  it('returns a document that fits unchanged', () => {
    const doc = docOf(3);
    expect(JSON.parse(boundedJson(doc, 10_000))).toEqual(doc);
  });

  it('drops rows from the end to fit, keeping as many as fit, and says why', () => {
    const text = boundedJson(docOf(1000), 4096);
    expect(byteLength(text)).toBeLessThanOrEqual(4096);
    const out = JSON.parse(text);
    expect(out).toMatchObject({ truncated: true, truncatedReason: 'max_bytes', sql: 'SELECT 1' });
    expect(out.rows[0][0]).toBe(1);
    expect(out.rowCount).toBe(out.rows.length);
    // One more row would not have fitted.
    const more = JSON.stringify({ ...out, rows: rows(out.rows.length + 1), rowCount: out.rows.length + 1 });
    expect(byteLength(more)).toBeGreaterThan(4096);
  });

  it('keeps a max_rows truncation reason when rows already fit', () => {
    const doc = { ...docOf(2), truncated: true, truncatedReason: 'max_rows' as const };
    expect(JSON.parse(boundedJson(doc, 10_000)).truncatedReason).toBe('max_rows');
  });

  it('counts bytes, not characters, and clips long strings when no row fits', () => {
    const doc = { ...docOf(5), answer: 'é'.repeat(5000) };
    const text = boundedJson(doc, 2048);
    expect(byteLength(text)).toBeLessThanOrEqual(2048);
    const out = JSON.parse(text);
    expect(out.rows).toEqual([]);
    expect(out.answer.endsWith('…')).toBe(true);
  });

  it('clips plain text with a note', () => {
    const text = boundedText('ü'.repeat(3000), 1024);
    expect(byteLength(text)).toBeLessThanOrEqual(1024);
    expect(text).toMatch(/truncated: max_bytes\)$/);
    expect(boundedText({ a: 1 }, 1024)).toBe('{"a":1}');
  });
});
