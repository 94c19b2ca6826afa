/**
 * Data policies enforced in the statement itself: one read statement (already accepted by the
 * guard) and one user's {@link EffectivePolicy} in, the statement that user may run out, or a
 * refusal that names the policy. Pure: the catalog facts it needs come in as a {@link PolicyCatalog}.
 *
 * How it enforces, on libpg-query's parse tree:
 * - every reference to a relation with a row filter or denied columns becomes a subquery
 *   `(SELECT <permitted columns> FROM ONLY? schema.table WHERE (<filter>) OFFSET 0) AS alias`,
 *   spliced in at the reference's byte location. Denied columns therefore do not exist for the
 *   statement (`*`, `t.*`, NATURAL JOIN, whole-row values and positional alias lists see only the
 *   permitted ones), and only permitted rows do. `OFFSET 0` keeps the planner from pushing the
 *   user's own conditions below the filter, where an error message (a failing cast) could show a
 *   value of a row the filter hides;
 * - the filter's attribute values are bind parameters (`$1`, `$2`, … renumbered per statement);
 * - naming a denied column anywhere (select list, WHERE, ORDER BY, USING, a subquery, a CTE, a
 *   function argument, a field selection) is refused with the policy's name, and so is a
 *   whole-row value of a relation with denied columns (`t`, `row_to_json(t)`, `t::text`,
 *   `ROW(t.*)`) even though the rewrite would strip it;
 * - refused outright: relations outside the allow-list, the statistics catalogs (they hold column
 *   values), TOAST tables, views, materialized views, child tables and functions that read a
 *   policed relation without a policy of their own, TABLESAMPLE and EXPLAIN over a policed
 *   relation, bind parameters written by the user, and an unqualified name that could mean a
 *   policed relation in another schema;
 * - the rewritten text is parsed again and every policed relation must sit exactly where the
 *   rewrite put it, inside its filtered subquery (fail closed).
 */
import type { Json, JsonObject } from '../core/json.js';
import { type EffectivePolicy, policyLabel, type RowFilter, restrictsData } from '../policy/types.js';
import { SESSION_TEXT_FUNCTIONS, SESSION_TEXT_RELATIONS } from './function-rules.js';
import { type ParsedText, parseForGuard } from './guard.js';
import { isJsonObject, parseTree, type SqlToken, scanTokens } from './parse-tree.js';

/** One relation of the database, as the policy rewrite needs it. */
export interface PolicyRelation {
  schema: string;
  name: string;
  /** `pg_class.relkind`: `r` table, `p` partitioned, `v` view, `m` materialized view, `f` foreign. */
  kind: string;
  /** Column names in order (attnum > 0, not dropped). */
  columns: readonly string[];
}

/** What the rewrite knows of the database: read by `databases/policed.ts`, or built in tests. */
export interface PolicyCatalog {
  /** Every relation (system catalogs included), by qualified key `schema.name`. */
  relations: ReadonlyMap<string, PolicyRelation>;
  /** The connection's search path (`current_schemas(false)`), in order. */
  searchPath: readonly string[];
  /** Definitions of views and materialized views, by qualified key. */
  definitions: ReadonlyMap<string, string>;
  /** Bodies of user-defined SQL and PL/pgSQL functions (any schema but the system ones). */
  functions: readonly { schema: string; name: string; body: string }[];
  /** Parents of each inheritance child or partition, by qualified key. */
  parents: ReadonlyMap<string, readonly string[]>;
}

/** The outcome of {@link rewriteForPolicy}. */
export type PolicyRewrite =
  | {
      ok: true;
      /** The statement to run (unchanged when nothing of it is policed). */
      sql: string;
      /** Bind values of `$1`, `$2`, … in `sql`. */
      params: string[];
      /** What was enforced, for the audit: `row filter on public.orders (team sales)`, … */
      applied: string[];
      /**
       * The parse of `sql` made while checking it (absent for a policy that restricts nothing),
       * for the guard's second check; the caller owns it.
       */
      parsed?: ParsedText;
    }
  | {
      ok: false;
      /** Why, naming the policy: `column salary of public.employees is denied by team sales`. */
      reason: string;
      /** `policy-column`, `policy-whole-row`, `policy-table`, `policy-view`, … */
      rule: string;
      /** The policy that refused (a source like `team sales`), when one did. */
      policy?: string;
    };

/** Relations of `pg_catalog` whose rows hold values of other tables' columns. */
export const STATISTICS_RELATIONS: readonly string[] = [
  'pg_stats',
  'pg_statistic',
  'pg_stats_ext',
  'pg_stats_ext_exprs',
  'pg_statistic_ext_data',
];

/**
 * Relations of `pg_catalog` whose rows count or size other tables' rows (`reltuples`,
 * `n_live_tup`, block counts, a sequence's last value): under a row filter they tell how many rows
 * exist beyond it.
 */
export const ROW_COUNT_RELATIONS: readonly string[] = [
  'pg_class',
  'pg_sequences',
  // Tuples fetched, returned, inserted… of the whole database: the difference tells filtered rows.
  'pg_stat_database',
  ...['all', 'user', 'sys'].flatMap((k) => [
    `pg_stat_${k}_tables`,
    `pg_stat_xact_${k}_tables`,
    `pg_statio_${k}_tables`,
    `pg_stat_${k}_indexes`,
    `pg_statio_${k}_indexes`,
    `pg_statio_${k}_sequences`,
  ]),
  ...['analyze', 'vacuum', 'cluster', 'create_index', 'copy'].map((k) => `pg_stat_progress_${k}`),
];

