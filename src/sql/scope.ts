/**
 * Name resolution over a libpg-query parse tree: which relations a read statement uses and which
 * column references cannot be resolved, with PostgreSQL's scoping rules — FROM items and their
 * aliases, CTEs (with column lists, recursive ones included), subquery aliases, LATERAL and
 * correlated subqueries, set operations, output-column names in ORDER BY / GROUP BY, and the
 * search path. Conservative by design: whenever a name could come from something it cannot see
 * into (a function's output, a system catalog, a `*` over an unknown relation), nothing is
 * reported. Used by the identifier check (`identifiers.ts`) and the allowlist (`allowlist.ts`).
 */

import type { Json, JsonObject } from '../core/json.js';
import type { Schema, Table } from '../core/schema.js';

/** A JSON parse-tree value (the core {@link Json} type, re-exported for the SQL modules). */
export type { Json, JsonObject };

/** Columns of a FROM item: the names in order, or `open` when they cannot be known. */
export type Columns = string[] | 'open';

/** One relation the statement reads (CTE references excluded). */
export interface RelationUse {
  /** Schema as written, or null when unqualified. */
  schema: string | null;
  name: string;
  /** The catalog table it resolves to through the search path, or null (unknown or not introspected). */
  table: Table | null;
  /** Schema it resolves to (from the catalog, or as written, or the search path's first). */
  resolvedSchema: string | null;
}

/** A reference that certainly does not resolve. */
export interface UnresolvedName {
  kind: 'table' | 'column';
  /** The name as written (unquoted form). */
  name: string;
  /** Qualifier as written (`c` in `c.contry`), if any. */
  qualifier?: string;
  /** Scope the name was looked up in: the catalog table, or the FROM items in scope. */
  scopeTables: Table[];
  /** Columns visible in scope, each with the name the query uses for its FROM item (alias or table). */
  scopeColumns: { owner: string; column: string }[];
  /** Names of the FROM items in scope (aliases, or table names without an alias). */
  scopeAliases: string[];
}

/** What {@link analyzeStatement} found. */
export interface ScopeReport {
  relations: RelationUse[];
  unresolved: UnresolvedName[];
  /** RangeVar nodes the analysis did not visit (> 0 means: do not trust `relations` alone). */
  unvisitedRelations: number;
}

interface Item {
  alias: string;
  columns: Columns;
  table: Table | null;
  schema?: string;
  relname?: string;
}

interface Scope {
  items: Item[];
  parent: Scope | undefined;
  /** Output column names of the SELECT (ORDER BY / GROUP BY may use them). */
  outputNames: Set<string>;
}

interface CteEnv {
  map: Map<string, Columns>;
  parent: CteEnv | undefined;
}

/** Set-returning functions whose rows are one scalar column (so an alias list names it). */
const SCALAR_SRFS = new Set([
  'generate_series',
  'generate_subscripts',
  'unnest',
  'regexp_split_to_table',
  'string_to_table',
  'json_array_elements_text',
  'jsonb_array_elements_text',
  'json_object_keys',
  'jsonb_object_keys',
]);

/**
 * Analyses one statement (`{ SelectStmt: … }` or `{ ExplainStmt: … }`) against `schema`.
 * Never throws on unusual trees: what it cannot model it skips (and counts unvisited relations).
 */
export function analyzeStatement(stmt: JsonObject, schema: Schema | undefined): ScopeReport {
  const analyzer = new Analyzer(schema);
  const total = countRelations(stmt);
  const explain = stmt.ExplainStmt as JsonObject | undefined;
  const query = explain ? (explain.query as JsonObject | undefined) : stmt;
  const select = query?.SelectStmt as JsonObject | undefined;
  if (select) analyzer.select(select, undefined, undefined);
  return {
    relations: analyzer.relations,
    unresolved: analyzer.unresolved,
    unvisitedRelations: total - analyzer.visitedRelations,
  };
}

function isObject(value: Json | undefined): value is JsonObject {
  return value !== null && value !== undefined && typeof value === 'object' && !Array.isArray(value);
}

function list(value: Json | undefined): Json[] {
  return Array.isArray(value) ? value : [];
}

function sval(node: Json | undefined): string | undefined {
  if (!isObject(node) || !isObject(node.String)) return undefined;
  const value = node.String.sval;
  return typeof value === 'string' ? value : '';
}

function names(nodes: Json | undefined): string[] {
  return list(nodes).map((node) => sval(node) ?? '');
}

