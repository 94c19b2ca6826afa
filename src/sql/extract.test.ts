import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { severalStatements } from '../core/refusal.js';
import { extractSql } from './extract.js';

const Q = 'SELECT name, total FROM customers WHERE total > 10';
const CTE = 'WITH big AS (\n  SELECT id, total FROM orders WHERE total > 100\n)\nSELECT count(*) FROM big';

/** [name, model text, expected statement] — every one of these must extract exactly. */
const FORMS: [string, string, string][] = [
  ['bare statement', Q, Q],
  ['bare with semicolon', `${Q};`, Q],
  ['fence with sql tag', `\`\`\`sql\n${Q};\n\`\`\``, Q],
  ['fence with SQL tag', `\`\`\`SQL\n${Q}\n\`\`\``, Q],
  ['fence with postgresql tag', `\`\`\`postgresql\n${Q};\n\`\`\``, Q],
  ['bare fence', `\`\`\`\n${Q}\n\`\`\``, Q],
  ['one-line fence', `\`\`\`${Q}\`\`\``, Q],
  ['one-line fence with tag', `\`\`\`sql ${Q};\`\`\``, Q],
  ['bold fence', `**\`\`\`sql\n${Q}\n\`\`\`**`, Q],
  ['bold one-line fence', `**\`\`\`sql ${Q}\`\`\`**`, Q],
  [
    'prose, fence, explanation',
    `Here is the query you asked for:\n\`\`\`sql\n${Q};\n\`\`\`\nThis query filters customers.`,
    Q,
  ],
  ['SQLQuery label', `SQLQuery: ${Q}`, Q],
  ['SQLQuery label then result', `Question: who?\nSQLQuery: ${Q}\nSQLResult: [(1,)]\nAnswer: one`, Q],
  ['SQL label on its own line', `SQL:\n${Q}\n`, Q],
  ['Query label', `Query: ${Q};`, Q],
  ['Answer label', `Answer: ${Q}`, Q],
  ['bold label', `**SQL Query:**\n${Q}`, Q],
  ['statement then explanation', `${Q};\n\nExplanation: the query filters.`, Q],
  ['statement then prose line without blank', `${Q}\nThis query returns the big spenders.`, Q],
  ['statement then note after blank line', `${Q}\n\nNote that totals are in cents.`, Q],
  ['think block', `<think>\nThey want customers.\n</think>\n\`\`\`sql\n${Q}\n\`\`\``, Q],
  ['think block with decoy SELECT', `<think>Maybe SELECT * FROM wrong_table; no.</think>\n\n${Q};`, Q],
  [
    'lone closing think',
    `so a join will do; SELECT * FROM nope;\n</think>\n\n${Q};\n\nExplanation: done.`,
    Q,
  ],
  [
    'lowercase sql',
    'select name from customers where total > 10',
    'select name from customers where total > 10',
  ],
  ['lowercase in prose', 'You can run:\nselect count(*) from t;\nIt counts rows.', 'select count(*) from t'],
  [
    'multiple fences, first is SQL',
    `\`\`\`sql\n${Q}\n\`\`\`\nOutput:\n\`\`\`\n| name | total |\n| a | 11 |\n\`\`\``,
    Q,
  ],
  ['non-SQL fence first', `\`\`\`json\n{"a": 1}\n\`\`\`\n\`\`\`sql\n${Q}\n\`\`\``, Q],
  ['fence starting with a comment line', `\`\`\`sql\n-- customers who spent a lot\n${Q};\n\`\`\``, Q],
  [
    'fence starting with a block comment',
    `\`\`\`sql\n/* big spenders;\n   SELECT nothing */\n${Q}\n\`\`\``,
    Q,
  ],
  ['CTE in a fence', `\`\`\`sql\n${CTE};\n\`\`\``, CTE],
  ['CTE in prose', `Here you go:\n\n${CTE}\n\nThis counts big orders.`, CTE],
  [
    'CTE with blank line before main query',
    'WITH a AS (SELECT 1 AS x)\n\nSELECT x FROM a;',
    'WITH a AS (SELECT 1 AS x)\n\nSELECT x FROM a',
  ],
  [
    'recursive CTE',
    'WITH RECURSIVE r(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r',
    'WITH RECURSIVE r(n) AS (VALUES (1) UNION ALL SELECT n + 1 FROM r WHERE n < 5) SELECT n FROM r',
  ],
  ['semicolon inside a string', "SELECT 'a; DROP TABLE t' AS s;", "SELECT 'a; DROP TABLE t' AS s"],
  ['escaped quote in E string', "SELECT E'it\\'s; fine' AS s;\nDone.", "SELECT E'it\\'s; fine' AS s"],
  ['dollar-quoted semicolon', 'SELECT $x$a;b$x$ AS s; ', 'SELECT $x$a;b$x$ AS s'],
  ['quoted identifier with semicolon', 'SELECT "we;ird" FROM t;', 'SELECT "we;ird" FROM t'],
  ['trailing comment dropped', 'SELECT 1 -- one; two\n;', 'SELECT 1'],
  ['inline code', 'Run `SELECT count(*) FROM t` to count.', 'SELECT count(*) FROM t'],
  ['sentence ending with a full stop', 'The query is: SELECT name FROM users.', 'SELECT name FROM users'],
  [
    'parenthesised set operation in fence',
    '```sql\n(SELECT 1) UNION (SELECT 2)\n```',
    '(SELECT 1) UNION (SELECT 2)',
  ],
  ['VALUES', 'VALUES (1, 2), (3, 4);', 'VALUES (1, 2), (3, 4)'],
  ['TABLE', 'TABLE customers;', 'TABLE customers'],
  ['EXPLAIN', 'EXPLAIN SELECT 1;', 'EXPLAIN SELECT 1'],
  ['repeated identical statement counts once', `${Q};\n\nOr again:\n\n${Q};`, Q],
  ['CRLF line ends', `\`\`\`sql\r\n${Q};\r\n\`\`\`\r\n`, Q],
  ['unclosed fence', `\`\`\`sql\n${Q};\n`, Q],
  ['xml answer tags', `<answer>${Q}</answer>`, Q],
  ['numbered intro', '1. Select the customers:\nSELECT name FROM customers;', 'SELECT name FROM customers'],
  ['prose with apostrophe after SQL', `${Q}\nIt's the query you'll need.`, Q],
  ['apostrophe in the intro', `Here's what you'll need:\n${Q}`, Q],
  ['markdown table right after', `${Q}\n| name | total |\n|---|---|`, Q],
  ['heading before and after', `### Query\n${Q}\n### Result\nnothing`, Q],
  ['sql then prose inside the fence', `\`\`\`sql\n${Q};\nThis returns big spenders.\n\`\`\``, Q],
  [
    'multi-line lowercase',
    'select c.name\nfrom customers c\nwhere c.total > 10\norder by c.name;',
    'select c.name\nfrom customers c\nwhere c.total > 10\norder by c.name',
  ],
  [
    'operator at the start of continuation lines',
    "SELECT price\n  * quantity AS amount\nFROM items\nWHERE sold > now()\n  - interval '1 day'\n\n- This sums sales.",
    "SELECT price\n  * quantity AS amount\nFROM items\nWHERE sold > now()\n  - interval '1 day'",
  ],
  [
    'title-case column on its own line',
    'SELECT\n  Result,\n  Name\nFROM t',
    'SELECT\n  Result,\n  Name\nFROM t',
  ],
  [
    'cast on a continuation line',
    'SELECT\n  created_at::date AS day\nFROM t',
    'SELECT\n  created_at::date AS day\nFROM t',
  ],
  ['a write is extracted (the guard refuses it)', '```sql\nDELETE FROM t;\n```', 'DELETE FROM t'],
];

