/**
 * What one user may see of the catalog under a data policy: the relations of the allow-list, minus
 * the columns denied to the user. Everything that shows or sends the schema (the SQL prompt,
 * schema linking, value hints, did-you-mean suggestions, `schema`, `/api/schema`, MCP resources)
 * reads the catalog through {@link visibleSchema}, so a denied column or a table outside the
 * allow-list is never named, whatever cache the full catalog sits in.
 *
 * A relation the user cannot read although the allow-list names it or there is none (a view,
 * materialized view or child table reading a restricted table without a policy of its own, a
 * foreign table, a view over the statistics catalogs or a function defined in the database) is
 * left out too: the same rule as enforcement, when the catalog's facts were attached to the
 * catalog object ({@link attachPolicyCatalog}); without them every view, materialized view and
 * foreign table the policy does not name is left out (fail closed). The row estimate of a
 * row-filtered table is dropped: it counts the rows the filter hides.
 *
 * Pure functions over {@link Schema} and {@link EffectivePolicy}; the filtered catalog is kept per
 * catalog object and policy, so a server's many requests share one filtering per user policy.
 */
import type { Column, ForeignKey, Schema, Table, UniqueIndex } from '../core/schema.js';
import { lexSql } from '../sql/lexer.js';
import {
  type PolicyCatalog,
  quoteIdent,
  ROW_COUNT_RELATIONS,
  relationKey,
  rewriteForPolicy,
  STATISTICS_RELATIONS,
} from '../sql/policy-rewrite.js';
import { type EffectivePolicy, namedRelations, type RowFilter, restrictsData } from './types.js';

/** The policy's name of a relation: `schema.name`, unquoted, as the catalog spells it. */
export function policyTableName(table: { schema: string; name: string }): string {
  return `${table.schema}.${table.name}`;
}

/** True when the user may read `table` (no allow-list, or the table is on it). */
export function tableAllowed(policy: EffectivePolicy, table: { schema: string; name: string }): boolean {
  return policy.tables === undefined || policy.tables.has(policyTableName(table));
}

/** The columns of `table` denied to the user (column name → the policy that denied it). */
export function deniedColumnsOf(
  policy: EffectivePolicy,
  table: { schema: string; name: string },
): ReadonlyMap<string, string> {
  return policy.deniedColumns.get(policyTableName(table)) ?? EMPTY;
}

const EMPTY: ReadonlyMap<string, string> = new Map();

/** True when `column` of `table` exists for the user (the table allowed, the column not denied). */
export function columnVisible(
  policy: EffectivePolicy,
  table: { schema: string; name: string },
  column: string,
): boolean {
  return tableAllowed(policy, table) && !deniedColumnsOf(policy, table).has(column);
}

/** The row filters on `table` (empty when none). */
export function rowFiltersOf(
  policy: EffectivePolicy,
  table: { schema: string; name: string },
): readonly RowFilter[] {
  return policy.rowFilters.get(policyTableName(table)) ?? [];
}

/**
 * A stable text key of everything in `policy` that changes what the user sees (allow-list, denied
 * columns, row filters with their values, privacy mode); two users with the same key see the same
 * schema and the same value hints, so caches may be shared between them.
 */
export function policyKey(policy: EffectivePolicy): string {
  let key = keys.get(policy);
  if (key === undefined) {
    key = keyOf(policy);
    keys.set(policy, key);
  }
  return key;
}

/** Keys already computed, per policy object (one question asks for its policy's key several times). */
const keys = new WeakMap<EffectivePolicy, string>();