/** Number of RangeVar nodes anywhere in the tree (iterative). */
function countRelations(root: Json): number {
  let count = 0;
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (Array.isArray(value)) stack.push(...value);
    else if (isObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        if (key === 'RangeVar') count += 1;
        if (child !== null && typeof child === 'object') stack.push(child);
      }
    }
  }
  return count;
}

class Analyzer {
  relations: RelationUse[] = [];
  unresolved: UnresolvedName[] = [];
  visitedRelations = 0;

  constructor(private readonly schema: Schema | undefined) {}

  /** Analyses a SELECT body (unwrapped) and returns its output columns. */
  select(node: JsonObject, outer: Scope | undefined, ctes: CteEnv | undefined): Columns {
    let env = ctes;
    const withClause = node.withClause;
    if (isObject(withClause)) {
      env = { map: new Map(), parent: ctes };
      const recursive = withClause.recursive === true;
      for (const entry of list(withClause.ctes)) {
        const cte = isObject(entry) ? entry.CommonTableExpr : undefined;
        if (!isObject(cte)) continue;
        const name = String(cte.ctename ?? '');
        const declared = names(cte.aliascolnames);
        if (recursive) env.map.set(name, declared.length > 0 ? declared : 'open');
        const query = isObject(cte.ctequery) ? cte.ctequery.SelectStmt : undefined;
        const computed = isObject(query) ? this.select(query, outer, env) : 'open';
        env.map.set(name, renamed(computed, declared));
      }
    }
    if (typeof node.op === 'string' && node.op !== 'SETOP_NONE') {
      const left = isObject(node.larg) ? this.select(node.larg, outer, env) : 'open';
      if (isObject(node.rarg)) this.select(node.rarg, outer, env);
      const scope: Scope = {
        items: [{ alias: '', columns: 'open', table: null }],
        parent: outer,
        outputNames: new Set(),
      };
      for (const key of ['sortClause', 'limitOffset', 'limitCount']) this.expr(node[key], scope, env, true);
      return left;
    }
    if (Array.isArray(node.valuesLists)) {
      const scope: Scope = { items: [], parent: outer, outputNames: new Set() };
      this.expr(node.valuesLists, scope, env, false);
      const first = node.valuesLists[0];
      const width = isObject(first) && isObject(first.List) ? list(first.List.items).length : 0;
      return Array.from({ length: width }, (_, i) => `column${i + 1}`);
    }
    const scope: Scope = { items: [], parent: outer, outputNames: new Set() };
    for (const from of list(node.fromClause)) this.fromItem(from, scope, env);
    const targets = list(node.targetList).filter(isObject);
    for (const target of targets) {
      const rt = target.ResTarget;
      if (isObject(rt) && typeof rt.name === 'string') scope.outputNames.add(rt.name);
    }
    this.expr(node.targetList, scope, env, false);
    this.expr(node.whereClause, scope, env, false);
    this.expr(node.havingClause, scope, env, false);
    this.expr(node.windowClause, scope, env, true);
    this.expr(node.groupClause, scope, env, true);
    this.expr(node.sortClause, scope, env, true);
    this.expr(node.distinctClause, scope, env, true);
    this.expr(node.limitOffset, scope, env, false);
    this.expr(node.limitCount, scope, env, false);
    return this.outputColumns(targets, scope);
  }

  private outputColumns(targets: JsonObject[], scope: Scope): Columns {
    const out: string[] = [];
    for (const target of targets) {
      const rt = target.ResTarget;
      if (!isObject(rt)) return 'open';
      if (typeof rt.name === 'string') {
        out.push(rt.name);
        continue;
      }
      const val = rt.val;
      const ref = isObject(val) && isObject(val.ColumnRef) ? list(val.ColumnRef.fields) : undefined;
      if (
        ref &&
        ref.length > 0 &&
        isObject(ref[ref.length - 1]) &&
        'A_Star' in (ref[ref.length - 1] as JsonObject)
      ) {
        const qualifier = ref.length === 2 ? sval(ref[0]) : undefined;
        const items =
          qualifier === undefined ? scope.items : scope.items.filter((i) => i.alias === qualifier);
        if (ref.length > 2 || items.length === 0) return 'open';
        for (const item of items) {
          if (item.columns === 'open') return 'open';
          out.push(...item.columns);
        }
        continue;
      }
      const name = figureName(val);
      if (name === undefined) return 'open';
      out.push(name);
    }
    return out;
  }

