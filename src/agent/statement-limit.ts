/**
 * The statement's own row limit: `LIMIT n` or `FETCH FIRST n ROWS ONLY` at the top level of the
 * statement (not inside a subquery, a CTE or a string). When a result has exactly that many rows,
 * it is the first n rows, not all of them: the answer, the CLI and the web UI say so instead of
 * letting "20 customers" read as a total.
 */
import { isSignificant, lexSql } from '../sql/lexer.js';

/**
 * The top-level row limit of `sql`, or undefined when it has none (or a limit that is not a plain
 * number, such as `LIMIT $1` or `LIMIT ALL`). The last top-level limit wins (a UNION's own).
 */
export function statementLimit(sql: string): number | undefined {
  const tokens = lexSql(sql).filter(isSignificant);
  let limit: number | undefined;
  const word = (i: number) => (tokens[i]?.type === 'word' ? tokens[i]!.text.toLowerCase() : '');
  const count = (i: number) => (/^\d+$/.test(word(i)) ? Number(word(i)) : undefined);
  for (let i = 0; i < tokens.length; i++) {
    if (tokens[i]!.depth !== 0) continue;
    if (word(i) === 'limit') limit = count(i + 1);
    else if (word(i) === 'fetch' && (word(i + 1) === 'first' || word(i + 1) === 'next'))
      limit = count(i + 2) ?? (/^rows?$/.test(word(i + 2)) ? 1 : undefined);
  }
  return limit;
}

/**
 * The statement's limit when `rowCount` reached it (the list is cut by the statement itself),
 * else undefined.
 */
export function limitReached(sql: string | null | undefined, rowCount: number): number | undefined {
  if (!sql || rowCount === 0) return undefined;
  const limit = statementLimit(sql);
  return limit !== undefined && rowCount === limit ? limit : undefined;
}

/** The sentence every surface shows when {@link limitReached}: `the first 20 rows (the query's LIMIT 20), not a total`. */
export function limitNote(limit: number): string {
  return `the first ${limit} row${limit === 1 ? '' : 's'} (the query's LIMIT ${limit}), not a total`;
}
