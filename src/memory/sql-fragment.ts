/**
 * SQL fragments of memories (a predicate such as `customers.country = 'India'`): checked against
 * the real PostgreSQL parser and the introspected schema before they are stored, and looked for in
 * generated SQL afterwards ("is the user's standing filter applied?"). The parser is libpg-query,
 * the same one the SQL guard uses; a fragment never runs on its own.
 */
import { parseSync } from 'libpg-query';
import type { Schema, Table } from '../core/schema.js';
import { guardSql, loadGuardParser } from '../sql/guard.js';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

/** Longest fragment accepted, in characters (a predicate, not a query). */
export const MAX_FRAGMENT_LENGTH = 1000;

/** Verdict of {@link checkFragment}. */
export type FragmentCheck =
  | {
      ok: true;
      /** The fragment, trimmed, without a trailing semicolon. */
      sql: string;
      /** Tables it touches, as `schema.table`. */
      tables: string[];
      /** Columns it touches, as `schema.table.column`. */
      columns: string[];
    }
  | { ok: false; reason: string };

/**
 * Checks that `fragment` is one boolean expression (or value expression) that parses as the WHERE
 * clause of `SELECT 1 WHERE (<fragment>)`, passes the read-only guard in that wrapper, and names
 * only tables and columns of `schema` (when a schema is given; without one only the parse and the
 * guard are checked, and tables/columns come from the qualified names as written).
 * Never throws.
 */
export async function checkFragment(fragment: string, schema?: Schema): Promise<FragmentCheck> {
  const sql = fragment
    .trim()
    .replace(/;+\s*$/, '')
    .trim();
  if (sql === '') return { ok: false, reason: 'the SQL is empty' };
  if (sql.length > MAX_FRAGMENT_LENGTH) return { ok: false, reason: 'the SQL is too long for a condition' };
  const wrapper = `SELECT 1 WHERE (${sql})`;
  const verdict = await guardSql(wrapper);
  if (!verdict.ok)
    return { ok: false, reason: `the SQL is not a valid read-only condition (${verdict.reason})` };
  let tree: JsonObject;
  try {
    tree = parseSync(wrapper) as unknown as JsonObject;
  } catch (error) {
    return { ok: false, reason: `the SQL does not parse (${(error as Error).message})` };
  }
  const stmts = tree.stmts as JsonObject[] | undefined;
  const select = (stmts?.[0]?.stmt as JsonObject | undefined)?.SelectStmt as JsonObject | undefined;
  // The wrapper must still be exactly "SELECT 1 WHERE (...)": a fragment like `true) UNION SELECT (1`
  // would otherwise smuggle a second query in.
  if (
    !select ||
    stmts?.length !== 1 ||
    (select.op !== undefined && select.op !== 'SETOP_NONE') ||
    select.fromClause !== undefined ||
    !Array.isArray(select.targetList) ||
    select.targetList.length !== 1 ||
    select.whereClause === undefined ||
    select.groupClause !== undefined ||
    select.havingClause !== undefined ||
    select.sortClause !== undefined ||
    select.limitCount !== undefined
  ) {
    return { ok: false, reason: 'the SQL is not a single condition' };
  }
  const refs = collectRefs(select.whereClause);
  if (refs.star) return { ok: false, reason: 'the SQL uses *' };
  if (!schema) {
    const tables = new Set<string>();
    const columns = new Set<string>();
    for (const ref of refs.columns) {
      if (ref.length < 2) continue;
      const [column, table, schemaName = 'public'] = [...ref].reverse();
      tables.add(`${schemaName}.${table}`);
      columns.add(`${schemaName}.${table}.${column}`);
    }
    return { ok: true, sql, tables: [...tables], columns: [...columns] };
  }
  const tables = new Set<string>();
  const columns = new Set<string>();
  for (const relation of refs.relations) {
    const table = findTable(schema, relation.schema, relation.name);
    if (!table) return { ok: false, reason: `the table ${relation.name} does not exist` };
    tables.add(`${table.schema}.${table.name}`);
  }
  for (const ref of refs.columns) {
    const resolved = resolveColumn(schema, ref, refs.aliases);
    if (resolved === 'alias') continue;
    if (!resolved) return { ok: false, reason: `the column ${ref.join('.')} does not exist` };
    tables.add(`${resolved.table.schema}.${resolved.table.name}`);
    columns.add(`${resolved.table.schema}.${resolved.table.name}.${resolved.column}`);
  }
  return { ok: true, sql, tables: [...tables], columns: [...columns] };
}

/** Column references, relations and aliases found in a parse tree. */
interface Refs {
  columns: string[][];
  relations: { schema: string | undefined; name: string }[];
  aliases: Set<string>;
  star: boolean;
}

function collectRefs(root: Json): Refs {
  const refs: Refs = { columns: [], relations: [], aliases: new Set(), star: false };
  walk(root, (key, node) => {
    if (key === 'ColumnRef') {
      const fields = (node.fields as JsonObject[] | undefined) ?? [];
      const names: string[] = [];
      for (const field of fields) {
        if (field.A_Star !== undefined) refs.star = true;
        const sval = (field.String as JsonObject | undefined)?.sval;
        if (typeof sval === 'string') names.push(sval);
      }
      if (names.length > 0) refs.columns.push(names);
    } else if (key === 'RangeVar') {
      const name = String(node.relname ?? '');
      refs.relations.push({
        schema: typeof node.schemaname === 'string' ? node.schemaname : undefined,
        name,
      });
      const alias = (node.alias as JsonObject | undefined)?.aliasname;
      refs.aliases.add(typeof alias === 'string' ? alias : name);
    } else if (key === 'RangeSubselect' || key === 'CommonTableExpr') {
      const alias = (node.alias as JsonObject | undefined)?.aliasname ?? node.ctename;
      if (typeof alias === 'string') refs.aliases.add(alias);
    }
  });
  return refs;
}

