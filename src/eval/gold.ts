/**
 * Helpers for defog's gold-query notation (its `sql-eval` repository):
 * several gold queries separated by `;`, `{a, b}` in a SELECT list meaning "a, b, or both",
 * `{}` repeating the same choice later (e.g. in GROUP BY); plus the reader of
 * the question files (CSV through `csv-parse`). Used by tests now and the eval harness later.
 */
import { readFile } from 'node:fs/promises';
import { parse } from 'csv-parse/sync';
import { SqlrecallError } from '../core/errors.js';
import { lexSql, splitStatements } from '../sql/lexer.js';

/** One benchmark question from a defog CSV file. */
export interface DefogQuestion {
  question: string;
  /** Gold SQL in defog notation (see {@link splitGoldQueries}, {@link expandGoldQuery}). */
  query: string;
  /** Database name, e.g. `academic` (column `db_name`). */
  dbName: string;
  /** Column `query_category`, e.g. `group_by`. */
  category: string;
  /** Domain instructions for the question; `''` when the file has none. */
  instructions: string;
  /** Column `full_instructions` (instruct_advanced only): every definition of the domain. */
  fullInstructions?: string;
}

/**
 * Splits a gold field into its alternative queries on top-level `;` (quotes, comments and dollar
 * quotes respected); empty pieces are dropped.
 */
export function splitGoldQueries(query: string): string[] {
  return splitStatements(query);
}

/** Hard cap on expansions of one query (2^3 − 1 = 7 per group in the real data). */
const MAX_EXPANSIONS = 1024;

interface Group {
  start: number;
  end: number;
  /** Alternatives; empty for a `{}` that repeats the previous group's choice. */
  options: string[];
}

/**
 * Expands `{a, b}` choices. `first`: one query with the first alternative everywhere.
 * `all`: every non-empty subset of each group's alternatives (original order kept, e.g. `a`, `b`,
 * `a, b`), combined across groups; a `{}` takes the same subset as the closest group before it.
 * Braces inside string literals, quoted identifiers and comments are left alone.
 *
 * @example expandGoldQuery('SELECT {a.x, a.y} FROM a GROUP BY {}', 'first') // ['SELECT a.x FROM a GROUP BY a.x']
 */
export function expandGoldQuery(query: string, mode: 'first' | 'all'): string[] {
  const groups = findGroups(query);
  const choices: number[][] = groups.map((group) =>
    group.options.length === 0 ? [] : subsets(group.options.length, mode === 'first'),
  );
  const sizes = choices.filter((list) => list.length > 0);
  if (sizes.length === 0) return [render(query, groups, [])];
  const results: string[] = [];
  const picks = new Array<number>(choices.length).fill(0);
  for (;;) {
    results.push(
      render(
        query,
        groups,
        picks.map((pick, k) => choices[k]![pick] ?? 0),
      ),
    );
    if (results.length >= MAX_EXPANSIONS) break;
    let k = choices.length - 1;
    while (k >= 0 && picks[k]! + 1 >= choices[k]!.length) {
      picks[k] = 0;
      k -= 1;
    }
    if (k < 0) break;
    picks[k]! += 1;
  }
  return results;
}

/** Bit masks 1 … 2^n − 1 (bit i = alternative i), or just `[1]` (the first alternative). */
function subsets(n: number, firstOnly: boolean): number[] {
  if (firstOnly) return [1];
  return Array.from({ length: 2 ** Math.min(n, 10) - 1 }, (_, k) => k + 1);
}

function render(query: string, groups: readonly Group[], masks: readonly number[]): string {
  let out = '';
  let position = 0;
  let current: string | undefined;
  groups.forEach((group, k) => {
    let text: string;
    if (group.options.length > 0) {
      const mask = masks[k] ?? 1;
      current = group.options.filter((_, i) => (mask & (1 << i)) !== 0).join(', ');
      text = current;
    } else {
      text = current ?? query.slice(group.start, group.end);
    }
    out += query.slice(position, group.start) + text;
    position = group.end;
  });
  return out + query.slice(position);
}

/** `{…}` groups outside strings/comments; alternatives split on commas outside parentheses. */
function findGroups(query: string): Group[] {
  const groups: Group[] = [];
  let open: number | undefined;
  for (const token of lexSql(query)) {
    if (token.type !== 'punct') continue;
    if (token.text === '{') open = token.start;
    else if (token.text === '}' && open !== undefined) {
      const inner = query.slice(open + 1, token.start);
      groups.push({ start: open, end: token.end, options: splitTopLevelCommas(inner) });
      open = undefined;
    }
  }
  return groups;
}

function splitTopLevelCommas(text: string): string[] {
  const parts: string[] = [];
  let from = 0;
  for (const token of lexSql(text)) {
    if (token.type === 'punct' && token.text === ',' && token.depth === 0) {
      parts.push(text.slice(from, token.start));
      from = token.end;
    }
  }
  parts.push(text.slice(from));
  const trimmed = parts.map((part) => part.trim());
  return trimmed.every((part) => part === '') ? [] : trimmed.filter((part) => part !== '');
}

/**
 * Parses CSV text (RFC 4180: `,` separators, `"` quoting with `""` escapes, newlines inside
 * quotes, `\n` or `\r\n` line ends, optional BOM) into rows of fields, through `csv-parse`.
 * Blank lines are skipped; rows may differ in length. A quoted field with unescaped inner quotes
 * (not RFC 4180, found in one row of defog's `questions_gen_postgres.csv`) is kept verbatim,
 * quotes included (`relax_quotes`), rather than losing characters.
 *
 * @throws SqlrecallError `usage` when the text is not valid CSV (e.g. an unclosed quote).
 */
export function parseCsv(text: string): string[][] {
  try {
    return parse(text, {
      bom: true,
      skip_empty_lines: true,
      relax_column_count: true,
      relax_quotes: true,
      record_delimiter: ['\r\n', '\n'],
    }) as string[][];
  } catch (error) {
    throw new SqlrecallError('usage', `Not valid CSV: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Reads a defog question file (`questions_gen_postgres.csv`, `instruct_basic_postgres.csv`,
 * `instruct_advanced_postgres.csv`): columns are found by header name, so their order may differ.
 *
 * @throws SqlrecallError `not_found` when the file cannot be read; `usage` when a required column
 *   (`question`, `query`, `db_name`) is missing.
 */
export async function readDefogCsv(path: string): Promise<DefogQuestion[]> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new SqlrecallError('not_found', `Cannot read the question file ${path}.`, { cause: error });
  }
  const [header = [], ...rows] = parseCsv(text);
  const column = (name: string): number => header.indexOf(name);
  const required = ['question', 'query', 'db_name'];
  const missing = required.filter((name) => column(name) < 0);
  if (missing.length > 0) {
    throw new SqlrecallError('usage', `The question file ${path} lacks the column(s) ${missing.join(', ')}.`);
  }
  const at = (row: string[], name: string): string => (column(name) < 0 ? '' : (row[column(name)] ?? ''));
  return rows.map((row) => {
    const question: DefogQuestion = {
      question: at(row, 'question'),
      query: at(row, 'query'),
      dbName: at(row, 'db_name'),
      category: at(row, 'query_category'),
      instructions: at(row, 'instructions'),
    };
    if (column('full_instructions') >= 0) question.fullInstructions = at(row, 'full_instructions');
    return question;
  });
}
