/**
 * The MySQL/MariaDB read-only guard: exactly one plain SELECT (with WITH, UNION, subqueries and
 * window functions), nothing else. It is the second line behind the engine's READ ONLY session and
 * transaction: it refuses what a read-only transaction still lets through (SLEEP, BENCHMARK,
 * named locks, LOAD_FILE, INTO OUTFILE/DUMPFILE, locking reads, variables) and anything it cannot
 * classify. The text is read by our own lexer (`lexer.ts`), then parsed by node-sql-parser's MySQL
 * grammar; a text either does not accept is refused.
 *
 * Two forms the grammar reads differently from the server are handled here: NATURAL joins (which
 * the grammar does not know) are checked as the plain join they read the same tables as, and a
 * quantified comparison `x = ANY (SELECT …)` (which it reads as a call of a function named ANY)
 * is accepted only in that exact shape; any other ANY/SOME/ALL is refused (rule `quantifier`),
 * and so is a text nested too deep for the grammar to read safely (rule `too-deep`).
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

/**
 * Deepest parenthesis nesting the guard reads. The grammar is recursive: far deeper text would
 * exhaust its stack, and no question needs more than a few levels of subqueries.
 */
export const MAX_MYSQL_NESTING = 100;

/** Comparison operators a quantified subquery (`= ANY (SELECT …)`) may follow. */
const QUANTIFIED_COMPARISONS = new Set(['=', '<>', '!=', '<', '<=', '>', '>=']);

/** The quantifier words the grammar turns into function calls. */
const QUANTIFIERS = new Set(['any', 'some', 'all']);

/** The deepest parenthesis nesting of `skeleton` (its strings are placeholders already). */
function nestingDepth(skeleton: string): number {
  let depth = 0;
  let deepest = 0;
  let quoted = false;
  for (const c of skeleton) {
    if (c === '`') quoted = !quoted;
    else if (quoted) continue;
    else if (c === '(') deepest = Math.max(deepest, ++depth);
    else if (c === ')') depth -= 1;
  }
  return deepest;
}

/**
 * NATURAL joins rewritten, for the parser only, as the plain joins that read the same tables
 * (`a NATURAL LEFT JOIN b` → `a LEFT JOIN b`); the server still runs the text as written. The
 * word is matched outside backtick identifiers only, and not after a dot (`db.natural` names a table).
 */
function withoutNaturalJoins(skeleton: string): string {
  return skeleton.replace(
    /`[^`]*`|(?<!\.\s*)\bnatural\s+((?:inner\s+|(?:left|right)(?:\s+outer)?\s+)?join)\b/gi,
    (match, join: string | undefined) => (join === undefined ? match : join),
  );
}

/** True when `node` is a subquery as the grammar writes one inside an expression list. */
function isSubquery(node: unknown): boolean {
  return isNode(node) && isNode(node.ast) && node.ast.type === 'select';
}

/**
 * True when a function node named ANY/SOME/ALL is really a quantified comparison: the right-hand
 * side of a comparison, unquoted, holding exactly one subquery.
 */
function isQuantifiedSubquery(call: Node, parent: Node | undefined): boolean {
  if (parent?.type !== 'binary_expr' || parent.right !== call) return false;
  if (!QUANTIFIED_COMPARISONS.has(String(parent.operator))) return false;
  const args = call.args;
  if (!isNode(args) || !Array.isArray(args.value) || args.value.length !== 1) return false;
  return isSubquery(args.value[0]) && call.over == null;
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
  const stack: { value: unknown; parent?: Node }[] = [{ value: tree }];
  let visited = 0;
  while (stack.length > 0) {
    const { value, parent } = stack.pop()!;
    if (++visited > 200_000) return refuse('too-deep', 'refused: the statement is too large to check');
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, ...(parent ? { parent } : {}) });
      continue;
    }
    if (!isNode(value)) continue;
    const type = value.type;
    if (type === 'function' || type === 'aggr_func') {
      const { name, quoted, qualified } = functionName(value);
      if (QUANTIFIERS.has(name) && !quoted && !qualified) {
        if (!isQuantifiedSubquery(value, parent))
          return refuse(
            'quantifier',
            `refused: ${name.toUpperCase()} is accepted only as a comparison with one subquery (x = ${name.toUpperCase()} (SELECT …)); this use of it cannot be checked`,
          );
        stack.push({ value: value.args, parent: value });
        continue;
      }
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
      if (typeof child === 'object' && child !== null) stack.push({ value: child, parent: value });
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
  const tooDeep = refuse(
    'too-deep',
    `refused: the statement nests parentheses or subqueries more than ${MAX_MYSQL_NESTING} levels deep, too deep to check; flatten it (a WITH clause, or a join)`,
  );
  if (nestingDepth(lexed.skeleton) > MAX_MYSQL_NESTING) return tooDeep;
  let parsed: { tableList: string[]; ast: unknown };
  try {
    parsed = sqlParser.parse(withoutNaturalJoins(lexed.skeleton), { database: 'MySQL' });
  } catch (error) {
    if (error instanceof RangeError) return tooDeep;
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
    if (error instanceof RangeError) return tooDeep;
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
  return { ok: true, sql: lexed.sql, kind: first === 'with' ? 'with' : 'select' };
}
