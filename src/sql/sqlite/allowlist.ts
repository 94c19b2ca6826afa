/**
 * The table allowlist (`--allow-tables`) for SQLite, read from the guard's tokens: every table or
 * view a statement names must match a pattern. Patterns: `table`, `main.table`, `main.*`; names
 * compare case-insensitively, as SQLite resolves them. A name a WITH clause defines is that CTE,
 * not a table, inside the parentheses where the WITH stands (SQLite lets every CTE of a list see
 * every other, itself included). Only the `main` schema is readable: `temp` and attached schema
 * names are refused.
 *
 * Tables are found where SQLite reads them: after FROM, JOIN and the commas of a FROM list, inside
 * parenthesised joins, and after IN (`x IN tbl`). A token walk is not SQLite's parser, so this is
 * the first of two checks: the worker then verifies, in the read transaction the statement runs
 * in, that the compiled program opens no b-tree outside the allowed tables and their indexes
 * (`src/databases/sqlite/table-access.ts`).
 */
import { isAllowedFolded, parseTablePatterns, type TablePattern } from '../allowlist.js';
import { closingParen, isPunct, isWord, type SqliteToken } from './lexer.js';

/** A table name the statement reads: `schema` lower case or undefined when unqualified. */
export interface SqliteTableUse {
  schema: string | undefined;
  name: string;
}

/** What {@link sqliteTableUses} found, or why it could not read the statement. */
export type SqliteTableWalk =
  | { ok: true; tables: SqliteTableUse[]; tableFunctions: string[] }
  | { ok: false; reason: string };

/** Words that end a FROM list at their level. */
const FROM_ENDERS = new Set([
  'where',
  'group',
  'having',
  'window',
  'order',
  'limit',
  'union',
  'intersect',
  'except',
  'select',
  'values',
  'returning',
]);

const DOUBT = 'refused: the tables this statement reads could not be checked against the allowed tables';

/** The name a token stands for in a table position (lower case), or undefined. */
function nameAt(token: SqliteToken | undefined): string | undefined {
  if (!token) return undefined;
  if (token.kind === 'word') return token.lower;
  if (token.kind === 'quoted') return token.name.toLowerCase();
  // SQLite takes a string literal where it expects a table name (`FROM 'orders'`).
  if (token.kind === 'string') return token.text.slice(1, -1).replaceAll("''", "'").toLowerCase();
  return undefined;
}

/**
 * Every table the tokens of one statement read, with CTE names in scope taken out, and the
 * table-valued functions called in FROM. Never throws.
 */
