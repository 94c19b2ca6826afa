/**
 * The MySQL/MariaDB read-only guard: exactly one plain SELECT (with WITH, UNION, subqueries and
 * window functions), nothing else. It is the second line behind the engine's READ ONLY session and
 * transaction: it refuses what a read-only transaction still lets through (SLEEP, BENCHMARK,
 * named locks, LOAD_FILE, INTO OUTFILE/DUMPFILE, locking reads, variables) and anything it cannot
 * classify. The text is read by our own lexer (`lexer.ts`), then parsed by node-sql-parser's MySQL
 * grammar; a text either does not accept is refused.
 */
import type { GuardOptions, GuardVerdict } from '../guard.js';
import { checkMysqlAllowlist } from './allowlist.js';
import { lexMysql } from './lexer.js';
import { BUILTIN_FUNCTIONS, REFUSED_FUNCTIONS, SYSTEM_DATABASES } from './rules.js';

/** The parts of node-sql-parser we use (its MySQL build has no ES module typings of its own). */
interface SqlParser {
  parse(sql: string, options: { database: string }): { tableList: string[]; ast: unknown };
}

let parser: SqlParser | undefined;

/** Loads the MySQL grammar once (about 1 MB of JavaScript, so only when a MySQL database is used). */
async function loadParser(): Promise<SqlParser> {
  if (!parser) {
    const module = (await import('node-sql-parser/build/mysql.js')) as unknown as {
      Parser?: new () => SqlParser;
      default?: { Parser: new () => SqlParser };
    };
    const Parser = module.Parser ?? module.default?.Parser;
    if (!Parser) throw new Error('node-sql-parser has no Parser export');
    parser = new Parser();
  }
  return parser;
}

function refuse(rule: string, reason: string): GuardVerdict {
  return { ok: false, rule, reason };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

type Node = { [key: string]: unknown };

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The name parts of a function node (`{ name: [{ type, value }], schema? }`) or an aggregate's name. */
function functionName(node: Node): { name: string; quoted: boolean; qualified: boolean } {
  const raw = node.name;
  if (typeof raw === 'string') return { name: raw.toLowerCase(), quoted: false, qualified: false };
  if (isNode(raw) && Array.isArray(raw.name)) {
    const parts = raw.name as Node[];
    const last = parts[parts.length - 1];
    return {
      name: String(last?.value ?? '').toLowerCase(),
      quoted: parts.some((part) => part.type === 'backticks_quote_string'),
      qualified: raw.schema !== undefined && raw.schema !== null,
    };
  }
  return { name: '', quoted: false, qualified: false };
}

/** Walks every node of the tree; returns the first refusal, or undefined. */
function inspect(tree: unknown): GuardVerdict | undefined {
  const stack: unknown[] = [tree];
  let visited = 0;
  while (stack.length > 0) {
    const value = stack.pop();
    if (++visited > 200_000) return refuse('internal', 'refused: the statement is too large to check');
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    if (!isNode(value)) continue;
    const type = value.type;
    if (type === 'function' || type === 'aggr_func') {
      const { name, quoted, qualified } = functionName(value);
      const reason = REFUSED_FUNCTIONS.get(name);
      if (reason) return refuse('function', `refused: ${name.toUpperCase()}() is not allowed (${reason})`);
      if (qualified || quoted || !BUILTIN_FUNCTIONS.has(name))
        return refuse(
          'function',
          `refused: ${name || 'this function'}() is not a known built-in function (a stored function could do anything)`,
        );
    } else if (type === 'var' || type === 'assign') {
      return refuse('variable', 'refused: user and system variables (@x, @@x, :=) are not allowed');
    } else if (type === 'into' && value.keyword) {
      return refuse(
        'into',
        `refused: SELECT … INTO ${String(value.keyword).toUpperCase()} writes outside the result`,
      );
    } else if (type === 'select' || value.ast !== undefined) {
      if (value.locking_read)
        return refuse('locking-read', `refused: ${String(value.locking_read).toUpperCase()} takes row locks`);
      if (type !== undefined && type !== 'select')
        return refuse('statement-kind', `refused: ${String(type)} is not a read`);
    } else if (typeof type === 'string' && STATEMENT_TYPES.has(type)) {
      return refuse('statement-kind', `refused: ${type.toUpperCase()} is not a read`);
    }
    for (const child of Object.values(value))
      if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return undefined;
}

/** node-sql-parser statement types other than select: any of them anywhere in the tree is refused. */
const STATEMENT_TYPES = new Set([
  'insert',
  'replace',
  'update',
  'delete',
  'create',
  'drop',
  'alter',
  'truncate',
  'rename',
  'set',
  'call',
  'use',
  'lock',
  'unlock',
  'grant',
  'revoke',
  'show',
  'desc',
  'explain',
  'load_data',
  'transaction',
  'declare',
]);

/**
 * Checks that `sql` is exactly one read-only MySQL/MariaDB statement, and with
 * `options.allowTables` that every table it reads is allowed (`allowlist.ts`; unqualified names
 * are `options.schema`'s database). Never throws: every input gets a verdict, and a parser that
 * cannot load refuses with rule `internal`. The verdict's `sql` is the statement without comments
 * or a final semicolon: what the server runs is what was checked.
 */
export async function guardMysqlSql(sql: string, options: GuardOptions = {}): Promise<GuardVerdict> {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  const lexed = lexMysql(sql);
  if (!lexed.ok) return refuse(lexed.rule, lexed.reason);
  let sqlParser: SqlParser;
  try {
    sqlParser = await loadParser();
  } catch (error) {
    return refuse('internal', `refused: the SQL parser could not be loaded (${messageOf(error)})`);
  }
  const first = /^[\s(]*([a-z]+)/i.exec(lexed.skeleton)?.[1]?.toLowerCase();
  if (first !== 'select' && first !== 'with')
    return refuse(
      'statement-kind',
      `refused: ${first ? first.toUpperCase() : 'this statement'} is not a read; only SELECT is allowed`,
    );
  let parsed: { tableList: string[]; ast: unknown };
  try {
    parsed = sqlParser.parse(lexed.skeleton, { database: 'MySQL' });
  } catch (error) {
    return refuse('parse-error', `not valid MySQL: ${messageOf(error).split('\n')[0]}`);
  }
  try {
    const statements = Array.isArray(parsed.ast) ? parsed.ast : [parsed.ast];
    if (statements.length !== 1)
      return refuse('multiple-statements', 'refused: only one statement is allowed');
    const statement = statements[0];
    if (!isNode(statement) || statement.type !== 'select')
      return refuse('statement-kind', 'refused: only SELECT is allowed');
    for (const entry of parsed.tableList) {
      const [operation, database] = entry.split('::');
      if (operation !== 'select')
        return refuse('statement-kind', `refused: ${operation?.toUpperCase()} is not a read`);
      if (database && database !== 'null' && SYSTEM_DATABASES.has(database.toLowerCase()))
        return refuse(
          'system-catalog',
          `refused: the system database ${database} is not readable from a question`,
        );
    }
    const refusal = inspect(statement);
    if (refusal) return refusal;
    if (options.allowTables && options.allowTables.length > 0) {
      const denied = checkMysqlAllowlist(parsed, options.allowTables, options.schema);
      if (denied) return refuse('allowlist', denied);
    }
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
  return { ok: true, sql: lexed.sql, kind: first === 'with' ? 'with' : 'select' };
}