  private fromItem(node: Json, scope: Scope, env: CteEnv | undefined): void {
    if (!isObject(node)) return;
    const [kind] = Object.keys(node);
    const body = kind ? node[kind] : undefined;
    if (!isObject(body)) return;
    const alias = isObject(body.alias) ? body.alias : undefined;
    const aliasName = typeof alias?.aliasname === 'string' ? alias.aliasname : undefined;
    const aliasColumns = names(alias?.colnames);
    switch (kind) {
      case 'RangeVar': {
        this.visitedRelations += 1;
        const relname = String(body.relname ?? '');
        const schemaname = typeof body.schemaname === 'string' ? body.schemaname : null;
        const cte = schemaname === null ? lookupCte(env, relname) : undefined;
        if (cte !== undefined) {
          scope.items.push({ alias: aliasName ?? relname, columns: renamed(cte, aliasColumns), table: null });
          return;
        }
        const item = this.relation(schemaname, relname);
        scope.items.push({
          ...item,
          alias: aliasName ?? relname,
          columns: renamed(item.columns, aliasColumns),
        });
        return;
      }
      case 'RangeSubselect': {
        const sub = isObject(body.subquery) ? body.subquery.SelectStmt : undefined;
        const columns = isObject(sub) ? this.select(sub, scope, env) : 'open';
        scope.items.push({ alias: aliasName ?? '', columns: renamed(columns, aliasColumns), table: null });
        return;
      }
      case 'RangeFunction': {
        this.expr(body.functions, scope, env, false);
        const calls = list(body.functions).flatMap((f) =>
          isObject(f) && isObject(f.List) ? list(f.List.items).slice(0, 1) : [],
        );
        const fnNames = calls.map((call) =>
          isObject(call) && isObject(call.FuncCall) ? lastName(call.FuncCall.funcname) : undefined,
        );
        const scalar = calls.length === 1 && body.ordinality !== true && SCALAR_SRFS.has(fnNames[0] ?? '');
        const implicit = aliasName ?? fnNames[0] ?? '';
        let columns: Columns = 'open';
        if (
          scalar &&
          isObject(calls[0]) &&
          isObject(calls[0].FuncCall) &&
          list(calls[0].FuncCall.args).length > 0
        )
          columns =
            aliasColumns.length === 1 ? aliasColumns : aliasColumns.length === 0 ? [implicit] : 'open';
        scope.items.push({ alias: implicit, columns, table: null });
        return;
      }
      case 'JoinExpr': {
        // Both sides join the same FROM list: visible to later LATERAL items and to the ON clause.
        this.fromItem(body.larg as Json, scope, env);
        this.fromItem(body.rarg as Json, scope, env);
        this.expr(body.quals, scope, env, false);
        if (aliasName !== undefined) scope.items.push({ alias: aliasName, columns: 'open', table: null });
        return;
      }
      case 'RangeTableSample':
        this.fromItem(body.relation as Json, scope, env);
        this.expr(body.args, scope, env, false);
        return;
      default:
        // XMLTABLE, JSON_TABLE and anything newer: its columns are not modelled.
        scope.items.push({ alias: aliasName ?? '', columns: 'open', table: null });
        return;
    }
  }

  /** Resolves a relation through the catalog and the search path; records it. */
  private relation(schemaname: string | null, relname: string): Item {
    const catalog = this.schema;
    const searchPath = catalog?.schemas.length ? catalog.schemas : ['public'];
    let table: Table | null = null;
    if (catalog) {
      const candidates = schemaname === null ? searchPath : [schemaname];
      for (const schemaName of candidates) {
        table = catalog.tables.find((t) => t.schema === schemaName && t.name === relname) ?? null;
        if (table) break;
      }
    }
    const resolvedSchema =
      table?.schema ?? schemaname ?? (relname.startsWith('pg_') ? 'pg_catalog' : (searchPath[0] ?? null));
    this.relations.push({ schema: schemaname, name: relname, table, resolvedSchema });
    if (table)
      return {
        alias: relname,
        columns: table.columns.map((c) => c.name),
        table,
        schema: table.schema,
        relname,
      };
    const certain =
      catalog !== undefined &&
      (schemaname === null ? !relname.startsWith('pg_') : catalog.schemas.includes(schemaname)) &&
      !/_seq$/.test(relname);
    if (certain) {
      this.unresolved.push({
        kind: 'table',
        name: relname,
        ...(schemaname === null ? {} : { qualifier: schemaname }),
        scopeTables: [],
        scopeColumns: [],
        scopeAliases: [],
      });
    }
    return { alias: relname, columns: 'open', table: null, schema: schemaname ?? undefined, relname };
  }

