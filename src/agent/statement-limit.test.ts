import { describe, expect, it } from 'vitest';
import { buildAnswerMessages } from './prompts.js';
import { limitReached, statementLimit } from './statement-limit.js';

describe('the statement’s own row limit', () => {
  it('reads the top-level LIMIT or FETCH FIRST, not one inside a subquery, a CTE or a string', () => {
    expect(statementLimit('SELECT * FROM customers ORDER BY id LIMIT 20')).toBe(20);
    expect(statementLimit('select * from t fetch first 5 rows only')).toBe(5);
    expect(statementLimit('SELECT * FROM t FETCH NEXT ROW ONLY')).toBe(1);
    expect(statementLimit('SELECT * FROM (SELECT * FROM t LIMIT 3) s')).toBeUndefined();
    expect(statementLimit('WITH top AS (SELECT * FROM t LIMIT 3) SELECT * FROM top')).toBeUndefined();
    expect(statementLimit("SELECT 'LIMIT 9' AS x")).toBeUndefined();
    expect(statementLimit('SELECT * FROM t -- LIMIT 9')).toBeUndefined();
    expect(statementLimit('SELECT * FROM t LIMIT $1')).toBeUndefined();
    expect(statementLimit('SELECT * FROM t LIMIT ALL')).toBeUndefined();
    expect(statementLimit('SELECT 1 UNION SELECT 2 LIMIT 1')).toBe(1);
  });

  it('counts as reached only when the rows equal the limit', () => {
    expect(limitReached('SELECT * FROM t LIMIT 20', 20)).toBe(20);
    expect(limitReached('SELECT * FROM t LIMIT 20', 4)).toBeUndefined();
    expect(limitReached('SELECT * FROM t', 20)).toBeUndefined();
    expect(limitReached(null, 20)).toBeUndefined();
  });

  it('tells the answer model the list is limited, not a total', () => {
    const result = {
      columns: [{ name: 'name', type: 'text' }],
      rows: [['Asha'], ['Bob']],
      rowCount: 2,
      truncated: false,
      durationMs: 1,
    };
    const limited = buildAnswerMessages('which customers?', 'SELECT name FROM customers LIMIT 2', result);
    expect(limited[1]!.content).toContain("the first 2 rows (the query's LIMIT 2), not a total");
    const whole = buildAnswerMessages('which customers?', 'SELECT name FROM customers LIMIT 10', result);
    expect(whole[1]!.content).not.toContain('not a total');
  });
});