/** Built-in functions that count or size a table's rows (by name; `pg_stat_get_*` as a family). */
const ROW_COUNT_FUNCTIONS = new Set([
  'pg_relation_size',
  'pg_total_relation_size',
  'pg_table_size',
  'pg_indexes_size',
  'pg_sequence_last_value',
]);

/**
 * Refuses the relations and functions that show the statement texts of other sessions
 * (`pg_stat_activity`, `pg_stat_statements`, in any schema): every user of sqlrecall shares the
 * connection role, so they would show another user's statements, and the values written in them.
 */
function checkSessionTexts(nodes: CheckedNodes, policy: EffectivePolicy): void {
  const who = policyLabel(policy);
  for (const [key, node] of nodes) {
    const name =
      key === 'RangeVar'
        ? String(node.relname ?? '').toLowerCase()
        : key === 'FuncCall' && Array.isArray(node.funcname)
          ? (node.funcname.map(stringOf).pop() ?? '').toLowerCase()
          : undefined;
    if (name === undefined) continue;
    if (
      SESSION_TEXT_RELATIONS.includes(name) ||
      SESSION_TEXT_FUNCTIONS.includes(name) ||
      name === 'pg_stat_statements_info'
    )
      throw new Refusal(
        'policy-statistics',
        `refused: ${name} shows the statements of other users, with the values they wrote; it is not available under the data policy (${who})`,
        who,
      );
  }
}

/** Refuses a statement that reads row counts or sizes of relations (see {@link ROW_COUNT_RELATIONS}). */
function checkRowCounts(nodes: CheckedNodes, policy: EffectivePolicy, keys: readonly string[]): void {
  const who = policyLabel(policy);
  for (const key of keys)
    if (key.startsWith('pg_catalog.') && ROW_COUNT_RELATIONS.includes(key.slice('pg_catalog.'.length)))
      throw new Refusal(
        'policy-statistics',
        `refused: ${key} counts the rows of restricted tables, those the data policy (${who}) hides included; it is not available under the data policy`,
        who,
      );
  for (const [key, node] of nodes) {
    if (key !== 'FuncCall') continue;
    const parts = (Array.isArray(node.funcname) ? node.funcname : []).map(stringOf);
    const name = parts[parts.length - 1]?.toLowerCase() ?? '';
    if (ROW_COUNT_FUNCTIONS.has(name) || name.startsWith('pg_stat_get_'))
      throw new Refusal(
        'policy-statistics',
        `refused: ${name} counts or sizes the rows of tables, those the data policy (${who}) hides included; it is not available under the data policy`,
        who,
      );
  }
}

/**
 * Built-in functions that describe catalog objects by name or OID: comments (a denied column's or
 * a hidden table's), view, function, index, rule and constraint definitions (their text quotes
 * what a view filters on), object names and privileges (which confirm a hidden table exists), and
 * record functions that name a table's row type (`json_populate_record(null::t, …)` lists its
 * columns). The schema each user sees already holds what they may know of the catalog.
 */
const CATALOG_DESCRIBING_FUNCTIONS = new Set([
  'col_description',
  'obj_description',
  'shobj_description',
  'pg_describe_object',
  'pg_identify_object',
  'pg_identify_object_as_address',
  'pg_get_object_address',
  'to_regclass',
  'to_regtype',
  'to_regproc',
  'to_regprocedure',
  'to_regnamespace',
  'has_table_privilege',
  'has_column_privilege',
  'has_any_column_privilege',
  'has_sequence_privilege',
  'has_function_privilege',
  'json_populate_record',
  'json_populate_recordset',
  'jsonb_populate_record',
  'jsonb_populate_recordset',
  'jsonb_populate_record_valid',
]);

/** Built-in type names a cast commonly names (the parser's own spellings included). */
const BUILT_IN_TYPE_NAMES = new Set(
  (
    'text varchar bpchar char character name int int2 int4 int8 integer smallint bigint numeric decimal ' +
    'real float4 float8 double date time timetz timestamp timestamptz interval boolean bool json jsonb ' +
    'uuid bytea money inet cidr macaddr xml oid regclass regtype regproc tsvector tsquery bit varbit'
  ).split(' '),
);

/**
 * Refuses, for a user whose policy restricts data, calls that describe catalog objects (see
 * {@link CATALOG_DESCRIBING_FUNCTIONS}, and every `pg_get_*def` / `pg_get_expr` / `pg_get_function_*`)
 * and casts to a table's row type (`null::employees`, whose columns a record function would list).
 */
function checkCatalogDescriptions(
  nodes: CheckedNodes,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
): void {
  const who = policyLabel(policy);
  const tableNames = new Set([...catalog.relations.values()].map((r) => r.name.toLowerCase()));
  for (const [key, node] of nodes) {
    if (key === 'FuncCall') {
      const parts = (Array.isArray(node.funcname) ? node.funcname : []).map(stringOf);
      const name = parts[parts.length - 1]?.toLowerCase() ?? '';
      if (
        CATALOG_DESCRIBING_FUNCTIONS.has(name) ||
        /^pg_get_\w*def$/.test(name) ||
        name === 'pg_get_expr' ||
        name.startsWith('pg_get_function_')
      )
        throw new Refusal(
          'policy-catalog',
          `refused: ${name} describes catalog objects (comments, definitions, names) the data policy (${who}) may hide; the schema shows what you may read`,
          who,
        );
    }
    if (key === 'TypeCast' && isJsonObject(node.typeName)) {
      const names = (Array.isArray(node.typeName.names) ? node.typeName.names : []).map(stringOf);
      const name = names[names.length - 1]?.toLowerCase() ?? '';
      // An unqualified built-in type name finds pg_catalog's type first, whatever tables exist.
      const builtIn = names.length === 1 ? BUILT_IN_TYPE_NAMES.has(name) : names[0] === 'pg_catalog';
      if (tableNames.has(name) && !builtIn)
        throw new Refusal(
          'policy-catalog',
          `refused: a cast to the row type of ${name} would name its columns, those the data policy (${who}) denies included; name the columns instead`,
          who,
        );
    }
  }
}

