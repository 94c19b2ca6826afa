/**
 * SQL fragments of memories (a predicate such as `customers.country = 'India'`): checked against
 * the real PostgreSQL parser and the introspected schema before they are stored, and looked for in
 * generated SQL afterwards ("is the user's standing filter applied?"). The parser is libpg-query,
 * the same one the SQL guard uses; a fragment never runs on its own.
 */
import type { Json, JsonObject } from '../core/json.js';
import type { Schema, Table } from '../core/schema.js';
import { guardSql, loadGuardParser } from '../sql/guard.js';
import { closest } from '../sql/identifiers.js';
import { parseStatements, parseTree, walkTree } from '../sql/parse-tree.js';

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
  | {
      ok: false;
      reason: string;
      /** The table or column that does not exist, as written (when that is why it failed). */
      unknown?: string;
      /** The closest real names to `unknown`, best first, as `table.column` or `table`. */
      candidates?: string[];
    };

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
    tree = parseTree(wrapper);
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
    if (!table) return unknownName(schema, 'table', [relation.name]);
    tables.add(`${table.schema}.${table.name}`);
  }
  for (const ref of refs.columns) {
    const resolved = resolveColumn(schema, ref, refs.aliases);
    if (resolved === 'alias') continue;
    if (!resolved) return unknownName(schema, 'column', ref);
    tables.add(`${resolved.table.schema}.${resolved.table.name}`);
    columns.add(`${resolved.table.schema}.${resolved.table.name}.${resolved.column}`);
  }
  return { ok: true, sql, tables: [...tables], columns: [...columns] };
}

/** Name shown for a table in suggestions: `name`, or `schema.name` outside `public`. */
function shownTable(table: Table): string {
  return table.schema === 'public' ? table.name : `${table.schema}.${table.name}`;
}

/**
 * The failure for a table or column that is not in `schema`, with the closest real names
 * ("did you mean customers.country?"): for a column, the columns of the named table first, then
 * every column of that name's spelling; for a table, every table.
 */
