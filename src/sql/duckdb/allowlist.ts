/**
 * The table allowlist (`--allow-tables`) for DuckDB, read from the parse tree DuckDB's own parser
 * gives the guard (`json_serialize_sql`): every table or view a statement names must match a
 * pattern. Patterns: `table`, `schema.table`, `schema.*`; names compare case-insensitively, as
 * DuckDB resolves them (quoted or not). An unqualified name is in `main`; a name with a catalog
 * part must name the database's own catalog (or none other). A name a WITH clause defines is that
 * CTE, not a table, in the query the WITH belongs to (a CTE sees the ones before it; a recursive
 * CTE sees itself).
 *
 * With an allowlist, the engine's own catalog is closed: `information_schema` and `pg_catalog`
 * relations, the `duckdb_*()` listings, `SHOW TABLES`, and unqualified names DuckDB answers from
 * its system catalog (`sqlite_master`, `duckdb_tables`, `pg_class`, …) are refused. With the
 * catalog the user may see (`Schema`, already cut to the allowed tables), a name must also be one
 * of its tables: nothing else resolves to a readable relation.
 */
import type { JsonObject } from '../../core/json.js';
import type { Schema } from '../../core/schema.js';
import { isAllowedFolded, parseTablePatterns } from '../allowlist.js';

/** Table functions that read no table and show no catalog (lower case). */
const HARMLESS_TABLE_FUNCTIONS: ReadonlySet<string> = new Set([
  'range',
  'generate_series',
  'unnest',
  'json_each',
  'json_tree',
]);

/** Schemas DuckDB keeps for its own catalog (lower case). */
const SYSTEM_SCHEMAS: ReadonlySet<string> = new Set(['information_schema', 'pg_catalog']);

/** Catalogs that are not the user's database (lower case). */
const SYSTEM_CATALOGS: ReadonlySet<string> = new Set(['system', 'temp']);

/** True for unqualified names DuckDB answers from its system catalog when no table has them. */
function systemName(name: string): boolean {
  return /^(sqlite_|duckdb_|pg_)/.test(name) || name === 'information_schema';
}

const DOUBT = 'refused: the tables this statement reads could not be checked against the allowed tables';

function isNode(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.toLowerCase() : '';
}

/** The CTE names of a query node's WITH, in order, with each body; undefined when unreadable. */
function cteEntries(node: JsonObject): { name: string; body: unknown }[] | undefined {
  const map = isNode(node.cte_map) ? node.cte_map.map : undefined;
  if (map === undefined) return [];
  if (!Array.isArray(map)) return undefined;
  const entries: { name: string; body: unknown }[] = [];
  for (const entry of map) {
    if (!isNode(entry) || typeof entry.key !== 'string') return undefined;
    entries.push({ name: entry.key.toLowerCase(), body: entry.value });
  }
  return entries;
}

/**
 * Checks a DuckDB parse tree (one statement's `node`) against the allowlist.
 * @returns undefined when every relation it names is allowed, else the refusal reason (`refused: …`)
 */
export function checkDuckdbAllowlist(
  tree: unknown,
  allowTables: readonly string[],
  schema?: Schema,
): string | undefined {
  const patterns = parseTablePatterns(allowTables);
  const list = allowTables.join(', ');
  const database = schema?.database ? schema.database.toLowerCase() : undefined;
  const catalog = schema
    ? new Set(schema.tables.map((table) => `${table.schema.toLowerCase()}.${table.name.toLowerCase()}`))
    : undefined;
  const stack: { value: unknown; ctes: ReadonlySet<string> }[] = [{ value: tree, ctes: new Set() }];
  let visited = 0;
  while (stack.length > 0) {
    const { value, ctes } = stack.pop()!;
    if (++visited > 200_000) return DOUBT;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, ctes });
      continue;
    }
    if (!isNode(value)) continue;
    const type = value.type;
    if (type === 'BASE_TABLE') {
      const name = text(value.table_name);
      const schemaName = text(value.schema_name);
      const catalogName = text(value.catalog_name);
      if (name === '') return DOUBT;
      if (schemaName === '' && catalogName === '' && ctes.has(name)) continue;
      const shown = [catalogName, schemaName || 'main', name].filter((part) => part !== '').join('.');
      if (
        SYSTEM_SCHEMAS.has(schemaName) ||
        SYSTEM_CATALOGS.has(catalogName) ||
        // `system.x` names the system catalog when no schema is called `system`.
        (catalogName === '' && SYSTEM_CATALOGS.has(schemaName))
      )
        return `refused: ${shown} is part of DuckDB's own catalog, which the table allowlist closes (${list})`;
      if (catalogName !== '' && database !== undefined && catalogName !== database)
        return `refused: ${shown} is in another database; only the allowed tables are readable (${list})`;
      if (schemaName === '' && catalogName === '' && systemName(name) && !catalog?.has(`main.${name}`))
        return `refused: ${name} is part of DuckDB's own catalog, which the table allowlist closes (${list})`;
      const resolvedSchema = schemaName || 'main';
      if (
        !isAllowedFolded(resolvedSchema, name, patterns) ||
        (catalog !== undefined && !catalog.has(`${resolvedSchema}.${name}`))
      )
        return `refused: ${shown} is not one of the allowed tables (${list})`;
      continue;
    }
    if (type === 'TABLE_FUNCTION' && isNode(value.function)) {
      const fn = text(value.function.function_name);
      if (!HARMLESS_TABLE_FUNCTIONS.has(fn))
        return `refused: ${fn || 'this function'}() shows DuckDB's catalog or reads outside the allowed tables (${list})`;
    }
    if (type === 'SHOW_REF' && (value.query === null || value.query === undefined))
      return `refused: SHOW lists DuckDB's catalog, which the table allowlist closes (${list})`;
    let inner = ctes;
    if (type === 'RECURSIVE_CTE_NODE' && typeof value.cte_name === 'string')
      inner = new Set([...ctes, value.cte_name.toLowerCase()]);
    if (isNode(value.cte_map)) {
      const entries = cteEntries(value);
      if (!entries) return DOUBT;
      const seen = new Set(inner);
      for (const entry of entries) {
        // A CTE body sees the CTEs before it (its own name only as a recursive CTE node).
        stack.push({ value: entry.body, ctes: new Set(seen) });
        seen.add(entry.name);
      }
      inner = seen;
    }
    for (const [key, child] of Object.entries(value))
      if (key !== 'cte_map' && typeof child === 'object' && child !== null)
        // The anchor (left side) of a recursive CTE resolves its own name to a real table, not to
        // the CTE being defined: only the recursive side sees the CTE.
        stack.push({ value: child, ctes: type === 'RECURSIVE_CTE_NODE' && key === 'left' ? ctes : inner });
  }
  return undefined;
}