/** Schemas of the system: their relations are never policed, and never shadow-checked. */
const SYSTEM_SCHEMAS = new Set(['pg_catalog', 'information_schema']);

/** A qualified key: `schema.name`, unquoted. */
export function relationKey(schema: string, name: string): string {
  return `${schema}.${name}`;
}

/** A policy refusal (the caller turns it into an error). */
class Refusal extends Error {
  constructor(
    readonly rule: string,
    readonly reason: string,
    readonly policy?: string,
  ) {
    super(reason);
  }
}

/** One RangeVar of the statement, resolved. */
interface RelationRef {
  node: JsonObject;
  key: string;
  alias: string;
  hasAlias: boolean;
  sampled: boolean;
}

/** What a policy makes of the catalog: computed once per (policy, catalog) pair. */
interface PolicyView {
  policed: Set<string>;
  /** Relations reading a policed one without a policy of their own → the policed one they read. */
  tainted: Map<string, string>;
  /** Function names (last part, lower-case) whose body reads a policed or tainted relation. */
  taintedFunctions: Map<string, string>;
  /** relname → keys of policed or tainted relations with that name (for unqualified names). */
  guardedNames: Map<string, string[]>;
}

const views = new WeakMap<EffectivePolicy, WeakMap<PolicyCatalog, PolicyView>>();

/**
 * Rewrites one statement for one user's policy, or refuses it. Never throws: a tree it cannot
 * read refuses with rule `policy-internal`. A policy that restricts nothing returns the text as is.
 * @param sql one statement the guard accepted (no trailing semicolon needed)
 * @param given the parse of `sql` the guard made (`takeGuardedParse`), handed over to spare a
 *   second parse; default: parse `sql` here. Ignored when it is of another text.
 */
export function rewriteForPolicy(
  sql: string,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
  given?: ParsedText,
): PolicyRewrite {
  if (!restrictsData(policy)) return { ok: true, sql, params: [], applied: [] };
  try {
    return rewrite(sql, policy, catalog, given?.sql === sql ? given : undefined);
  } catch (error) {
    if (error instanceof Refusal)
      return {
        ok: false,
        reason: error.reason,
        rule: error.rule,
        ...(error.policy !== undefined ? { policy: error.policy } : {}),
      };
    return {
      ok: false,
      rule: 'policy-internal',
      reason: `refused: the statement could not be checked against the data policy (${error instanceof Error ? error.message : String(error)})`,
    };
  }
}

function rewrite(
  sql: string,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
  given: ParsedText | undefined,
): PolicyRewrite {
  const view = policyView(policy, catalog);
  const tree = given?.tree ?? parseForGuard(sql);
  const stmts = Array.isArray(tree.stmts) ? tree.stmts : [];
  if (stmts.length !== 1 || !isJsonObject(stmts[0]) || !isJsonObject(stmts[0].stmt))
    throw new Refusal('policy-internal', 'refused: exactly one statement is checked against the data policy');
  const stmt = stmts[0].stmt;
  // One walk over the tree gathers the nodes every check below reads, in the walk's order: each
  // check sees the nodes it reads in the order a walk of its own would, so the first offence it
  // finds is the same.
  const nodes = checkedNodes(stmt);
  if (nodes.some(([key]) => key === 'ParamRef'))
    throw new Refusal(
      'policy-params',
      'refused: bind parameters ($1) cannot be used in a statement under a data policy; write the values',
    );
  const explain = 'ExplainStmt' in stmt;
  checkCatalogDescriptions(nodes, policy, catalog);
  checkSessionTexts(nodes, policy);
  const refs = collectRelations(stmt, policy, catalog, view);
  if (policy.rowFilters.size > 0)
    checkRowCounts(
      nodes,
      policy,
      refs.map((ref) => ref.key),
    );
  // In text order: parameters are numbered, and the first offence reported, as they are written.
  const policedRefs = refs
    .filter((ref) => view.policed.has(ref.key))
    .sort((a, b) => Number(a.node.location ?? 0) - Number(b.node.location ?? 0));
  if (policedRefs.length === 0) {
    checkColumns(nodes, refs, policy, [], view);
    // Nothing to rewrite: the text runs as is, and its parse serves the guard's second check.
    return { ok: true, sql, params: [], applied: [], parsed: { ...given, sql, tree } };
  }
  if (explain)
    throw new Refusal(
      'policy-explain',
      `refused: EXPLAIN of a statement over ${policedRefs[0]!.key} would show estimates of rows the data policy (${policyNames(policy, policedRefs[0]!.key)}) hides`,
      policyNames(policy, policedRefs[0]!.key),
    );
  for (const ref of policedRefs) {
    if (ref.sampled)
      throw new Refusal(
        'policy-tablesample',
        `refused: TABLESAMPLE of ${ref.key} is not available under the data policy (${policyNames(policy, ref.key)})`,
        policyNames(policy, ref.key),
      );
  }
  checkColumns(nodes, refs, policy, policedRefs, view);
  return splice(sql, given?.tokens ?? scanTokens(sql), policedRefs, policy, catalog);
}