describe('extractSql: messy model output', () => {
  it.each(FORMS)('%s', (_name, text, expected) => {
    expect(extractSql(text)).toEqual({ ok: true, sql: expected });
  });
});

describe('extractSql: failures', () => {
  it('empty text', () => {
    const result = extractSql('');
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/empty/);
  });

  it('whitespace only', () => {
    expect(extractSql('  \n\t ').ok).toBe(false);
  });

  it.each([
    ['only prose', 'I am sorry, I cannot answer that question with the given tables.'],
    ['prose mentioning sql words', 'Select the customers you need and update the filters.'],
    ['only a comment in a fence', '```sql\n-- nothing to do\n```'],
    ['only reasoning', '<think>SELECT * FROM t;</think>'],
    ['unclosed think', '<think>I will write SELECT * FROM t;'],
    ['keyword mid-sentence', 'You can use SELECT to read rows and WITH to name subqueries.'],
    ['non-SQL fence only', '```python\nprint("hi")\n```'],
  ])('%s → no SQL', (_name, text) => {
    const result = extractSql(text);
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.reason).toMatch(/no SQL|not found|No SQL/i);
  });

  it.each([
    ['two statements in one fence', '```sql\nSELECT 1;\nSELECT 2;\n```', 2],
    ['statement then another after semicolon', 'SELECT 1; DROP TABLE t', 2],
    ['two different fences', '```sql\nSELECT 1\n```\nor\n```sql\nSELECT 2\n```', 2],
    ['two statements separated by a blank line', 'SELECT a FROM t\n\nSELECT b FROM u', 2],
    ['two statements on consecutive lines', 'SELECT a FROM t\nSELECT b FROM u', 2],
    ['three statements', 'SELECT 1; SELECT 2; SELECT 3;', 3],
  ])('%s → refused with a count', (_name, text, count) => {
    const result = extractSql(text);
    expect(result).toMatchObject({
      ok: false,
      reason: severalStatements(count),
    });
    expect(result.ok ? [] : result.statements).toHaveLength(count);
  });
});