function unknownName(schema: Schema, kind: 'table' | 'column', ref: string[]): FragmentCheck {
  const written = ref.join('.');
  let candidates: string[];
  if (kind === 'table') {
    candidates = closest(
      ref[ref.length - 1]!,
      schema.tables.map((t) => ({ key: t.name, text: shownTable(t) })),
    );
  } else {
    const name = ref[ref.length - 1]!;
    const owner =
      ref.length >= 2
        ? findTable(schema, ref.length >= 3 ? ref[ref.length - 3] : undefined, ref[ref.length - 2]!)
        : undefined;
    const pool = (tables: Table[]) =>
      tables.flatMap((t) => t.columns.map((c) => ({ key: c.name, text: `${shownTable(t)}.${c.name}` })));
    candidates = owner ? closest(name, pool([owner])) : [];
    if (candidates.length === 0) candidates = closest(name, pool(schema.tables));
    if (candidates.length === 0 && ref.length >= 2 && !owner) {
      // The table part is the misspelt one (`customer.country`): suggest table.column pairs.
      candidates = closest(
        written,
        schema.tables.flatMap((t) =>
          t.columns.map((c) => ({ key: `${t.name}.${c.name}`, text: `${shownTable(t)}.${c.name}` })),
        ),
      );
    }
  }
  const hint = candidates.length > 0 ? `; did you mean ${candidates.join(' or ')}?` : '';
  return { ok: false, reason: `the ${kind} ${written} does not exist${hint}`, unknown: written, candidates };
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
  walkTree(root, (key, node) => {
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
  /**
   * Comparisons that must all hold (the top-level AND conjuncts of a predicate; for a statement,
   * the AND conjuncts of every WHERE, HAVING and JOIN … ON clause), each normalised to
   * `column op constant` by {@link conditionKey}: `status <> 's:delivered'`, `total > n:10000`,
   * `country in [s:Chile,s:Peru]`. Conjuncts under OR or NOT are not listed (they do not hold on
   * their own). Optional so that hand-built parts stay valid; absent means "not compared".
   */
  conditions?: string[];
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

/** A comparison operand: a column (`c:<name>`) or a constant (as in {@link constantOf}), casts unwrapped. */
function operandOf(node: Json | undefined): string | undefined {
  let current = node;
  while (current && typeof current === 'object' && !Array.isArray(current) && current.TypeCast) {
    current = (current.TypeCast as JsonObject).arg;
  }
  if (!current || typeof current !== 'object' || Array.isArray(current)) return undefined;
  if (current.A_Const) return constantOf(current.A_Const as JsonObject);
  if (current.ColumnRef) {
    const fields = ((current.ColumnRef as JsonObject).fields as JsonObject[] | undefined) ?? [];
    const last = (fields[fields.length - 1]?.String as JsonObject | undefined)?.sval;
    return typeof last === 'string' ? `c:${last.toLowerCase()}` : undefined;
  }
  return undefined;
}

/** The operator seen from the other side: `5 < x` is `x > 5`. */
const FLIPPED: Record<string, string> = { '<': '>', '>': '<', '<=': '>=', '>=': '<=', '=': '=', '<>': '<>' };

/** Constants of an IN list / ARRAY[…], sorted; undefined when any item is not a constant. */
function constantList(node: Json | undefined): string[] | undefined {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return undefined;
  const items = ((node.List as JsonObject | undefined)?.items ??
    (node.A_ArrayExpr as JsonObject | undefined)?.elements) as Json[] | undefined;
  if (!Array.isArray(items)) return undefined;
  const out: string[] = [];
  for (const item of items) {
    const constant = operandOf(item);
    if (!constant || constant.startsWith('c:')) return undefined;
    out.push(constant);
  }
  return out.sort();
}

/**
 * The normalised key of one comparison node, or undefined when it is not a comparison of a column
 * with constants (or with another column). Normalisation: casts dropped, column on the left (the
 * operator flipped when it was on the right), `IN (one)` and `= ANY(ARRAY[one])` read as `=`,
 * `NOT IN` as `not in`, list items sorted. Examples: `status <> s:delivered`, `total > n:10000`.
 */
export function conditionKey(node: JsonObject): string | undefined {
  if (node.NullTest) {
    const test = node.NullTest as JsonObject;
    const column = operandOf(test.arg);
    if (!column?.startsWith('c:')) return undefined;
    return `${column.slice(2)} ${test.nulltesttype === 'IS_NOT_NULL' ? 'is not' : 'is'} null`;
  }
  const expr = node.A_Expr as JsonObject | undefined;
  if (!expr) return undefined;
  const name = ((expr.name as JsonObject[] | undefined)?.at(-1)?.String as JsonObject | undefined)?.sval;
  const op = typeof name === 'string' ? name.toLowerCase() : undefined;
  const kind = String(expr.kind ?? 'AEXPR_OP');
  const left = operandOf(expr.lexpr);
  const right = operandOf(expr.rexpr);
  if (kind === 'AEXPR_IN' || (kind === 'AEXPR_OP_ANY' && op === '=')) {
    const list = constantList(expr.rexpr);
    if (!left?.startsWith('c:') || !list) return undefined;
    const negated = kind === 'AEXPR_IN' && op === '<>';
    if (list.length === 1) return `${left.slice(2)} ${negated ? '<>' : '='} ${list[0]}`;
    return `${left.slice(2)} ${negated ? 'not in' : 'in'} [${list.join(',')}]`;
  }
  if (kind.startsWith('AEXPR_BETWEEN') || kind.startsWith('AEXPR_NOT_BETWEEN')) {
    const list = (((expr.rexpr as JsonObject | undefined)?.List as JsonObject | undefined)?.items ??
      []) as Json[];
    const bounds = list.map(operandOf);
    if (!left?.startsWith('c:') || bounds.length !== 2 || bounds.some((b) => !b)) return undefined;
    return `${left.slice(2)} ${kind.toLowerCase().replace('aexpr_', '').replace(/_/g, ' ')} ${bounds.join(' and ')}`;
  }
  if (!op || !left || !right) return undefined;
  if (
    kind !== 'AEXPR_OP' &&
    kind !== 'AEXPR_LIKE' &&
    kind !== 'AEXPR_ILIKE' &&
    kind !== 'AEXPR_DISTINCT' &&
    kind !== 'AEXPR_NOT_DISTINCT'
  ) {
    return undefined;
  }
  const tag =
    kind === 'AEXPR_DISTINCT'
      ? 'is distinct from'
      : kind === 'AEXPR_NOT_DISTINCT'
        ? 'is not distinct from'
        : op;
  const symmetric = tag === '=' || tag === '<>' || tag.startsWith('is ');
  const flipped = FLIPPED[tag] ?? (symmetric ? tag : undefined);
  const leftColumn = left.startsWith('c:');
  const rightColumn = right.startsWith('c:');
  if (leftColumn && (!rightColumn || left <= right || flipped === undefined)) {
    return `${left.slice(2)} ${tag} ${rightColumn ? `@${right.slice(2)}` : right}`;
  }
  if (rightColumn && flipped !== undefined) {
    return `${right.slice(2)} ${flipped} ${leftColumn ? `@${left.slice(2)}` : left}`;
  }
  return undefined;
}

/** Adds the keys of the AND conjuncts of `root` (a WHERE / HAVING / ON expression) to `out`. */
function collectConditions(root: Json, out: Set<string>): void {
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const node = stack.pop();
    if (!node || typeof node !== 'object' || Array.isArray(node)) continue;
    const bool = node.BoolExpr as JsonObject | undefined;
    if (bool) {
      if (bool.boolop === 'AND_EXPR' && Array.isArray(bool.args)) stack.push(...bool.args);
      continue;
    }
    const key = conditionKey(node);
    if (key) out.add(key);
  }
}

function collectParts(root: Json, filterOnly: boolean): StatementParts {
  const columns = new Set<string>();
  const literals = new Set<string>();
  const tables = new Set<string>();
  const conditions = new Set<string>();
  if (!filterOnly) collectConditions(root, conditions);
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
      const root = key === 'whereClause' || key === 'havingClause' || key === 'quals';
      if (filterOnly && root) collectConditions(child, conditions);
      const filtering = inFilter || root;
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
  return { columns: [...columns], literals: [...literals], tables: [...tables], conditions: [...conditions] };
}

/** Parses `sql` (one statement) into its parts; undefined when it does not parse. */
export async function statementParts(sql: string): Promise<StatementParts | undefined> {
  try {
    await loadGuardParser();
    return collectParts(parseTree(sql), true);
  } catch {
    return undefined;
  }
}

/** Columns and constants of a fragment; undefined when it does not parse. */
export async function predicateParts(fragment: string): Promise<PredicateParts | undefined> {
  try {
    await loadGuardParser();
    const stmt = parseStatements(`SELECT 1 WHERE (${fragment})`)[0];
    const select = stmt?.SelectStmt as JsonObject | undefined;
    if (!select) return undefined;
    const parts = collectParts(select.whereClause ?? null, false);
    return { columns: parts.columns, literals: parts.literals, conditions: parts.conditions };
  } catch {
    return undefined;
  }
}

/**
 * True when `predicate` is verified in `statement`: every column and every constant of it appears
 * in a filtering part (WHERE, HAVING, JOIN … ON), and every comparison among its top-level AND
 * conjuncts ({@link PredicateParts.conditions}) is an AND conjunct of one of those clauses with the
 * same operator and constant — so `status <> 'delivered'`, `NOT (status = 'delivered')` or
 * `status = 'delivered' OR true` do not count as applying `status = 'delivered'`. The
 * comparison tolerates aliases, casts, operand order (`10000 < total` is `total > 10000`) and
 * formatting. A predicate whose top level is not a comparison (an OR, a function) is checked by
 * columns and constants only. Callers treat a fragment that does not parse as present and a
 * statement that does not parse as missing.
 */
export function predicateIn(predicate: PredicateParts, statement: StatementParts): boolean {
  return (
    predicate.columns.every((c) => statement.columns.includes(c)) &&
    predicate.literals.every((l) => statement.literals.includes(l)) &&
    (predicate.conditions ?? []).every((c) => (statement.conditions ?? []).includes(c))
  );
}