/** The names of the policies behind `key`'s restrictions (`team sales`), or the user's sources. */
function policyNames(policy: EffectivePolicy, key: string): string {
  const names = new Set<string>();
  for (const name of policy.deniedColumns.get(key)?.values() ?? []) names.add(name);
  for (const filter of policy.rowFilters.get(key) ?? []) names.add(filter.policy);
  if (names.size === 0) for (const source of policy.sources) names.add(source);
  return [...names].join(', ') || `the policy of ${policy.user}`;
}

// ---------------------------------------------------------------------------------------------
// What the policy makes of the catalog

function policyView(policy: EffectivePolicy, catalog: PolicyCatalog): PolicyView {
  let byCatalog = views.get(policy);
  if (!byCatalog) {
    byCatalog = new WeakMap();
    views.set(policy, byCatalog);
  }
  const cached = byCatalog.get(catalog);
  if (cached) return cached;
  const policed = new Set<string>([...policy.deniedColumns.keys(), ...policy.rowFilters.keys()]);
  const tainted = new Map<string, string>();
  const taintedFunctions = new Map<string, string>();
  const namesOf = (): string[] => [
    ...[...policed, ...tainted.keys()].map((key) => key.slice(key.indexOf('.') + 1)),
    ...taintedFunctions.keys(),
  ];
  // A view, materialized view, child table or function reading a guarded relation (or calling a
  // guarded function) is guarded too, until nothing changes. Names are matched as words anywhere
  // in the definition (comments and strings included): more refusals, never fewer.
  for (let changed = true; changed; ) {
    changed = false;
    const pattern = wordsPattern(namesOf());
    for (const [child, parents] of catalog.parents) {
      if (policed.has(child) || tainted.has(child)) continue;
      const parent = parents.find((p) => policed.has(p) || tainted.has(p));
      if (parent !== undefined) {
        tainted.set(child, tainted.get(parent) ?? parent);
        changed = true;
      }
    }
    if (!pattern) continue;
    for (const [key, definition] of catalog.definitions) {
      if (policed.has(key) || tainted.has(key)) continue;
      const hit = firstMatch(pattern, definition);
      if (hit !== undefined) {
        tainted.set(key, hit);
        changed = true;
      }
    }
    for (const fn of catalog.functions) {
      const name = fn.name.toLowerCase();
      if (taintedFunctions.has(name)) continue;
      const hit = firstMatch(pattern, fn.body);
      if (hit !== undefined) {
        taintedFunctions.set(name, `${fn.schema}.${fn.name} (reads ${hit})`);
        changed = true;
      }
    }
  }
  const guardedNames = new Map<string, string[]>();
  for (const key of [...policed, ...tainted.keys()]) {
    const name = relationOf(key, catalog).name;
    guardedNames.set(name, [...(guardedNames.get(name) ?? []), key]);
  }
  const result = { policed, tainted, taintedFunctions, guardedNames };
  byCatalog.set(catalog, result);
  return result;
}

/** `schema` and `name` of a key, from the catalog (a name may itself hold dots) or by splitting. */
function relationOf(key: string, catalog: PolicyCatalog): { schema: string; name: string } {
  const known = catalog.relations.get(key);
  if (known) return known;
  const dot = key.indexOf('.');
  return { schema: key.slice(0, dot), name: key.slice(dot + 1) };
}

function wordsPattern(names: readonly string[]): RegExp | undefined {
  const unique = [...new Set(names.filter((name) => name !== ''))];
  if (unique.length === 0) return undefined;
  const escaped = unique.map((name) => name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`(?<![\\w$])(${escaped.join('|')})(?![\\w$])`, 'iu');
}

function firstMatch(pattern: RegExp, text: string): string | undefined {
  return pattern.exec(text)?.[1];
}

// ---------------------------------------------------------------------------------------------
// Relations

/**
 * Every RangeVar of the statement that is not a CTE reference, resolved through the search path,
 * with the refusals that need only the relation (allow-list, statistics, guarded views).
 */
function collectRelations(
  stmt: JsonObject,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
  view: PolicyView,
): RelationRef[] {
  const refs: RelationRef[] = [];
  visitRelations(stmt, (node, sampled) => {
    const key = resolve(node, policy, catalog, view);
    checkRelation(key, policy, view);
    const alias = isJsonObject(node.alias) ? node.alias : undefined;
    refs.push({
      node,
      key,
      alias: typeof alias?.aliasname === 'string' ? alias.aliasname : String(node.relname ?? ''),
      hasAlias: alias !== undefined,
      sampled,
    });
  });
  return refs;
}

/**
 * Calls `visit` for every RangeVar of the tree that names a relation (not a CTE in scope), with
 * whether it is the relation of a TABLESAMPLE. Any SelectStmt's WITH clause scopes its names:
 * for its body, for later siblings, and (WITH RECURSIVE) for every sibling.
 */
