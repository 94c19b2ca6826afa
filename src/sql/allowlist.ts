/**
 * Allowlist mode (`--allow-tables`, `SQLRECALL_ALLOW_TABLES`): a read may only use relations that
 * match a pattern. Patterns: `schema.table`, `schema.*`, or a bare `table` (that name in any
 * schema); `"Quoted"` parts keep their case, unquoted parts match case-insensitively like
 * PostgreSQL folds them. Unqualified names in the statement resolve through the search path (the
 * introspected schemas, in order; names starting with `pg_` resolve to `pg_catalog`, which
 * PostgreSQL searches first); CTE names are not relations. Fail closed: a relation the analysis
 * could not place is refused.
 */
import type { Schema } from '../core/schema.js';
import { analyzeStatement, type JsonObject } from './scope.js';

/** A parsed allowlist pattern. */
export interface TablePattern {
  /** Schema, or `*` for any. */
  schema: string;
  /** Table, or `*` for any. */
  table: string;
}

/** Splits `a.b` on the dot outside double quotes; folds unquoted parts to lower case. */
function splitName(text: string): string[] {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  let wasQuoted = false;
  for (let i = 0; i < text.length; i += 1) {
    const c = text[i]!;
    if (c === '"') {
      if (quoted && text[i + 1] === '"') {
        current += '"';
        i += 1;
      } else {
        quoted = !quoted;
        wasQuoted = true;
      }
    } else if (c === '.' && !quoted) {
      parts.push(wasQuoted ? current : current.trim().toLowerCase());
      current = '';
      wasQuoted = false;
    } else {
      current += c;
    }
  }
  parts.push(wasQuoted ? current : current.trim().toLowerCase());
  return parts;
}

/**
 * Parses allowlist patterns (`public.orders`, `sales.*`, `customers`, `"Sales"."Order"`).
 * Invalid entries (empty, more than two parts) are dropped by the caller's validation.
 */
export function parseTablePatterns(patterns: readonly string[]): TablePattern[] {
  return patterns
    .map((pattern) => splitName(pattern.trim()))
    .filter((parts) => parts.length >= 1 && parts.length <= 2 && parts.every((p) => p !== ''))
    .map((parts) =>
      parts.length === 1 ? { schema: '*', table: parts[0]! } : { schema: parts[0]!, table: parts[1]! },
    );
}

/** True when `schema.table` matches one of `patterns`. */
export function isAllowed(schema: string, table: string, patterns: readonly TablePattern[]): boolean {
  return patterns.some(
    (p) => (p.schema === '*' || p.schema === schema) && (p.table === '*' || p.table === table),
  );
}

/**
 * True when `schema.table` matches one of `patterns`, every name compared in lower case: for the
 * engines whose names are case-insensitive even when quoted (SQLite, DuckDB).
 */
export function isAllowedFolded(schema: string, table: string, patterns: readonly TablePattern[]): boolean {
  const s = schema.toLowerCase();
  const t = table.toLowerCase();
  return patterns.some(
    (p) =>
      (p.schema === '*' || p.schema.toLowerCase() === s) && (p.table === '*' || p.table.toLowerCase() === t),
  );
}

/**
 * Checks one parsed statement against the allowlist.
 * @returns undefined when every relation is allowed, else the refusal reason (`refused: …`).
 */
export function checkAllowlist(
  stmt: JsonObject,
  allowTables: readonly string[],
  schema?: Schema,
): string | undefined {
  const patterns = parseTablePatterns(allowTables);
  let report: ReturnType<typeof analyzeStatement>;
  try {
    report = analyzeStatement(stmt, schema);
  } catch {
    return 'refused: the tables this statement reads could not be checked against the allowed tables';
  }
  if (report.unvisitedRelations > 0)
    return 'refused: the tables this statement reads could not be checked against the allowed tables';
  for (const use of report.relations) {
    const resolved = use.resolvedSchema ?? 'public';
    if (!isAllowed(resolved, use.name, patterns)) {
      return `refused: ${resolved}.${use.name} is not one of the allowed tables (${allowTables.join(', ')})`;
    }
  }
  return undefined;
}

/**
 * The catalog without the tables the allowlist (`--allow-tables`) leaves out, and without foreign
 * keys to them: what is outside the list is never shown to the model (schema, sampled values,
 * suggestions), as the guard never runs it. No allowlist: the catalog as it is.
 */
export function onlyAllowedTables(schema: Schema, allowTables: readonly string[]): Schema {
  if (allowTables.length === 0) return schema;
  const patterns = parseTablePatterns(allowTables);
  // SQLite and DuckDB resolve names without regard to case, quoted or not.
  const allowed = schema.dialect === 'sqlite' || schema.dialect === 'duckdb' ? isAllowedFolded : isAllowed;
  const tables = schema.tables
    .filter((table) => allowed(table.schema, table.name, patterns))
    .map((table) => {
      const foreignKeys = table.foreignKeys.filter((fk) =>
        allowed(fk.references.schema, fk.references.table, patterns),
      );
      return foreignKeys.length === table.foreignKeys.length ? table : { ...table, foreignKeys };
    });
  return { ...schema, tables };
}
