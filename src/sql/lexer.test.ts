import { describe, expect, it } from 'vitest';
import { lexSql, splitStatements } from './lexer.js';

describe('splitStatements', () => {
  it.each([
    ['single without semicolon', 'SELECT 1', ['SELECT 1']],
    ['trailing semicolon and space', 'SELECT 1 ;  \n', ['SELECT 1']],
    ['two statements', 'SELECT 1; SELECT 2;', ['SELECT 1', 'SELECT 2']],
    ['semicolon in a string', "SELECT ';' AS a; SELECT 'it''s;'", ["SELECT ';' AS a", "SELECT 'it''s;'"]],
    ['E string with escaped quote', "SELECT E'\\';' ; SELECT 2", ["SELECT E'\\';'", 'SELECT 2']],
    ['quoted identifier', 'SELECT "a;""b" FROM t; SELECT 2', ['SELECT "a;""b" FROM t', 'SELECT 2']],
    ['dollar quote', 'SELECT $$a;b$$; SELECT $tag$ $$; $tag$', ['SELECT $$a;b$$', 'SELECT $tag$ $$; $tag$']],
    ['positional parameter is not a dollar quote', 'SELECT $1; SELECT $2', ['SELECT $1', 'SELECT $2']],
    ['line comment', 'SELECT 1 -- a; b\n; SELECT 2', ['SELECT 1', 'SELECT 2']],
    [
      'nested block comment',
      'SELECT /* a /* b; */ c; */ 1; SELECT 2',
      ['SELECT /* a /* b; */ c; */ 1', 'SELECT 2'],
    ],
    ['comment-only pieces dropped', '-- x\n; SELECT 1; /* y */ ;', ['SELECT 1']],
    ['semicolon inside parentheses stays', 'SELECT (1; 2); SELECT 3', ['SELECT (1; 2)', 'SELECT 3']],
    ['empty', '', []],
  ])('%s', (_name, sql, expected) => {
    expect(splitStatements(sql)).toEqual(expected);
  });
});

describe('lexSql', () => {
  it('tracks parenthesis depth and flags unterminated strings', () => {
    const tokens = lexSql("SELECT (a) FROM t WHERE b = 'open");
    expect(tokens.find((t) => t.text === 'a')?.depth).toBe(1);
    expect(tokens.find((t) => t.text === 'FROM')?.depth).toBe(0);
    expect(tokens[tokens.length - 1]).toMatchObject({ type: 'string', unterminated: true });
  });

  it('never lets depth go negative', () => {
    expect(lexSql(')) SELECT').every((t) => t.depth >= 0)).toBe(true);
  });
});