export function visitRelations(root: JsonObject, visit: (node: JsonObject, sampled: boolean) => void): void {
  const stack: { value: Json; ctes: ReadonlySet<string>; sampled: boolean }[] = [
    { value: root, ctes: new Set(), sampled: false },
  ];
  while (stack.length > 0) {
    const { value, ctes, sampled } = stack.pop()!;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, ctes, sampled: false });
      continue;
    }
    if (!isJsonObject(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      if (!isJsonObject(child)) {
        if (Array.isArray(child)) stack.push({ value: child, ctes, sampled: false });
        continue;
      }
      if (key === 'RangeVar') {
        const name = String(child.relname ?? '');
        const isCte =
          typeof child.schemaname !== 'string' && typeof child.catalogname !== 'string' && ctes.has(name);
        if (!isCte) visit(child, sampled);
        continue;
      }
      if (key === 'RangeTableSample') {
        stack.push({ value: child.relation ?? null, ctes, sampled: true });
        stack.push({ value: child.args ?? null, ctes, sampled: false });
        continue;
      }
      if (key === 'SelectStmt' && isJsonObject(child.withClause)) {
        const withClause = child.withClause;
        const entries = (Array.isArray(withClause.ctes) ? withClause.ctes : [])
          .map((entry) =>
            isJsonObject(entry) && isJsonObject(entry.CommonTableExpr) ? entry.CommonTableExpr : undefined,
          )
          .filter((entry): entry is JsonObject => entry !== undefined);
        const all = new Set([...ctes, ...entries.map((entry) => String(entry.ctename ?? ''))]);
        const recursive = withClause.recursive === true;
        const seen = new Set(ctes);
        for (const entry of entries) {
          stack.push({
            value: entry.ctequery ?? null,
            ctes: recursive ? all : new Set(seen),
            sampled: false,
          });
          seen.add(String(entry.ctename ?? ''));
        }
        const { withClause: _skip, ...body } = child;
        stack.push({ value: body, ctes: all, sampled: false });
        continue;
      }
      stack.push({ value: child, ctes, sampled: false });
    }
  }
}

/**
 * The qualified key a RangeVar resolves to. Unqualified names follow the server: `pg_catalog`
 * first, then the search path. Fail closed: an unqualified name that resolves to an unguarded
 * relation while a guarded one of the same name exists elsewhere is refused, since the server's
 * search path might pick the other.
 */
function resolve(
  node: JsonObject,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
  view: PolicyView,
): string {
  const name = String(node.relname ?? '');
  if (typeof node.catalogname === 'string')
    throw new Refusal(
      'policy-table',
      `refused: ${node.catalogname}.${node.schemaname}.${name} names a database; under a data policy name relations as schema.table`,
    );
  if (typeof node.schemaname === 'string') return relationKey(node.schemaname, name);
  const order = ['pg_catalog', ...catalog.searchPath.filter((schema) => schema !== 'pg_catalog')];
  const found = order.find((schema) => catalog.relations.has(relationKey(schema, name)));
  const guarded = view.guardedNames.get(name) ?? [];
  if (found !== undefined) {
    const key = relationKey(found, name);
    if (guarded.length > 0 && !guarded.includes(key) && !SYSTEM_SCHEMAS.has(found))
      throw new Refusal(
        'policy-ambiguous',
        `refused: ${name} could mean ${guarded.join(' or ')}, restricted by the data policy (${policyNames(policy, guarded[0]!)}); write the schema name`,
        policyNames(policy, guarded[0]!),
      );
    return key;
  }
  if (guarded.length === 1) return guarded[0]!;
  if (guarded.length > 1)
    throw new Refusal(
      'policy-ambiguous',
      `refused: ${name} could mean ${guarded.join(' or ')}; write the schema name`,
      policyNames(policy, guarded[0]!),
    );
  // Unknown to the catalog: the server will report it (or find it where no policy applies).
  return relationKey(order[1] ?? 'public', name);
}

function checkRelation(key: string, policy: EffectivePolicy, view: PolicyView): void {
  const dot = key.indexOf('.');
  const schema = key.slice(0, dot);
  const name = key.slice(dot + 1);
  const who = policyLabel(policy);
  if (schema === 'pg_catalog' && STATISTICS_RELATIONS.includes(name))
    throw new Refusal(
      'policy-statistics',
      `refused: ${key} holds column values of restricted tables; it is not available under the data policy (${who})`,
      who,
    );
  if (schema === 'pg_toast' || schema.startsWith('pg_toast_temp'))
    throw new Refusal(
      'policy-statistics',
      `refused: ${key} holds the stored values of other tables; it is not available under the data policy (${who})`,
      who,
    );
  if (policy.tables !== undefined && !policy.tables.has(key))
    throw new Refusal(
      'policy-table',
      `refused: ${key} is not among the tables the data policy (${who}) lets ${policy.user} read`,
      who,
    );
  const base = view.tainted.get(key);
  if (base !== undefined)
    throw new Refusal(
      'policy-view',
      `refused: ${key} reads ${base}, which the data policy (${policyNames(policy, relationKeyOfName(base, view))}) restricts, and ${key} has no policy of its own`,
      policyNames(policy, relationKeyOfName(base, view)),
    );
}

/** The guarded key a matched word refers to (the word itself when it is not a relation name). */
function relationKeyOfName(word: string, view: PolicyView): string {
  const lower = word.toLowerCase();
  for (const [name, keys] of view.guardedNames) if (name.toLowerCase() === lower) return keys[0]!;
  return word;
}

// ---------------------------------------------------------------------------------------------
// Columns, whole-row values and functions

/**
 * Refuses denied columns, whole-row values of relations with denied columns and functions that
 * read policed data. `all`: every relation reference of the statement; `refs`: the policed ones.
 */
