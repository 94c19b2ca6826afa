/**
 * The guard hands its parse of an accepted statement to the data policy's rewrite, and checks the
 * rewritten text on the rewrite's own parse: the parse handed over must be exactly what the text
 * parses to, taken once, and a parse of another text must never stand for the text checked.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  guardedParts,
  guardParsedSync,
  guardSql,
  loadGuardParser,
  parseForGuard,
  takeGuardedParse,
} from '../src/sql/guard.js';
import { parseTree, scanTokens } from '../src/sql/parse-tree.js';

beforeAll(async () => {
  await loadGuardParser();
});

describe('guard parse hand-over', () => {
  it('keeps the parse of the verdict text, equal to a fresh parse, and hands it over once', async () => {
    const sql = 'SELECT id, name FROM customers WHERE id > 1 ORDER BY id';
    const verdict = await guardSql(sql);
    expect(verdict.ok).toBe(true);
    const parsed = takeGuardedParse(sql);
    expect(parsed?.sql).toBe(sql);
    expect(JSON.stringify(parsed?.tree)).toBe(JSON.stringify(parseTree(sql)));
    expect(parsed?.tokens).toEqual(scanTokens(sql));
    expect(takeGuardedParse(sql)).toBeUndefined();
  });

  it('keeps the parse of the statement cut out of its text (semicolon), not of the text', async () => {
    const verdict = await guardSql('SELECT 1 AS one;  ');
    expect(verdict).toMatchObject({ ok: true, sql: 'SELECT 1 AS one' });
    expect(takeGuardedParse('SELECT 1 AS one;  ')).toBeUndefined();
    const parsed = takeGuardedParse('SELECT 1 AS one');
    expect(JSON.stringify(parsed?.tree)).toBe(JSON.stringify(parseTree('SELECT 1 AS one')));
  });

  it('keeps nothing for a refused statement', async () => {
    const sql = 'DELETE FROM customers';
    expect((await guardSql(sql)).ok).toBe(false);
    expect(takeGuardedParse(sql)).toBeUndefined();
  });

  it('checks a given parse like the text, and never lets a parse of another text stand for it', () => {
    const sql = 'SELECT name FROM customers';
    expect(guardParsedSync({ sql, tree: parseForGuard(sql) })).toEqual({ ok: true, sql, kind: 'select' });
    // Hostile: a harmless tree offered for a write (the guard's own, or one parsed elsewhere) is
    // ignored, the write parsed and refused.
    const write = 'DELETE FROM customers';
    for (const tree of [parseForGuard(sql), parseTree(sql)])
      expect(guardParsedSync({ sql: write, tree })).toMatchObject({ ok: false, rule: 'data-modifying' });
    expect(guardParsedSync({ sql: write, tree: parseForGuard(write) })).toMatchObject({ ok: false });
  });

  it("hands its own parse and scan of an accepted text on, and only those count as the guard's", () => {
    const sql = 'SELECT a, $1::int AS b FROM t';
    const tree = parseForGuard(sql);
    let kept: Parameters<typeof guardedParts>[1];
    expect(guardParsedSync({ sql, tree }, {}, (parts) => (kept = parts))).toMatchObject({ ok: true, sql });
    expect(kept?.tree).toBe(tree);
    expect(kept?.tokens).toEqual(scanTokens(sql));
    const parts = guardedParts(sql, kept);
    expect(parts.tree).toBe(tree);
    expect(parts.tokens).toBe(kept?.tokens);
    // Hostile: the same parts offered for another text, or parts made outside the guard.
    expect(guardedParts('SELECT 1', kept)).toEqual({});
    expect(guardedParts(sql, { sql, tree: parseTree(sql), tokens: scanTokens(sql) })).toEqual({});
    expect(guardedParts(sql, { sql, tree, tokens: scanTokens(sql) })).toEqual({ tree });
  });

  it('keeps nothing to hand on when it refuses', () => {
    const write = 'DELETE FROM customers';
    let kept: unknown;
    expect(
      guardParsedSync({ sql: write, tree: parseForGuard(write) }, {}, (parts) => (kept = parts)).ok,
    ).toBe(false);
    expect(kept).toBeUndefined();
  });

  it('ignores tokens it did not scan from the text, whatever they say', () => {
    const sql = 'SELECT name FROM customers WHERE id = 1';
    // Tokens of a shorter text would cut the statement short if they were believed.
    for (const tokens of [scanTokens('SELECT name'), scanTokens(sql).slice(0, 2)])
      expect(guardParsedSync({ sql, tree: parseForGuard(sql), tokens })).toEqual({
        ok: true,
        sql,
        kind: 'select',
      });
  });
});
