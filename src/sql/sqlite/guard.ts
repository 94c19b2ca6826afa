/**
 * The SQLite read-only guard: exactly one SELECT (with WITH, compound SELECTs, subqueries, window
 * functions), nothing else. It reads the text with its own lexer (`lexer.ts`, SQLite's quoting
 * rules) and checks the tokens: the first word is SELECT, WITH or VALUES; no word of a write,
 * schema change, PRAGMA, ATTACH, VACUUM or transaction control appears unquoted; every function
 * call names an accepted built-in (`rules.ts`); SQLite's own tables and pragma functions are not
 * read. It is the first line: the connector then opens the file read-only with `query_only` on and
 * refuses any statement SQLite itself does not report as a read-only query (`stmt.readonly`).
 *
 * A token check rather than a parse tree: node-sql-parser's SQLite grammar rejects valid SQLite a
 * model writes every day (NULLS FIRST/LAST, FILTER (WHERE …), [bracketed] names), and SQLite is the
 * only judge of its grammar; what the guard must be sure of is that nothing but a read can run.
 */
import type { GuardOptions, GuardVerdict } from '../guard.js';
import { checkSqliteAllowlist } from './allowlist.js';
import { closingParen, isPunct, isWord, lexSqlite, type SqliteToken } from './lexer.js';
import {
  BUILTIN_FUNCTIONS,
  KEYWORDS_BEFORE_PAREN,
  REFUSED_FUNCTIONS,
  SYSTEM_PREFIXES,
  WRITE_KEYWORDS,
} from './rules.js';

function refuse(rule: string, reason: string): GuardVerdict {
  return { ok: false, rule, reason };
}

/** The name a word or quoted token stands for (lower case), or undefined for other tokens. */
function nameOf(token: SqliteToken | undefined): string | undefined {
  if (!token) return undefined;
  if (token.kind === 'word') return token.lower;
  if (token.kind === 'quoted') return token.name.toLowerCase();
  return undefined;
}

/**
 * True when the name at `i` (followed by `(` at `i + 1`) is a CTE with a column list:
 * `name(a, b) AS [NOT] [MATERIALIZED] (`. No function call is ever followed by `AS (`.
 */
function isCteColumnList(tokens: readonly SqliteToken[], i: number): boolean {
  const close = closingParen(tokens, i + 1);
  if (close === -1 || !isWord(tokens[close + 1], 'as')) return false;
  let j = close + 2;
  if (isWord(tokens[j], 'not')) j += 1;
  if (isWord(tokens[j], 'materialized')) j += 1;
  return isPunct(tokens[j], '(');
}

/**
 * Checks that `sql` is exactly one read-only SQLite statement, and with `options.allowTables` that
 * every table it names is allowed (`allowlist.ts`; with `options.schema`, also one of the catalog's
 * tables). Never throws: every input gets a verdict. The verdict's `sql` is the statement without
 * comments or a final semicolon.
 */
export async function guardSqliteSql(sql: string, options: GuardOptions = {}): Promise<GuardVerdict> {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  const lexed = lexSqlite(sql);
  if (!lexed.ok) return refuse(lexed.rule, lexed.reason);
  const { tokens } = lexed;
  const first = tokens[0];
  const firstWord = first?.kind === 'word' ? first.lower : undefined;
  try {
    if (firstWord !== 'select' && firstWord !== 'with' && firstWord !== 'values')
      return refuse(
        'statement-kind',
        `refused: ${firstWord ? firstWord.toUpperCase() : 'this statement'} is not a read; only SELECT is allowed`,
      );
    for (let i = 0; i < tokens.length; i += 1) {
      const token = tokens[i]!;
      const name = nameOf(token);
      if (name === undefined) continue;
      const call = isPunct(tokens[i + 1], '(');
      if (token.kind === 'word' && !call) {
        const write = WRITE_KEYWORDS.get(name);
        if (write)
          return refuse(
            'statement-kind',
            `refused: ${name.toUpperCase()} is not part of a read (${write}); a column of that name must be written in double quotes`,
          );
      }
      if (call) {
        if (token.kind === 'word' && KEYWORDS_BEFORE_PAREN.has(name)) continue;
        if (isCteColumnList(tokens, i)) continue;
        const reason = REFUSED_FUNCTIONS.get(name);
        if (reason) return refuse('function', `refused: ${name.toUpperCase()}() is not allowed (${reason})`);
        if (SYSTEM_PREFIXES.some((prefix) => name.startsWith(prefix)))
          return refuse('system-catalog', `refused: ${name}() reads SQLite's own settings, not data`);
        if (token.kind === 'quoted' || !BUILTIN_FUNCTIONS.has(name))
          return refuse(
            'function',
            `refused: ${name || 'this function'}() is not a known built-in function (an application-defined function could do anything)`,
          );
        continue;
      }
      if (SYSTEM_PREFIXES.some((prefix) => name.startsWith(prefix)))
        return refuse(
          'system-catalog',
          `refused: SQLite's own table ${name} is not readable from a question`,
        );
    }
    if (options.allowTables && options.allowTables.length > 0) {
      const catalog = options.schema
        ? new Set(
            options.schema.tables
              .filter((table) => table.schema.toLowerCase() === 'main')
              .map((table) => table.name.toLowerCase()),
          )
        : undefined;
      const denied = checkSqliteAllowlist(tokens, options.allowTables, catalog);
      if (denied) return refuse('allowlist', denied);
    }
  } catch (error) {
    return refuse(
      'internal',
      `refused: the statement could not be checked (${error instanceof Error ? error.message : String(error)})`,
    );
  }
  return {
    ok: true,
    sql: lexed.sql,
    kind: firstWord === 'with' ? 'with' : firstWord === 'values' ? 'values' : 'select',
  };
}