function checkColumns(
  nodes: CheckedNodes,
  all: readonly RelationRef[],
  policy: EffectivePolicy,
  refs: RelationRef[],
  view: PolicyView,
): void {
  /** Denied column → (relation key, policy) of the relations the statement reads. */
  const denied = new Map<string, { key: string; policy: string }>();
  /** Alias (or table name) → key, for policed relations with denied columns. */
  const aliases = new Map<string, string>();
  for (const ref of refs) {
    const columns = policy.deniedColumns.get(ref.key);
    if (!columns || columns.size === 0) continue;
    aliases.set(ref.alias, ref.key);
    for (const [column, name] of columns)
      if (!denied.has(column)) denied.set(column, { key: ref.key, policy: name });
  }
  const refuseColumn = (column: string): never => {
    const hit = denied.get(column)!;
    throw new Refusal(
      'policy-column',
      `refused: the column ${column} of ${hit.key} is denied to ${policy.user} by the data policy (${hit.policy})`,
      hit.policy,
    );
  };
  const refuseWholeRow = (alias: string): never => {
    const key = aliases.get(alias)!;
    const name = policyNames(policy, key);
    throw new Refusal(
      'policy-whole-row',
      `refused: a whole-row value of ${alias} (${key}) would carry columns the data policy (${name}) denies; name the columns instead`,
      name,
    );
  };
  const refuseFunction = (fn: string): never => {
    const what = view.taintedFunctions.get(fn)!;
    const who = policyLabel(policy);
    throw new Refusal(
      'policy-function',
      `refused: the function ${what} reads data the data policy (${who}) restricts, and has no policy of its own`,
      who,
    );
  };
  /** Aliases of plain (unpoliced) relations: `s.email` names a column of that relation. */
  const plain = new Set<string>();
  for (const { node } of all) {
    const alias = isJsonObject(node.alias) ? String(node.alias.aliasname ?? '') : String(node.relname ?? '');
    if (!aliases.has(alias)) plain.add(alias);
  }
  // Stars at the top of a select list expand to the permitted columns: allowed. Any other `t.*`
  // of a relation with denied columns is a whole-row value.
  const topStars = new Set<JsonObject>();
  for (const [key, node] of nodes) {
    if (key !== 'SelectStmt') continue;
    const targets = node.targetList;
    for (const target of Array.isArray(targets) ? targets : []) {
      const res = isJsonObject(target) && isJsonObject(target.ResTarget) ? target.ResTarget : undefined;
      if (res && isJsonObject(res.val) && isJsonObject(res.val.ColumnRef)) topStars.add(res.val.ColumnRef);
    }
  }
  for (const [key, node] of nodes) {
    if (key === 'ColumnRef') {
      const fields = Array.isArray(node.fields) ? node.fields : [];
      const star =
        fields.length > 0 &&
        isJsonObject(fields[fields.length - 1]) &&
        'A_Star' in (fields[fields.length - 1] as JsonObject);
      const parts = (star ? fields.slice(0, -1) : fields).map(stringOf);
      if (parts.some((part) => part === undefined)) continue;
      const names = parts as string[];
      if (star) {
        const qualifier = names[names.length - 1];
        if (qualifier !== undefined && aliases.has(qualifier) && !topStars.has(node))
          refuseWholeRow(qualifier);
        continue;
      }
      const column = names[names.length - 1]!;
      if (names.length === 1) {
        if (denied.has(column)) refuseColumn(column);
        if (aliases.has(column)) refuseWholeRow(column);
        continue;
      }
      const qualifier = names[names.length - 2]!;
      if (denied.has(column) && !(plain.has(qualifier) && !aliases.has(qualifier))) refuseColumn(column);
      if (view.taintedFunctions.has(column.toLowerCase())) refuseFunction(column.toLowerCase());
      continue;
    }
    if (key === 'A_Indirection') {
      for (const part of Array.isArray(node.indirection) ? node.indirection : []) {
        const name = stringOf(part);
        if (name === undefined) continue;
        if (denied.has(name)) refuseColumn(name);
        if (view.taintedFunctions.has(name.toLowerCase())) refuseFunction(name.toLowerCase());
      }
      continue;
    }
    if (key === 'JoinExpr') {
      for (const part of Array.isArray(node.usingClause) ? node.usingClause : []) {
        const name = stringOf(part);
        if (name !== undefined && denied.has(name)) refuseColumn(name);
      }
      continue;
    }
    if (key === 'FuncCall') {
      const parts = (Array.isArray(node.funcname) ? node.funcname : []).map(stringOf);
      const name = parts[parts.length - 1]?.toLowerCase();
      if (name !== undefined && view.taintedFunctions.has(name)) refuseFunction(name);
    }
  }
}

function stringOf(node: Json | undefined): string | undefined {
  if (!isJsonObject(node) || !isJsonObject(node.String)) return undefined;
  const value = node.String.sval;
  return typeof value === 'string' ? value : '';
}

/** Nodes of a statement as (field name, node), in the order {@link walk} visits them. */
type CheckedNodes = readonly (readonly [string, JsonObject])[];

/** The field names of the nodes the rewrite's checks read. */
const CHECKED_KEYS = new Set([
  'ParamRef',
  'RangeVar',
  'FuncCall',
  'TypeCast',
  'SelectStmt',
  'ColumnRef',
  'A_Indirection',
  'JoinExpr',
]);

