/**
 * The DuckDB read-only guard: exactly one SELECT (with WITH, UNION, subqueries, window functions,
 * DuckDB's `FROM`-first form, DESCRIBE and SUMMARIZE), nothing else. The text is read by DuckDB's
 * own parser, in an in-memory engine of the guard's own that can reach no file: the parse tree
 * of every statement from `json_serialize_sql`, which serializes SELECT statements only (COPY, ATTACH, INSTALL, LOAD, SET, RESET, PRAGMA, CALL,
 * EXPORT, EXPLAIN, PIVOT and every write come back as "not a SELECT" and are refused). The tree
 * is then walked: table functions other than a few generators and catalog listings are refused
 * (files are reached only through the tables the connector made of them), as are file names used
 * as tables, functions that are not the engine's built-ins, and built-ins that sleep or touch
 * session state. It is the second line behind the engine's own read-only, no-external-access
 * configuration (`src/databases/duckdb/connector.ts`).
 */
import type { DuckDBInstance } from '@duckdb/node-api';
import type { JsonObject } from '../../core/json.js';
import { severalStatements } from '../../core/refusal.js';
import { loadDuckdb, lockdownStatements, NO_EXTENSIONS } from '../../databases/duckdb/load.js';
import type { GuardOptions, GuardVerdict } from '../guard.js';
import { checkDuckdbAllowlist } from './allowlist.js';
import {
  ALLOWED_TABLE_FUNCTIONS,
  looksLikeFile,
  REFUSED_FUNCTIONS,
  SYNTAX_FUNCTIONS,
  tableFunctionRefusal,
} from './rules.js';

interface Parser {
  instance: DuckDBInstance;
  /** The engine's built-in scalar, aggregate and macro function names (lower case). */
  builtins: ReadonlySet<string>;
}

let parser: Promise<Parser> | undefined;

/** Opens the guard's own engine once: in memory, no file access, no extensions, settings locked. */
function loadParser(): Promise<Parser> {
  parser ??= (async () => {
    const duckdb = await loadDuckdb();
    const instance = await duckdb.DuckDBInstance.create(':memory:', { ...NO_EXTENSIONS });
    const connection = await instance.connect();
    try {
      for (const statement of lockdownStatements()) await connection.run(statement);
      const reader = await connection.runAndReadAll(
        `SELECT DISTINCT lower(function_name) AS name FROM duckdb_functions()
          WHERE internal AND function_type IN ('scalar', 'aggregate', 'macro')`,
      );
      const builtins = new Set(reader.getRowObjectsJson().map((row) => String(row.name)));
      return { instance, builtins };
    } finally {
      connection.closeSync();
    }
  })().catch((error: unknown) => {
    parser = undefined;
    throw error;
  });
  return parser;
}

function refuse(rule: string, reason: string): GuardVerdict {
  return { ok: false, rule, reason };
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function isNode(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The first word of the text after comments and parentheses, upper case (for messages). */
export function firstKeyword(sql: string): string | undefined {
  const stripped = sql.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/|\()*/, '');
  return /^[A-Za-z_]+/.exec(stripped)?.[0]?.toUpperCase();
}

/** True when `schema` and `catalog` of a function call name no place, or the built-ins' own. */
function builtinPlace(node: JsonObject): boolean {
  const schema = String(node.schema ?? '').toLowerCase();
  const catalog = String(node.catalog ?? '').toLowerCase();
  return ['', 'main', 'pg_catalog'].includes(schema) && ['', 'system'].includes(catalog);
}

/** Walks every node of the parse tree; returns the first refusal, or undefined. */
function inspect(tree: unknown, builtins: ReadonlySet<string>): GuardVerdict | undefined {
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
    if (value.type === 'TABLE_FUNCTION' && isNode(value.function)) {
      const fn = value.function;
      const name = String(fn.function_name ?? '').toLowerCase();
      if (!ALLOWED_TABLE_FUNCTIONS.has(name) || !builtinPlace(fn))
        return refuse('table-function', `refused: ${tableFunctionRefusal(name)}`);
      // Its arguments are walked below; the call itself is not a scalar function.
      stack.push(fn.children);
      for (const [key, child] of Object.entries(value))
        if (key !== 'function' && typeof child === 'object' && child !== null) stack.push(child);
      continue;
    }
    if (
      value.type === 'BASE_TABLE' &&
      typeof value.table_name === 'string' &&
      looksLikeFile(value.table_name)
    )
      return refuse(
        'file-scan',
        `refused: "${value.table_name}" names a file, not a table; the files are already tables: name the table instead`,
      );
    if (typeof value.function_name === 'string' && (value.class === 'FUNCTION' || value.class === 'WINDOW')) {
      const name = value.function_name.toLowerCase();
      const reason = REFUSED_FUNCTIONS.get(name);
      if (reason) return refuse('function', `refused: ${name}() is not allowed (${reason})`);
      const known = builtins.has(name) || SYNTAX_FUNCTIONS.has(name) || value.is_operator === true;
      if (!known || !builtinPlace(value))
        return refuse(
          'function',
          `refused: ${name || 'this function'}() is not one of DuckDB's built-in functions (a macro could do anything)`,
        );
    }
    for (const child of Object.values(value))
      if (typeof child === 'object' && child !== null) stack.push(child);
  }
  return undefined;
}