/** Visits every object node as (its key, its value), iteratively. */
function walk(root: Json, visit: (key: string, node: JsonObject) => void): void {
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) visit(key, child);
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
}

function findTable(schema: Schema, schemaName: string | undefined, name: string): Table | undefined {
  const candidates = schema.tables.filter((t) => schemaName === undefined || t.schema === schemaName);
  return (
    candidates.find((t) => t.name === name) ??
    candidates.find((t) => t.name.toLowerCase() === name.toLowerCase())
  );
}

function resolveColumn(
  schema: Schema,
  ref: string[],
  aliases: Set<string>,
): { table: Table; column: string } | 'alias' | undefined {
  const hasColumn = (table: Table, name: string) =>
    table.columns.find((c) => c.name === name) ??
    table.columns.find((c) => c.name.toLowerCase() === name.toLowerCase());
  if (ref.length === 1) {
    const name = ref[0]!;
    for (const table of schema.tables) {
      const column = hasColumn(table, name);
      if (column) return { table, column: column.name };
    }
    return undefined;
  }
  const column = ref[ref.length - 1]!;
  const tableName = ref[ref.length - 2]!;
  const schemaName = ref.length >= 3 ? ref[ref.length - 3] : undefined;
  const table = findTable(schema, schemaName, tableName);
  if (!table) return schemaName === undefined && aliases.has(tableName) ? 'alias' : undefined;
  const found = hasColumn(table, column);
  return found ? { table, column: found.name } : undefined;
}

// ---------------------------------------------------------------------------------------------
// Presence of a predicate in generated SQL

/** Column names and constants of an expression, normalised for comparison. */
export interface PredicateParts {
  /** Lower-cased column names (last part of each reference). */
  columns: string[];
  /** Constants: strings as `s:<text>`, numbers as `n:<canonical number>`, booleans as `b:true|false`. */
  literals: string[];
}

/** Columns and constants in the filtering parts of a statement and the tables it reads. */
export interface StatementParts extends PredicateParts {
  /** Lower-cased table names it reads (last part, no schema). */
  tables: string[];
}

function constantOf(node: JsonObject): string | undefined {
  if (node.isnull === true) return 'null';
  if (node.sval !== undefined) return `s:${String((node.sval as JsonObject).sval ?? '')}`;
  if (node.ival !== undefined) return `n:${Number((node.ival as JsonObject).ival ?? 0)}`;
  if (node.fval !== undefined) return `n:${Number((node.fval as JsonObject).fval ?? 0)}`;
  if (node.boolval !== undefined) return `b:${Boolean((node.boolval as JsonObject).boolval)}`;
  return undefined;
}

function collectParts(root: Json, filterOnly: boolean): StatementParts {
  const columns = new Set<string>();
  const literals = new Set<string>();
  const tables = new Set<string>();
  const stack: { value: Json; inFilter: boolean }[] = [{ value: root, inFilter: !filterOnly }];
  while (stack.length > 0) {
    const { value, inFilter } = stack.pop()!;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, inFilter });
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      if (child === null || typeof child !== 'object') continue;
      const filtering = inFilter || key === 'whereClause' || key === 'havingClause' || key === 'quals';
      if (!Array.isArray(child)) {
        if (key === 'RangeVar' && typeof child.relname === 'string') tables.add(child.relname.toLowerCase());
        if (filtering && key === 'ColumnRef') {
          const fields = (child.fields as JsonObject[] | undefined) ?? [];
          const last = (fields[fields.length - 1]?.String as JsonObject | undefined)?.sval;
          if (typeof last === 'string') columns.add(last.toLowerCase());
        }
        if (filtering && key === 'A_Const') {
          const constant = constantOf(child);
          if (constant) literals.add(constant);
        }
        // `x = -3` arrives as a negated constant in some forms; `'India'::text` as a TypeCast: both are walked.
      }
      stack.push({ value: child, inFilter: filtering });
    }
  }
  return { columns: [...columns], literals: [...literals], tables: [...tables] };
}

/** Parses `sql` (one statement) into its parts; undefined when it does not parse. */
export async function statementParts(sql: string): Promise<StatementParts | undefined> {
  try {
    await loadGuardParser();
    return collectParts(parseSync(sql) as unknown as Json, true);
  } catch {
    return undefined;
  }
}

/** Columns and constants of a fragment; undefined when it does not parse. */
export async function predicateParts(fragment: string): Promise<PredicateParts | undefined> {
  try {
    await loadGuardParser();
    const tree = parseSync(`SELECT 1 WHERE (${fragment})`) as unknown as JsonObject;
    const stmt = (tree.stmts as JsonObject[] | undefined)?.[0]?.stmt as JsonObject | undefined;
    const select = stmt?.SelectStmt as JsonObject | undefined;
    if (!select) return undefined;
    const parts = collectParts(select.whereClause ?? null, false);
    return { columns: parts.columns, literals: parts.literals };
  } catch {
    return undefined;
  }
}

/**
 * True when every column and every constant of `predicate` appears in a filtering part (WHERE,
 * HAVING, JOIN … ON) of `statement` — a normalised comparison that tolerates aliases, casts,
 * operand order and formatting. A fragment that does not parse counts as present (nothing to
 * check); a statement that does not parse counts as missing.
 */
export function predicateIn(predicate: PredicateParts, statement: StatementParts): boolean {
  return (
    predicate.columns.every((c) => statement.columns.includes(c)) &&
    predicate.literals.every((l) => statement.literals.includes(l))
  );
}