export function sqliteTableUses(tokens: readonly SqliteToken[]): SqliteTableWalk {
  const tables: SqliteTableUse[] = [];
  const tableFunctions: string[] = [];
  let steps = 0;

  /** Walks tokens [start, end) of one parenthesis level; returns a refusal reason or undefined. */
  const level = (
    start: number,
    end: number,
    outer: ReadonlySet<string>,
    fromList: boolean,
  ): string | undefined => {
    if (++steps > 100_000) return DOUBT;
    let i = start;
    let ctes = outer;
    if (isWord(tokens[i], 'with')) {
      i += 1;
      if (isWord(tokens[i], 'recursive')) i += 1;
      const names: string[] = [];
      const bodies: [number, number][] = [];
      for (;;) {
        const name = tokens[i]?.kind === 'string' ? undefined : nameAt(tokens[i]);
        if (name === undefined) return DOUBT;
        names.push(name);
        i += 1;
        if (isPunct(tokens[i], '(')) {
          const close = closingParen(tokens, i, end);
          if (close === -1) return DOUBT;
          i = close + 1;
        }
        if (!isWord(tokens[i], 'as')) return DOUBT;
        i += 1;
        if (isWord(tokens[i], 'not')) i += 1;
        if (isWord(tokens[i], 'materialized')) i += 1;
        if (!isPunct(tokens[i], '(')) return DOUBT;
        const close = closingParen(tokens, i, end);
        if (close === -1) return DOUBT;
        bodies.push([i + 1, close]);
        i = close + 1;
        if (!isPunct(tokens[i], ',')) break;
        i += 1;
      }
      ctes = new Set([...outer, ...names]);
      // Every CTE of the list sees every other and itself.
      for (const [from, to] of bodies) {
        const refusal = level(from, to, ctes, false);
        if (refusal) return refusal;
      }
    }
    let inFrom = fromList;
    let expectTable = fromList;
    while (i < end) {
      const token = tokens[i]!;
      if (isPunct(token, '(')) {
        const close = closingParen(tokens, i, end);
        if (close === -1) return DOUBT;
        const first = tokens[i + 1];
        // In a table position: a subquery, or a parenthesised join list.
        const innerFromList =
          expectTable && !isWord(first, 'select') && !isWord(first, 'with') && !isWord(first, 'values');
        const refusal = level(i + 1, close, ctes, innerFromList);
        if (refusal) return refusal;
        expectTable = false;
        i = close + 1;
        continue;
      }
      if (isPunct(token, ')')) return DOUBT;
      if (token.kind === 'word' && (token.lower === 'from' || token.lower === 'join')) {
        inFrom = true;
        expectTable = true;
        i += 1;
        continue;
      }
      if (token.kind === 'word' && FROM_ENDERS.has(token.lower)) {
        inFrom = false;
        expectTable = false;
        i += 1;
        continue;
      }
      if (isPunct(token, ',') && inFrom) {
        expectTable = true;
        i += 1;
        continue;
      }
      // `x IN tbl` and `x IN main.tbl` read a table as a list.
      const inTable =
        isWord(token, 'in') && !isPunct(tokens[i + 1], '(') && nameAt(tokens[i + 1]) !== undefined;
      if (expectTable || inTable) {
        const at = inTable ? i + 1 : i;
        const first = nameAt(tokens[at]);
        if (first === undefined) return DOUBT;
        let schema: string | undefined;
        let name = first;
        let next = at + 1;
        if (isPunct(tokens[next], '.')) {
          const second = nameAt(tokens[next + 1]);
          if (second === undefined) return DOUBT;
          schema = first;
          name = second;
          next += 2;
        }
        if (isPunct(tokens[next], '(')) {
          // A table-valued function: its arguments are expressions of this statement.
          const close = closingParen(tokens, next, end);
          if (close === -1) return DOUBT;
          tableFunctions.push(schema ? `${schema}.${name}` : name);
          const refusal = level(next + 1, close, ctes, false);
          if (refusal) return refusal;
          next = close + 1;
        } else if (!(schema === undefined && ctes.has(name))) {
          tables.push({ schema, name });
        }
        expectTable = false;
        i = next;
        continue;
      }
      i += 1;
    }
    return undefined;
  };

  const refusal = level(0, tokens.length, new Set(), false);
  return refusal ? { ok: false, reason: refusal } : { ok: true, tables, tableFunctions };
}

/** Table-valued functions that read no table: JSON expansion and number series. */
export const SQLITE_HARMLESS_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'json_each',
  'json_tree',
  'jsonb_each',
  'jsonb_tree',
  'generate_series',
]);

/**
 * Checks the tables a statement's tokens name against the allowlist; with `catalogTables` (the
 * `main` tables and views the user may see, lower case) a name must also be one of them, so that
 * a built-in virtual table (`dbstat`) cannot pass for a table under a `main.*` pattern.
 * @returns undefined when allowed, else the refusal reason (`refused: …`)
 */
export function checkSqliteAllowlist(
  tokens: readonly SqliteToken[],
  allowTables: readonly string[],
  catalogTables?: ReadonlySet<string>,
): string | undefined {
  const walk = sqliteTableUses(tokens);
  if (!walk.ok) return walk.reason;
  const patterns: TablePattern[] = parseTablePatterns(allowTables);
  const list = allowTables.join(', ');
  for (const fn of walk.tableFunctions)
    if (!SQLITE_HARMLESS_TABLE_FUNCTIONS.has(fn))
      return `refused: ${fn}() is not a table function a question may call with the table allowlist (${list})`;
  for (const use of walk.tables) {
    const schema = use.schema ?? 'main';
    if (schema !== 'main')
      return `refused: ${schema}.${use.name} is outside the main database; only its allowed tables are readable (${list})`;
    if (!isAllowedFolded(schema, use.name, patterns) || (catalogTables && !catalogTables.has(use.name)))
      return `refused: ${schema}.${use.name} is not one of the allowed tables (${list})`;
  }
  return undefined;
}