function keyOf(policy: EffectivePolicy): string {
  if (!restrictsData(policy)) return policy.rowsToModel ? 'open' : 'open/private';
  const denied = [...policy.deniedColumns]
    .map(([table, columns]) => [table, [...columns.keys()].sort()] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const rows = [...policy.rowFilters]
    .map(([table, filters]) => [table, filters.map((f) => [f.expression, [...f.params]])] as const)
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  return JSON.stringify({
    tables: policy.tables ? [...policy.tables].sort() : null,
    denied,
    rows,
    private: !policy.rowsToModel,
  });
}

/** Catalog facts per catalog object and per relation object of it (see {@link attachPolicyCatalog}). */
const facts = new WeakMap<object, PolicyCatalog>();

/**
 * Records the enforcement's catalog facts (view definitions, parents, functions) of the database
 * `schema` was read from, so that visibility hides exactly the relations enforcement refuses.
 * Attach right after reading the catalog; the facts stay with the `schema` object and each of its
 * relation objects. Expects the SQL parser loaded (`loadSqlParser()`).
 */
export function attachPolicyCatalog(schema: Schema, catalog: PolicyCatalog): void {
  facts.set(schema, catalog);
  for (const table of schema.tables) facts.set(table, catalog);
}

/** The facts attached to `schema` or one of its relations, if any. */
export function policyCatalogOf(object: Schema | Table): PolicyCatalog | undefined {
  return facts.get(object);
}

/**
 * True when the user may read `relation` at all: on the allow-list (or no allow-list), and not
 * refused by enforcement as a whole (see the module comment). With `catalog`, the rewrite's own
 * rule decides (a probe `SELECT 1 FROM relation`), plus the server-side check's: a foreign table,
 * or a view reaching the statistics catalogs or a function of the database, that the policy does
 * not name. Without it, a view, materialized view or foreign table the policy does not name is
 * not readable (fail closed).
 */
export function relationReadable(
  policy: EffectivePolicy,
  relation: Pick<Table, 'schema' | 'name' | 'kind'>,
  catalog?: PolicyCatalog,
): boolean {
  if (!tableAllowed(policy, relation)) return false;
  if (!restrictsData(policy)) return true;
  const key = relationKey(relation.schema, relation.name);
  const named = namedRelations(policy).has(key);
  if (!catalog) return named || relation.kind === 'table' || relation.kind === 'partitioned_table';
  if (!named && (relation.kind === 'foreign_table' || unsafeRelations(catalog).has(key))) return false;
  return rewriteForPolicy(
    `SELECT 1 FROM ${quoteIdent(relation.schema)}.${quoteIdent(relation.name)}`,
    policy,
    catalog,
  ).ok;
}

const unsafeCache = new WeakMap<PolicyCatalog, Set<string>>();

/**
 * Views and materialized views whose definition names (as a word, through other views too) a
 * statistics catalog, a foreign table or a function defined in the database: the server-side
 * check refuses them unless the policy names them.
 */
function unsafeRelations(catalog: PolicyCatalog): Set<string> {
  let unsafe = unsafeCache.get(catalog);
  if (unsafe) return unsafe;
  unsafe = new Set();
  const words = new Set<string>([...STATISTICS_RELATIONS, 'pg_statistic_ext', ...ROW_COUNT_RELATIONS]);
  for (const fn of catalog.functions) words.add(fn.name.toLowerCase());
  for (const relation of catalog.relations.values())
    if (relation.kind === 'f') words.add(relation.name.toLowerCase());
  for (let changed = true; changed; ) {
    changed = false;
    const names = [...words].map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
    const pattern = new RegExp(`(?<![\\w$])(${names.join('|')})(?![\\w$])`, 'iu');
    for (const [key, definition] of catalog.definitions) {
      if (unsafe.has(key) || !pattern.test(definition)) continue;
      unsafe.add(key);
      const name = catalog.relations.get(key)?.name ?? key.slice(key.indexOf('.') + 1);
      words.add(name.toLowerCase());
      changed = true;
    }
  }
  unsafeCache.set(catalog, unsafe);
  return unsafe;
}

/**
 * `table` as the user sees it, or undefined when the user cannot read it
 * ({@link relationReadable}; `catalog` defaults to the facts attached to `table`). Denied columns
 * are removed, and with them every key, unique index and foreign key that names one (a partial key
 * would mislead, a full one would name the column); foreign keys to relations the user cannot see,
 * or to columns denied there, are removed too. A row-filtered table has no row estimate.
 */
export function visibleTable(
  policy: EffectivePolicy,
  table: Table,
  catalog: PolicyCatalog | undefined = facts.get(table),
): Table | undefined {
  if (!relationReadable(policy, table, catalog)) return undefined;
  const denied = deniedColumnsOf(policy, table);
  const hidesColumns = denied.size > 0;
  const foreignKeys = table.foreignKeys.filter((fk) => foreignKeyVisible(policy, fk, denied, catalog));
  // The planner's estimate counts every row, those the filter hides included.
  const hidesCount = table.estimatedRows !== null && rowFiltersOf(policy, table).length > 0;
  if (!hidesColumns && !hidesCount && foreignKeys.length === table.foreignKeys.length) return table;
  const columns: Column[] = table.columns.filter((c) => !denied.has(c.name));
  const names = new Set(columns.map((c) => c.name));
  // An index part that is not a plain visible column (an expression) may quote a denied column.
  const indexVisible = (index: UniqueIndex) => index.columns.every((c) => names.has(c));
  return {
    ...table,
    ...(hidesCount ? { estimatedRows: null } : {}),
    columns,
    primaryKey: table.primaryKey.every((c) => names.has(c)) ? table.primaryKey : [],
    foreignKeys,
    uniqueIndexes: hidesColumns ? table.uniqueIndexes.filter(indexVisible) : table.uniqueIndexes,
  };
}

function foreignKeyVisible(
  policy: EffectivePolicy,
  fk: ForeignKey,
  denied: ReadonlyMap<string, string>,
  catalog: PolicyCatalog | undefined,
): boolean {
  if (fk.columns.some((c) => denied.has(c))) return false;
  const target = { schema: fk.references.schema, name: fk.references.table };
  // A key's target is a table (never a view): readable unless enforcement refuses it.
  if (!relationReadable(policy, { ...target, kind: 'table' }, catalog)) return false;
  const deniedThere = deniedColumnsOf(policy, target);
  return !fk.references.columns.some((c) => deniedThere.has(c));
}

const visibleCache = new WeakMap<Schema, Map<string, Schema>>();

/**
 * The catalog as the user sees it: relations outside the allow-list left out, denied columns
 * removed (see {@link visibleTable}). The same `schema` object when the policy restricts nothing;
 * otherwise one object per catalog and {@link policyKey}, so identity-keyed caches downstream
 * (rendering, linking) work per user policy.
 */
export function visibleSchema(schema: Schema, policy: EffectivePolicy): Schema {
  if (!restrictsData(policy)) return schema;
  let byPolicy = visibleCache.get(schema);
  if (!byPolicy) {
    byPolicy = new Map();
    visibleCache.set(schema, byPolicy);
  }
  const key = policyKey(policy);
  let visible = byPolicy.get(key);
  if (!visible) {
    const tables: Table[] = [];
    const catalog = facts.get(schema);
    for (const table of schema.tables) {
      const seen = visibleTable(policy, table, catalog);
      if (seen) tables.push(seen);
    }
    visible = { ...schema, tables };
    byPolicy.set(key, visible);
  }
  return visible;
}

/** A standard SQL string literal (quotes doubled; the execution forces standard_conforming_strings). */
function sqlLiteral(value: string): string {
  return `'${value.replaceAll("'", "''")}'`;
}

/**
 * The row filters of `table` as one boolean SQL expression with the user's values written in as
 * string literals (`(region = 'EMEA')`), for the sampling statements sqlrecall writes itself
 * (value hints, empty-result checks), which take no bind parameters; undefined when the table has
 * no row filter. A `$n` inside a string, a quoted name or a comment is left alone.
 * @throws Error when a filter names a parameter it has no value for (fail closed: the caller then
 *   samples nothing)
 */
export function rowFilterSql(
  policy: EffectivePolicy,
  table: { schema: string; name: string },
): string | undefined {
  const filters = rowFiltersOf(policy, table);
  if (filters.length === 0) return undefined;
  return filters.map((f) => `(${inlineParams(f)})`).join(' AND ');
}

function inlineParams(filter: RowFilter): string {
  const text = filter.expression;
  const tokens = lexSql(text);
  let out = '';
  let from = 0;
  for (let i = 0; i < tokens.length; i += 1) {
    const token = tokens[i]!;
    const next = tokens[i + 1];
    if (token.type !== 'punct' || token.text !== '$' || !next || next.start !== token.end) continue;
    if (!/^\d+$/.test(next.text)) continue;
    const value = filter.params[Number(next.text) - 1];
    if (value === undefined)
      throw new Error(`The row filter of ${filter.policy} names $${next.text}, which has no value.`);
    out += `${text.slice(from, token.start)}${sqlLiteral(value)}`;
    from = next.end;
    i += 1;
  }
  return out + text.slice(from);
}