describe('extractSql: properties', () => {
  it('never throws, and an extracted statement is always a piece of the input', () => {
    const pieces = fc.constantFrom(
      'SELECT a FROM t',
      'WITH x AS (SELECT 1) SELECT * FROM x',
      ';',
      '\n',
      '\n\n',
      '```',
      '```sql\n',
      '<think>',
      '</think>',
      "'",
      '"',
      '$$',
      '--',
      '/*',
      '*/',
      'Here is the query:',
      'This query counts rows.',
      'SQLQuery: ',
      '**',
      '`',
      ' ',
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        const result = extractSql(text);
        if (result.ok) {
          expect(result.sql.trim()).not.toBe('');
          expect(text.replace(/\r\n?/g, '\n')).toContain(result.sql);
        } else {
          expect(result.reason.length).toBeGreaterThan(10);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('SQL inside a string', () => {
  it('reads a label followed by the statement in double quotes', () => {
    expect(extractSql('SQLQuery: "SELECT count(*) FROM orders"\nSQLResult: 5')).toEqual({
      ok: true,
      sql: 'SELECT count(*) FROM orders',
    });
    expect(extractSql(`SQLQuery: "SELECT "name" FROM t WHERE a = 'x'"`)).toEqual({
      ok: true,
      sql: `SELECT "name" FROM t WHERE a = 'x'`,
    });
  });
  it('reads a JSON object with an sql member, fenced or not, unescaping it', () => {
    expect(extractSql('{"sql": "SELECT 1 AS \\"n\\""}')).toEqual({ ok: true, sql: 'SELECT 1 AS "n"' });
    expect(extractSql('```json\n{"sql": "SELECT 1", "explanation": "one"}\n```')).toEqual({
      ok: true,
      sql: 'SELECT 1',
    });
  });
  it('still refuses several statements inside the JSON string', () => {
    const result = extractSql('{"sql": "SELECT 1; DROP TABLE t"}');
    expect(result.ok).toBe(false);
  });
});
