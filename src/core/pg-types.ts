/**
 * PostgreSQL type names as a server reports them (`int8`, `numeric(12,2)`, `double precision`):
 * the one list of those whose values are numbers. Shared by the chart choice on the server
 * (src/server/chart.ts) and the web UI's alignment, sorting and plotting (web/src/format.ts), so
 * the two never disagree. Pure: no imports, safe to bundle into the browser.
 */

/** Type names whose values are numbers (int8, numeric and money arrive as exact decimal strings). */
export const NUMERIC_TYPE_NAMES: ReadonlySet<string> = new Set([
  'int2',
  'int4',
  'int8',
  'smallint',
  'integer',
  'bigint',
  'numeric',
  'decimal',
  'float4',
  'float8',
  'real',
  'double precision',
  'money',
  'oid',
]);

/** The type name without a modifier, lower-case: `NUMERIC(12,2)` → `numeric`. */
export function baseTypeName(type: string): string {
  return type
    .toLowerCase()
    .replace(/\(.*\)$/, '')
    .trim();
}

/** True when values of this PostgreSQL type are numbers. */
export function isNumericType(type: string): boolean {
  return NUMERIC_TYPE_NAMES.has(baseTypeName(type));
}
