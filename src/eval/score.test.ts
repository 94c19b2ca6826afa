import { describe, expect, it } from 'vitest';
import type { CellValue } from '../core/ports.js';
import { compareResults, goldIsOrdered, type ResultTable, scoreAgainstGold } from './score.js';

/** A table from column types and rows (names are deliberately different from run to run). */
function table(types: string[], rows: CellValue[][], truncated = false): ResultTable {
  return { columns: types.map((type, i) => ({ name: `c${i}_${Math.random()}`, type })), rows, truncated };
}

const unordered = { ordered: false };
const ordered = { ordered: true };

describe('compareResults', () => {
  it('ignores row order unless the gold query orders', () => {
    const gold = table(
      ['text', 'int4'],
      [
        ['a', 1],
        ['b', 2],
      ],
    );
    const swapped = table(
      ['text', 'int4'],
      [
        ['b', 2],
        ['a', 1],
      ],
    );
    expect(compareResults(gold, swapped, unordered).match).toBe(true);
    const verdict = compareResults(gold, swapped, ordered);
    expect(verdict.match).toBe(false);
    expect(verdict.why).toMatch(/order/);
    expect(
      compareResults(
        gold,
        table(
          ['text', 'int4'],
          [
            ['a', 1],
            ['b', 2],
          ],
        ),
        ordered,
      ).match,
    ).toBe(true);
  });

  it('counts duplicates (rows are a multiset)', () => {
    const gold = table(['text'], [['a'], ['a'], ['b']]);
    expect(compareResults(gold, table(['text'], [['a'], ['b'], ['a']]), unordered).match).toBe(true);
    expect(compareResults(gold, table(['text'], [['a'], ['b'], ['b']]), unordered).match).toBe(false);
    const fewer = compareResults(gold, table(['text'], [['a'], ['b']]), unordered);
    expect(fewer).toEqual({ match: false, why: 'expected 3 row(s), got 2' });
  });

  it('treats NULL as equal to NULL only', () => {
    const gold = table(
      ['text', 'int4'],
      [
        [null, 1],
        ['x', null],
      ],
    );
    expect(
      compareResults(
        gold,
        table(
          ['text', 'int4'],
          [
            ['x', null],
            [null, 1],
          ],
        ),
        unordered,
      ).match,
    ).toBe(true);
    expect(
      compareResults(
        gold,
        table(
          ['text', 'int4'],
          [
            ['', 1],
            ['x', null],
          ],
        ),
        unordered,
      ).match,
    ).toBe(false);
    expect(
      compareResults(
        gold,
        table(
          ['text', 'int4'],
          [
            [null, 1],
            ['x', 0],
          ],
        ),
        unordered,
      ).match,
    ).toBe(false);
  });

  it('compares numbers with the relative tolerance, across number types', () => {
    const gold = table(['numeric', 'float8'], [['10.000000', 0.3333333333]]);
    // bigint/numeric arrive as strings, floats as numbers: 10 vs '10.000000' is the same number.
    expect(compareResults(gold, table(['int8', 'float8'], [['10', 0.33333334]]), unordered).match).toBe(true);
    expect(compareResults(gold, table(['float8', 'numeric'], [[10, '0.333333']]), unordered).match).toBe(
      true,
    );
    // 1e-4 relative is beyond the 1e-5 tolerance.
    expect(compareResults(gold, table(['float8', 'float8'], [[10.001, 0.3333333333]]), unordered).match).toBe(
      false,
    );
    // Near zero the absolute tolerance applies.
    const zero = table(['float8'], [[0]]);
    expect(compareResults(zero, table(['float8'], [[1e-9]]), unordered).match).toBe(true);
    expect(compareResults(zero, table(['float8'], [[1e-6]]), unordered).match).toBe(false);
  });

  it('does not read numbers into text columns', () => {
    // Zip codes are text: '01234' is not 1234.
    expect(compareResults(table(['text'], [['01234']]), table(['text'], [['1234']]), unordered).match).toBe(
      false,
    );
  });

  it('pairs rows when the tolerance reorders near-equal numbers', () => {
    const gold = table(
      ['float8', 'text'],
      [
        [1.0000001, 'b'],
        [1, 'a'],
      ],
    );
    const pred = table(
      ['float8', 'text'],
      [
        [1.0000001, 'a'],
        [1, 'b'],
      ],
    );
    expect(compareResults(gold, pred, unordered).match).toBe(true);
  });

  it('ignores column names and order', () => {
    const gold = table(
      ['text', 'int4'],
      [
        ['a', 1],
        ['b', 2],
      ],
    );
    expect(
      compareResults(
        gold,
        table(
          ['int4', 'text'],
          [
            [2, 'b'],
            [1, 'a'],
          ],
        ),
        unordered,
      ).match,
    ).toBe(true);
    expect(
      compareResults(
        gold,
        table(
          ['int4', 'text'],
          [
            [1, 'a'],
            [2, 'b'],
          ],
        ),
        ordered,
      ).match,
    ).toBe(true);
  });

  it('accepts extra prediction columns when every gold column is matched', () => {
    const gold = table(['text'], [['ann'], ['bob'], ['ann']]);
    const extra = table(
      ['int4', 'text', 'float8'],
      [
        [3, 'ann', 1.5],
        [1, 'bob', 2],
        [2, 'ann', 7],
      ],
    );
    expect(compareResults(gold, extra, unordered).match).toBe(true);
    // The projection still counts duplicates.
    const distinct = table(
      ['int4', 'text'],
      [
        [1, 'ann'],
        [2, 'bob'],
        [3, 'carl'],
      ],
    );
    expect(compareResults(gold, distinct, unordered).match).toBe(false);
    // Fewer columns than the gold result is never enough.
    const two = table(['text', 'int4'], [['a', 1]]);
    expect(compareResults(two, table(['text'], [['a']]), unordered)).toEqual({
      match: false,
      why: 'expected 2 column(s), got 1',
    });
  });

  it('matches columns with identical values row by row, trying each mapping', () => {
    // Two prediction columns with the same value multiset: only one pairing gives the gold rows.
    const gold = table(
      ['text', 'int4'],
      [
        ['x', 1],
        ['y', 2],
      ],
    );
    const pred = table(
      ['int4', 'int4', 'text'],
      [
        [2, 1, 'x'],
        [1, 2, 'y'],
      ],
    );
    expect(compareResults(gold, pred, unordered).match).toBe(true);
    const wrong = table(
      ['int4', 'text'],
      [
        [2, 'x'],
        [1, 'y'],
      ],
    );
    expect(compareResults(gold, wrong, unordered).why).toMatch(/row by row/);
  });

  it('handles empty results: same column count needed', () => {
    const empty2 = table(['text', 'int4'], []);
    expect(compareResults(empty2, table(['int8', 'text'], []), unordered).match).toBe(true);
    expect(compareResults(empty2, table(['text'], []), unordered).match).toBe(false);
    expect(compareResults(empty2, table(['text', 'int4', 'int4'], []), unordered).match).toBe(false);
    expect(compareResults(empty2, table(['text', 'int4'], [['a', 1]]), unordered).why).toBe(
      'expected no rows, got 1',
    );
    expect(compareResults(table(['text'], [['a']]), table(['text'], []), unordered).match).toBe(false);
  });

  it('rejects a truncated prediction', () => {
    const gold = table(['int4'], [[1]]);
    expect(compareResults(gold, table(['int4'], [[1]], true), unordered).why).toMatch(/row cap/);
  });

  it('compares booleans and JSON by canonical value', () => {
    const gold = table(['bool', 'jsonb'], [[true, { a: 1, b: [1, 2] }]]);
    expect(
      compareResults(gold, table(['bool', 'jsonb'], [[true, { b: [1, 2], a: 1 }]]), unordered).match,
    ).toBe(true);
    expect(
      compareResults(gold, table(['text', 'jsonb'], [['t', { a: 1, b: [1, 2] }]]), unordered).match,
    ).toBe(false);
  });
});

