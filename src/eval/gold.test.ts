import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSqlrecallError } from '../core/errors.js';
import { expandGoldQuery, parseCsv, readDefogCsv, splitGoldQueries } from './gold.js';

describe('splitGoldQueries', () => {
  it('splits on semicolons outside quotes', () => {
    expect(splitGoldQueries("SELECT 'a;b' FROM t;SELECT {x, y} FROM u;")).toEqual([
      "SELECT 'a;b' FROM t",
      'SELECT {x, y} FROM u',
    ]);
  });
});

describe('expandGoldQuery', () => {
  const q = 'SELECT {author.name,author.aid}, count(*) FROM author GROUP BY {} ORDER BY 2';

  it('first alternative everywhere, {} repeating it', () => {
    expect(expandGoldQuery(q, 'first')).toEqual([
      'SELECT author.name, count(*) FROM author GROUP BY author.name ORDER BY 2',
    ]);
  });

  it('all non-empty subsets, in order, consistent across {}', () => {
    expect(expandGoldQuery(q, 'all')).toEqual([
      'SELECT author.name, count(*) FROM author GROUP BY author.name ORDER BY 2',
      'SELECT author.aid, count(*) FROM author GROUP BY author.aid ORDER BY 2',
      'SELECT author.name, author.aid, count(*) FROM author GROUP BY author.name, author.aid ORDER BY 2',
    ]);
  });

  it('three alternatives give seven queries', () => {
    expect(expandGoldQuery('SELECT {a, b, c} FROM t', 'all')).toHaveLength(7);
  });

  it('leaves braces inside strings, identifiers and comments alone', () => {
    const sql = 'SELECT \'{1,2}\'::int[], "{x}", {a, b} FROM t -- {c, d}';
    expect(expandGoldQuery(sql, 'all')).toEqual([
      'SELECT \'{1,2}\'::int[], "{x}", a FROM t -- {c, d}',
      'SELECT \'{1,2}\'::int[], "{x}", b FROM t -- {c, d}',
      'SELECT \'{1,2}\'::int[], "{x}", a, b FROM t -- {c, d}',
    ]);
  });

  it('keeps commas inside parentheses within one alternative', () => {
    expect(expandGoldQuery('SELECT {coalesce(a, 0), b} FROM t', 'all')[0]).toBe(
      'SELECT coalesce(a, 0) FROM t',
    );
  });

  it('returns a query without groups unchanged', () => {
    expect(expandGoldQuery('SELECT 1', 'all')).toEqual(['SELECT 1']);
  });

  it('combines two groups as a product', () => {
    expect(expandGoldQuery('SELECT {a, b}, {c, d} FROM t', 'all')).toHaveLength(9);
  });
});

describe('parseCsv', () => {
  it('handles quotes, doubled quotes, newlines in quotes, CRLF and BOM', () => {
    const text = '\ufeffa,b,c\r\n1,"x, ""y""","line1\nline2"\r\n\r\n2,," "\n';
    expect(parseCsv(text)).toEqual([
      ['a', 'b', 'c'],
      ['1', 'x, "y"', 'line1\nline2'],
      ['2', '', ' '],
    ]);
  });

  it('keeps a last row without newline', () => {
    expect(parseCsv('a\n1')).toEqual([['a'], ['1']]);
  });

  it('refuses an unclosed quote with a usage error instead of guessing', () => {
    expect(() => parseCsv('a,b\n1,"open')).toThrow(expect.objectContaining({ code: 'usage' }));
  });

  it('keeps every character of a quoted field with stray inner quotes (one defog row has them)', () => {
    expect(parseCsv('"to be "in stock" now",x\n')).toEqual([['"to be "in stock" now"', 'x']]);
  });
});

describe('readDefogCsv', () => {
  const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-gold-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('maps columns by header name, in any order', async () => {
    const path = join(dir, 'q.csv');
    writeFileSync(
      path,
      'db_name,query_category,question,query\nacademic,group_by,"Who, ""exactly""?","SELECT 1;\nSELECT 2"\n',
    );
    expect(await readDefogCsv(path)).toEqual([
      {
        question: 'Who, "exactly"?',
        query: 'SELECT 1;\nSELECT 2',
        dbName: 'academic',
        category: 'group_by',
        instructions: '',
      },
    ]);
  });

  it('throws not_found for a missing file and usage for missing columns', async () => {
    await expect(readDefogCsv(join(dir, 'nope.csv'))).rejects.toSatisfy((e: unknown) =>
      isSqlrecallError(e, 'not_found'),
    );
    const path = join(dir, 'bad.csv');
    writeFileSync(path, 'question\nwhat?\n');
    await expect(readDefogCsv(path)).rejects.toSatisfy((e: unknown) => isSqlrecallError(e, 'usage'));
  });
});
