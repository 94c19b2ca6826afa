/**
 * The table allowlist (`--allow-tables`) for MySQL/MariaDB: every table or view a statement reads
 * must match a pattern. Patterns: `db.table`, `db.*`, or a bare `table` (that name in any
 * database); parts in backticks (or double quotes) may hold dots, and names compare exactly as
 * written (MySQL on Linux tells `Orders` from `orders`). An unqualified name is the connection's
 * default database (`Schema.database` of the catalog; without a catalog it matches bare patterns
 * only). A name a WITH clause defines in scope is that CTE, not a table.
 *
 * Two readings must agree, or the statement is refused: the table references found by walking
 * the parse tree with CTE scopes, and the parser's own list of every table the text names
 * (node-sql-parser's `tableList`). A listed name the walk did not find, or one listed in a shape
 * it cannot read, is doubt, and doubt refuses.
 */
import type { Schema } from '../../core/schema.js';

/** A parsed pattern; `*` matches anything. */
interface MysqlTablePattern {
  database: string;
  table: string;
}

/** What the guard's parser returns for one statement. */
export interface ParsedMysql {
  /** `operation::database::table` per table named (`null` for no database). */
  tableList: readonly string[];
  /** The statement's tree. */
  ast: unknown;
}

type Node = { [key: string]: unknown };

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The parser keeps a doubled backtick of a quoted name as written; the name holds one. */
function unescapeName(name: string): string {
  return name.replaceAll('``', '`');
}

/** Splits `a.b` on dots outside backticks and double quotes, unquoting each part. */
function splitPattern(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quote: string | null = null;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (quote) {
      if (c === quote && text[i + 1] === quote) {
        current += c;
        i += 1;
      } else if (c === quote) quote = null;
      else current += c;
    } else if (c === '`' || c === '"') quote = c;
    else if (c === '.') {
      parts.push(current.trim());
      current = '';
    } else current += c;
  }
  parts.push(current.trim());
  return parts;
}

/** Parses `--allow-tables` entries for MySQL; entries with no name or more than two parts are dropped. */
export function parseMysqlTablePatterns(patterns: readonly string[]): MysqlTablePattern[] {
  return patterns
    .map((pattern) => splitPattern(pattern.trim()))
    .filter((parts) => parts.length >= 1 && parts.length <= 2 && parts.every((p) => p !== ''))
    .map((parts) =>
      parts.length === 1 ? { database: '*', table: parts[0]! } : { database: parts[0]!, table: parts[1]! },
    );
}

/** One table reference of the walk: `database` null when unqualified. */
interface Reference {
  database: string | null;
  table: string;
  /** True when the name is a CTE in scope where it is used. */
  cte: boolean;
}

/** A node naming a table in a FROM or JOIN: `{ db, table, as }` (column references have `column`). */
function tableReference(node: Node): { database: string | null; table: string } | undefined {
  if (typeof node.table !== 'string' || !('db' in node) || 'column' in node) return undefined;
  if (node.type !== undefined && node.type !== null) return undefined;
  const database = typeof node.db === 'string' ? unescapeName(node.db) : null;
  return { database, table: unescapeName(node.table) };
}

/** The CTE names of a WITH list, in order; undefined when one is in a shape not understood. */
function cteNames(list: unknown[]): string[] | undefined {
  const names: string[] = [];
  for (const entry of list) {
    const value = isNode(entry) && isNode(entry.name) ? entry.name.value : undefined;
    if (typeof value !== 'string') return undefined;
    names.push(unescapeName(value));
  }
  return names;
}

/**
 * Every table reference of the tree with the CTEs in scope at it. In `WITH a AS (…), b AS (…)`
 * the body of `b` sees `a` (and itself under RECURSIVE); the statement sees both.
 * @returns undefined when a WITH list cannot be read (doubt)
 */
function walk(tree: unknown): Reference[] | undefined {
  const found: Reference[] = [];
  const stack: { value: unknown; ctes: ReadonlySet<string> }[] = [{ value: tree, ctes: new Set() }];
  let visited = 0;
  while (stack.length > 0) {
    const { value, ctes } = stack.pop()!;
    if (++visited > 200_000) return undefined;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, ctes });
      continue;
    }
    if (!isNode(value)) continue;
    const reference = tableReference(value);
    if (reference)
      found.push({ ...reference, cte: reference.database === null && ctes.has(reference.table) });
    let inner = ctes;
    if (Array.isArray(value.with)) {
      const names = cteNames(value.with);
      if (!names) return undefined;
      const recursive = value.with.some((entry) => isNode(entry) && entry.recursive === true);
      value.with.forEach((entry, i) => {
        const visible = new Set([...ctes, ...names.slice(0, recursive ? i + 1 : i)]);
        stack.push({ value: isNode(entry) ? entry.stmt : entry, ctes: visible });
      });
      inner = new Set([...ctes, ...names]);
    }
    for (const [key, child] of Object.entries(value))
      if (key !== 'with' && typeof child === 'object' && child !== null)
        stack.push({ value: child, ctes: inner });
  }
  return found;
}

/**
 * Checks one parsed statement against the allowlist.
 * @returns undefined when every table it reads is allowed, else the refusal reason (`refused: …`)
 */
export function checkMysqlAllowlist(
  parsed: ParsedMysql,
  allowTables: readonly string[],
  schema?: Schema,
): string | undefined {
  const doubt = 'refused: the tables this statement reads could not be checked against the allowed tables';
  const patterns = parseMysqlTablePatterns(allowTables);
  const defaultDatabase = schema?.database ? schema.database : undefined;
  const allowed = (database: string | null, table: string): boolean => {
    const resolved = database ?? defaultDatabase;
    return patterns.some(
      (p) =>
        (p.database === '*' || (resolved !== undefined && p.database === resolved)) &&
        (p.table === '*' || p.table === table),
    );
  };
  const refusal = (database: string | null, table: string) =>
    `refused: ${database ?? defaultDatabase ?? '(default database)'}.${table} is not one of the allowed tables (${allowTables.join(', ')})`;

  const references = walk(parsed.ast);
  if (!references) return doubt;
  for (const reference of references)
    if (!reference.cte && !allowed(reference.database, reference.table))
      return refusal(reference.database, reference.table);

  for (const entry of parsed.tableList) {
    const parts = entry.split('::');
    if (parts.length !== 3) return doubt;
    const database = parts[1] === 'null' ? null : unescapeName(parts[1]!);
    const table = unescapeName(parts[2]!);
    if (allowed(database, table)) continue;
    // Not allowed as a table: only a CTE reference, everywhere the walk met the name, may stand.
    const uses = references.filter((r) => r.database === database && r.table === table);
    if (database !== null || uses.length === 0 || uses.some((r) => !r.cte)) return doubt;
  }
  return undefined;
}