describe('goldIsOrdered', () => {
  it('detects a top-level ORDER BY only', async () => {
    expect(await goldIsOrdered('SELECT a FROM t ORDER BY a')).toBe(true);
    expect(await goldIsOrdered('WITH x AS (SELECT a FROM t) SELECT a FROM x ORDER BY a DESC LIMIT 3')).toBe(
      true,
    );
    expect(await goldIsOrdered('SELECT a FROM t UNION SELECT b FROM u ORDER BY 1')).toBe(true);
    expect(await goldIsOrdered('SELECT a FROM (SELECT a FROM t ORDER BY a) s')).toBe(false);
    expect(await goldIsOrdered('SELECT a, row_number() OVER (ORDER BY a) FROM t')).toBe(false);
    expect(await goldIsOrdered("SELECT 'ORDER BY' FROM t")).toBe(false);
    expect(await goldIsOrdered('not sql at all ORDER BY')).toBe(false);
  });
});

describe('scoreAgainstGold', () => {
  const results: Record<string, ResultTable> = {
    'SELECT a FROM t': table(['text'], [['x'], ['y']]),
    'SELECT b FROM t': table(['int4'], [[1], [2]]),
    'SELECT a, b FROM t': table(
      ['text', 'int4'],
      [
        ['x', 1],
        ['y', 2],
      ],
    ),
    'SELECT a FROM t ORDER BY a': table(['text'], [['x'], ['y']]),
    'SELECT c FROM u': table(['text'], [['z']]),
  };
  const run = async (sql: string): Promise<ResultTable> => {
    const found = results[sql];
    if (!found) throw new Error(`relation does not exist (${sql})`);
    return found;
  };

  it('expands {a, b} into every subset and accepts any of them', async () => {
    const gold = 'SELECT {a, b} FROM t';
    expect((await scoreAgainstGold(gold, table(['int4'], [[2], [1]]), run)).matchedGold).toBe(
      'SELECT b FROM t',
    );
    expect(
      (
        await scoreAgainstGold(
          gold,
          table(
            ['int4', 'text'],
            [
              [2, 'y'],
              [1, 'x'],
            ],
          ),
          run,
        )
      ).correct,
    ).toBe(true);
    const wrong = await scoreAgainstGold(gold, table(['text'], [['q'], ['y']]), run);
    expect(wrong.correct).toBe(false);
    expect(wrong.why).toMatch(/none of 3 gold alternatives matched/);
  });

  it('counts each of several gold queries separated by ;', async () => {
    const gold = 'SELECT c FROM u; SELECT a FROM t ORDER BY a';
    expect((await scoreAgainstGold(gold, table(['text'], [['z']]), run)).correct).toBe(true);
    expect((await scoreAgainstGold(gold, table(['text'], [['x'], ['y']]), run)).matchedGold).toBe(
      'SELECT a FROM t ORDER BY a',
    );
    // The second gold orders: the reversed rows are wrong.
    expect((await scoreAgainstGold(gold, table(['text'], [['y'], ['x']]), run)).correct).toBe(false);
  });

  it('reports gold queries that fail without blaming the prediction', async () => {
    const score = await scoreAgainstGold('SELECT nope; SELECT c FROM u', table(['text'], [['z']]), run);
    expect(score.correct).toBe(true);
    expect(score.goldErrors).toHaveLength(1);
    const none = await scoreAgainstGold('SELECT nope', table(['text'], [['z']]), run);
    expect(none).toMatchObject({ correct: false, why: 'no gold query could be run' });
  });
});