  /**
   * Walks an expression (or a list of them): checks column references, analyses subqueries with
   * the current scope as their outer scope. `outputOk`: unqualified names may be output columns.
   */
  private expr(node: Json | undefined, scope: Scope, env: CteEnv | undefined, outputOk: boolean): void {
    if (node === null || node === undefined || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const child of node) this.expr(child, scope, env, outputOk);
      return;
    }
    for (const [key, child] of Object.entries(node)) {
      if (key === 'ColumnRef' && isObject(child)) this.columnRef(list(child.fields), scope, outputOk);
      else if (key === 'SelectStmt' && isObject(child)) this.select(child, scope, env);
      else if (child !== null && typeof child === 'object') this.expr(child, scope, env, outputOk);
    }
  }

  private columnRef(fields: Json[], scope: Scope, outputOk: boolean): void {
    const last = fields[fields.length - 1];
    const star = isObject(last) && 'A_Star' in last;
    const parts = (star ? fields.slice(0, -1) : fields).map(sval);
    if (parts.some((p) => p === undefined)) return;
    const path = parts as string[];
    if (path.length === 0) return;
    if (path.length === 1 && !star) {
      this.unqualified(path[0]!, scope, outputOk);
      return;
    }
    if (path.length === 1 && star) {
      this.qualified(path[0]!, undefined, scope);
      return;
    }
    if (path.length === 2) this.qualified(path[0]!, star ? undefined : path[1]!, scope);
  }

  private unqualified(column: string, scope: Scope, outputOk: boolean): void {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      for (const item of s.items) {
        if (item.columns === 'open' || item.columns.includes(column) || item.alias === column) return;
      }
      if (outputOk && s === scope && s.outputNames.has(column)) return;
    }
    this.unresolved.push({ kind: 'column', name: column, ...inScope(scope) });
  }

  private qualified(qualifier: string, column: string | undefined, scope: Scope): void {
    for (let s: Scope | undefined = scope; s; s = s.parent) {
      const item = s.items.find((i) => i.alias === qualifier);
      if (item) {
        if (column === undefined || item.columns === 'open' || item.columns.includes(column)) return;
        const columns = item.columns;
        this.unresolved.push({
          kind: 'column',
          name: column,
          qualifier,
          scopeTables: item.table ? [item.table] : [],
          scopeColumns: columns.map((c) => ({ owner: qualifier, column: c })),
          scopeAliases: [qualifier],
        });
        return;
      }
      // `a.b` may also be field b of a composite column a; any open item may hide either.
      if (s.items.some((i) => i.columns === 'open' || i.columns.includes(qualifier))) return;
    }
    this.unresolved.push({ kind: 'table', name: qualifier, ...inScope(scope) });
  }
}

/** Tables and columns visible from `scope` (innermost first), for candidates. */
function inScope(scope: Scope): Pick<UnresolvedName, 'scopeTables' | 'scopeColumns' | 'scopeAliases'> {
  const scopeTables: Table[] = [];
  const scopeColumns: { owner: string; column: string }[] = [];
  const scopeAliases: string[] = [];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    for (const item of s.items) {
      if (item.table) scopeTables.push(item.table);
      const owner = item.alias || item.table?.name || '';
      if (owner) scopeAliases.push(owner);
      if (item.columns !== 'open' && owner) {
        for (const column of item.columns) scopeColumns.push({ owner, column });
      }
    }
  }
  return { scopeTables, scopeColumns, scopeAliases };
}

function lookupCte(env: CteEnv | undefined, name: string): Columns | undefined {
  for (let e = env; e; e = e.parent) {
    const found = e.map.get(name);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Applies an alias column list: the first N columns take the new names. */
function renamed(columns: Columns, aliases: string[]): Columns {
  if (aliases.length === 0) return columns;
  if (columns === 'open') return 'open';
  return [...aliases, ...columns.slice(aliases.length)];
}

function lastName(funcname: Json | undefined): string | undefined {
  const parts = list(funcname);
  return sval(parts[parts.length - 1]);
}

/** PostgreSQL's FigureColname for the common cases; undefined when not modelled. */
function figureName(val: Json | undefined): string | undefined {
  if (!isObject(val)) return undefined;
  if (isObject(val.ColumnRef)) {
    const fields = list(val.ColumnRef.fields);
    return sval(fields[fields.length - 1]);
  }
  if (isObject(val.FuncCall)) return lastName(val.FuncCall.funcname);
  if (isObject(val.TypeCast)) {
    const arg = val.TypeCast.arg;
    return isObject(arg) && (isObject(arg.ColumnRef) || isObject(arg.FuncCall)) ? figureName(arg) : undefined;
  }
  if (isObject(val.CaseExpr)) return 'case';
  if (isObject(val.CoalesceExpr)) return 'coalesce';
  if (isObject(val.A_Const) || isObject(val.A_Expr) || isObject(val.BoolExpr)) return '?column?';
  return undefined;
}