/**
 * Checks that `sql` is exactly one read-only DuckDB statement, and with `options.allowTables` that
 * every relation it names is allowed (`allowlist.ts`). Never throws: every input gets a verdict,
 * and an engine that cannot load (the optional package missing) refuses with rule `internal`. The
 * verdict's `sql` is the statement without a final semicolon or trailing space.
 */
export async function guardDuckdbSql(sql: string, options: GuardOptions = {}): Promise<GuardVerdict> {
  if (typeof sql !== 'string' || sql.trim() === '')
    return refuse('empty', 'refused: there is no SQL statement');
  if (sql.includes('\0')) return refuse('nul-byte', 'refused: the text contains a NUL byte');
  let loaded: Parser;
  try {
    loaded = await loadParser();
  } catch (error) {
    return refuse('internal', `refused: the DuckDB parser could not be loaded (${messageOf(error)})`);
  }
  try {
    const connection = await loaded.instance.connect();
    try {
      const reader = await connection.runAndReadAll('SELECT json_serialize_sql($1::VARCHAR) AS tree', [sql]);
      const parsed = JSON.parse(String(reader.getRowObjectsJson()[0]?.tree ?? '')) as JsonObject;
      if (parsed.error === true) {
        if (!/only select/i.test(String(parsed.error_message ?? '')))
          return refuse(
            'parse-error',
            `not valid DuckDB SQL: ${String(parsed.error_message ?? 'unknown error')}`,
          );
        const keyword = firstKeyword(sql);
        // PIVOT runs as two statements (it creates an enum type of the pivoted values first).
        if (keyword === 'PIVOT' || keyword === 'UNPIVOT')
          return refuse(
            'statement-kind',
            `refused: a ${keyword} statement creates a type before it reads; write it with GROUP BY and FILTER (WHERE …) instead`,
          );
        // Some statement is not a SELECT. Splitting the text tells one of them from several;
        // a statement the splitter cannot even expand (IMPORT DATABASE reads its files) is one.
        const count = await connection.extractStatements(sql).then(
          (extracted) => extracted.count,
          () => 1,
        );
        if (count > 1) return refuse('multiple-statements', `refused: ${severalStatements(count)}`);
        return refuse(
          'statement-kind',
          `refused: ${keyword ?? 'this statement'} is not a read; only SELECT is allowed`,
        );
      }
      const statements = Array.isArray(parsed.statements) ? parsed.statements : [];
      if (statements.length === 0)
        return refuse('empty', 'refused: there is no SQL statement, only comments');
      if (statements.length > 1)
        return refuse('multiple-statements', `refused: ${severalStatements(statements.length)}`);
      const node = isNode(statements[0]) ? statements[0].node : undefined;
      if (!isNode(node)) return refuse('internal', 'refused: the statement could not be checked');
      const refusal = inspect(node, loaded.builtins);
      if (refusal) return refusal;
      if (options.allowTables && options.allowTables.length > 0) {
        const denied = checkDuckdbAllowlist(node, options.allowTables, options.schema);
        if (denied) return refuse('allowlist', denied);
      }
      const cte = isNode(node.cte_map) && Array.isArray(node.cte_map.map) ? node.cte_map.map : [];
      return { ok: true, sql: sql.replace(/[\s;]+$/, ''), kind: cte.length > 0 ? 'with' : 'select' };
    } finally {
      connection.closeSync();
    }
  } catch (error) {
    return refuse('internal', `refused: the statement could not be checked (${messageOf(error)})`);
  }
}