/** Every node of `stmt` under a name of {@link CHECKED_KEYS}, in one walk. */
function checkedNodes(stmt: JsonObject): CheckedNodes {
  const nodes: (readonly [string, JsonObject])[] = [];
  walk(stmt, (key, node) => {
    if (CHECKED_KEYS.has(key)) nodes.push([key, node]);
  });
  return nodes;
}

/** Visits every object-valued field as (key, value), iteratively. */
function walk(root: Json, visit: (key: string, node: JsonObject) => void): void {
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const value = stack.pop()!;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    if (!isJsonObject(value)) continue;
    for (const [key, child] of Object.entries(value)) {
      if (isJsonObject(child)) visit(key, child);
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The rewrite

/** Where one reference is replaced, in UTF-8 bytes of the original text. */
interface Edit {
  start: number;
  end: number;
  text: string;
  ref: RelationRef;
  /** Byte offset, inside `text`, of the inner relation name (for the verification). */
  innerAt: number;
}

const SKIPPED = new Set(['SQL_COMMENT', 'C_COMMENT']);

function splice(
  sql: string,
  scanned: readonly SqlToken[],
  refs: RelationRef[],
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
): PolicyRewrite {
  const bytes = Buffer.from(sql, 'utf8');
  const tokens = scanned.filter((token) => !SKIPPED.has(token.tokenName));
  const params: string[] = [];
  const applied = new Set<string>();
  /** First parameter number of each filter already placed (same table, same values). */
  const placed = new Map<RowFilter, number>();
  const edits: Edit[] = [];
  for (const ref of refs) {
    const span = spanOf(ref.node, tokens);
    const relation = catalog.relations.get(ref.key);
    if (!relation)
      throw new Refusal(
        'policy-table',
        `refused: ${ref.key} is restricted by the data policy (${policyNames(policy, ref.key)}) but is not in the database's catalog`,
        policyNames(policy, ref.key),
      );
    const deniedHere = policy.deniedColumns.get(ref.key) ?? new Map<string, string>();
    const columns = relation.columns.filter((column) => !deniedHere.has(column));
    for (const name of new Set(deniedHere.values())) applied.add(`columns of ${ref.key} (${name})`);
    const filters = policy.rowFilters.get(ref.key) ?? [];
    const conditions = filters.map((filter) => {
      let base = placed.get(filter);
      if (base === undefined) {
        base = params.length;
        placed.set(filter, base);
        params.push(...filter.params);
      }
      applied.add(`rows of ${ref.key} (${filter.policy})`);
      return `(${renumbered(filter, base)}\n)`;
    });
    const prefix = `(SELECT ${columns.map(quoteIdent).join(', ')} FROM ${span.only ? 'ONLY ' : ''}`;
    const target = `${quoteIdent(relation.schema)}.${quoteIdent(relation.name)}`;
    const rest =
      (conditions.length > 0 ? ` WHERE ${conditions.join(' AND ')} OFFSET 0` : '') +
      ')' +
      (ref.hasAlias ? '' : ` AS ${quoteIdent(ref.alias)}`);
    const lead = span.table ? 'SELECT * FROM ' : '';
    const text = `${lead}${prefix}${target}${rest}`;
    edits.push({
      start: span.start,
      end: span.end,
      text: span.table ? ` ${text}` : text,
      ref,
      innerAt: Buffer.byteLength((span.table ? ' ' : '') + lead + prefix, 'utf8'),
    });
  }
  edits.sort((a, b) => a.start - b.start);
  for (let i = 1; i < edits.length; i += 1)
    if (edits[i]!.start < edits[i - 1]!.end) throw new Error('two policed references overlap');
  const pieces: Buffer[] = [];
  const expected = new Set<number>();
  let at = 0;
  let length = 0;
  for (const edit of edits) {
    const before = bytes.subarray(at, edit.start);
    pieces.push(before);
    length += before.length;
    expected.add(length + edit.innerAt);
    const text = Buffer.from(edit.text, 'utf8');
    pieces.push(text);
    length += text.length;
    at = edit.end;
  }
  pieces.push(bytes.subarray(at));
  const out = Buffer.concat(pieces).toString('utf8');
  const tree = verify(out, params.length, expected, policy, catalog);
  return { ok: true, sql: out, params, applied: [...applied], parsed: { sql: out, tree } };
}

/**
 * The byte span of a RangeVar's name as written, widened to `ONLY` (with its optional
 * parentheses), a trailing inheritance `*`, and a leading `TABLE` of the TABLE statement.
 */
function spanOf(
  node: JsonObject,
  tokens: SqlToken[],
): { start: number; end: number; only: boolean; table: boolean } {
  const location = typeof node.location === 'number' ? node.location : -1;
  let i = tokens.findIndex((token) => token.start === location);
  if (i < 0) throw new Error('a relation reference has no location in the text');
  const parts = (typeof node.schemaname === 'string' ? 1 : 0) + 1;
  let last = i;
  for (let k = 1; k < parts; k += 1) {
    if (tokens[last + 1]?.text !== '.') throw new Error('a qualified relation name could not be read');
    last += 2;
  }
  if (tokens[last] === undefined) throw new Error('a relation name could not be read');
  let start = tokens[i]!.start;
  let end = tokens[last]!.end;
  // The tree leaves `inh` out when it is false: `ONLY name`.
  const only = node.inh !== true;
  if (only) {
    if (isWord(tokens[i - 1], 'ONLY')) {
      i -= 1;
    } else if (
      tokens[i - 1]?.text === '(' &&
      isWord(tokens[i - 2], 'ONLY') &&
      tokens[last + 1]?.text === ')'
    ) {
      i -= 2;
      last += 1;
    } else {
      throw new Error('ONLY could not be found before a relation name');
    }
    start = tokens[i]!.start;
    end = tokens[last]!.end;
  } else if (tokens[last + 1]?.text === '*') {
    // `FROM t *`: inheritance written out (a RangeVar is never followed by a multiplication).
    last += 1;
    end = tokens[last]!.end;
  }
  const table = isWord(tokens[i - 1], 'TABLE');
  if (table) start = tokens[i - 1]!.start;
  return { start, end, only, table };
}

function isWord(token: SqlToken | undefined, word: string): boolean {
  return token !== undefined && token.keywordKind > 0 && token.text.toUpperCase() === word;
}

/** `"name"`, with inner quotes doubled. */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * The filter's expression with `$k` turned into `$(base + k)`. The expression must be one
 * self-contained expression: no comments, no statement separator, parentheses balanced and never
 * closing more than they open (it is placed inside its own parentheses).
 */
function renumbered(filter: RowFilter, base: number): string {
  const read = readFilter(filter.expression);
  if (typeof read === 'string')
    throw new Refusal('policy-filter', `refused: the row filter of ${filter.policy} ${read}`, filter.policy);
  let out = '';
  for (const piece of read) {
    if (typeof piece === 'string') {
      out += piece;
      continue;
    }
    if (piece < 1 || piece > filter.params.length)
      throw new Refusal(
        'policy-filter',
        `refused: the row filter of ${filter.policy} uses $${piece}, which has no value`,
        filter.policy,
      );
    out += `$${base + piece}`;
  }
  return out;
}

/**
 * A filter expression read once: its text cut around each `$k` (the numbers), or why it is not
 * one valid expression. It depends on the text alone, so it is kept by text for every statement
 * and user (the first {@link FILTERS_KEPT} texts: a policy file holds a few).
 */
const filters = new Map<string, string | readonly (string | number)[]>();
const FILTERS_KEPT = 1_000;

function readFilter(expression: string): string | readonly (string | number)[] {
  const known = filters.get(expression);
  if (known !== undefined) return known;
  const read = readFilterUncached(expression);
  if (filters.size < FILTERS_KEPT) filters.set(expression, read);
  return read;
}

function readFilterUncached(expression: string): string | readonly (string | number)[] {
  let tokens: SqlToken[];
  try {
    tokens = scanTokens(expression);
  } catch {
    return 'is not valid SQL';
  }
  let depth = 0;
  for (const token of tokens) {
    if (SKIPPED.has(token.tokenName) || token.text === ';') return 'holds a comment or a semicolon';
    if (token.text === '(' || token.text === '[') depth += 1;
    if (token.text === ')' || token.text === ']') depth -= 1;
    if (depth < 0) break;
  }
  const prefix = 'SELECT 1 WHERE (';
  let ok = depth === 0;
  if (ok) {
    try {
      const stmts = parseTree(`${prefix}${expression}\n)`).stmts;
      ok = Array.isArray(stmts) && stmts.length === 1;
    } catch {
      ok = false;
    }
  }
  if (!ok) return 'is not one valid SQL expression';
  const bytes = Buffer.from(expression, 'utf8');
  const pieces: (string | number)[] = [];
  let at = 0;
  for (const token of tokens) {
    const match = /^\$(\d+)$/.exec(token.text);
    if (!match) continue;
    pieces.push(bytes.subarray(at, token.start).toString('utf8'), Number(match[1]));
    at = token.end;
  }
  pieces.push(bytes.subarray(at).toString('utf8'));
  return pieces;
}

/**
 * Parses the rewritten text and checks that every policed relation in it is one the rewrite
 * placed (at the expected byte offset) and that every bind parameter has a value. Returns the
 * parse (only read here), for the guard's second check of the same text.
 */
function verify(
  sql: string,
  paramCount: number,
  expected: ReadonlySet<number>,
  policy: EffectivePolicy,
  catalog: PolicyCatalog,
): JsonObject {
  const tree = parseForGuard(sql);
  const stmts = Array.isArray(tree.stmts) ? tree.stmts : [];
  if (stmts.length !== 1 || !isJsonObject(stmts[0]) || !isJsonObject(stmts[0].stmt))
    throw new Error('the rewritten statement is not one statement');
  const policed = new Set<string>([...policy.deniedColumns.keys(), ...policy.rowFilters.keys()]);
  const found = new Set<number>();
  visitRelations(stmts[0].stmt, (node) => {
    const name = String(node.relname ?? '');
    const schema = typeof node.schemaname === 'string' ? node.schemaname : undefined;
    const candidates =
      schema !== undefined
        ? [relationKey(schema, name)]
        : ['pg_catalog', ...catalog.searchPath].map((s) => relationKey(s, name));
    if (!candidates.some((key) => policed.has(key))) return;
    const at = typeof node.location === 'number' ? node.location : -1;
    if (schema === undefined || !expected.has(at)) throw new Error('a policed relation escaped the rewrite');
    found.add(at);
  });
  if (found.size !== expected.size) throw new Error('the rewritten statement lost a policed relation');
  walk(stmts[0].stmt, (key, node) => {
    if (
      key === 'ParamRef' &&
      !(typeof node.number === 'number' && node.number >= 1 && node.number <= paramCount)
    )
      throw new Error('a bind parameter of the rewrite has no value');
  });
  return tree;
}
