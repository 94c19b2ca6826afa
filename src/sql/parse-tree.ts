/**
 * The one entry to libpg-query's parser (PostgreSQL 18's own grammar, compiled to WebAssembly): loads
 * the module once per process and returns the tree both as `@pgsql/types`' `ParseResult` and, for
 * generic walkers, as plain {@link JsonObject} data (the tree is JSON parsed from the C parser's output).
 */
import type { ParseResult } from '@pgsql/types';
import { loadModule, parseSync, type ScanToken, scanSync } from 'libpg-query';
import type { Json, JsonObject } from '../core/json.js';

let loading: Promise<void> | undefined;

/**
 * Loads the parser once per process; a failed load is retried by the next call.
 * @throws Error when the WebAssembly module cannot be loaded
 */
export function loadSqlParser(): Promise<void> {
  loading ??= loadModule().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

/** Views a typed parse result as the plain JSON data it is (every node is an object of JSON values). */
function asJson(tree: ParseResult): JsonObject {
  return tree as JsonObject;
}

/**
 * Parses `sql` (one or more statements) into libpg-query's tree, as JSON data (`{ version, stmts:
 * [{ stmt, stmt_location?, stmt_len? }] }`). Call {@link loadSqlParser} once before.
 * @throws Error when the text does not parse (the parser's message) or the parser is not loaded
 */
export function parseTree(sql: string): JsonObject {
  const tree: ParseResult = parseSync(sql);
  return asJson(tree);
}

/** One token of the scanner: its kind (`SCONST`, `ICONST`, `IDENT`, …), text and byte offsets. */
export type SqlToken = ScanToken;

/**
 * The scanner's tokens of `sql`, in order (byte offsets, as the parse tree's locations).
 * Call {@link loadSqlParser} once before.
 * @throws Error when the parser is not loaded
 */
export function scanTokens(sql: string): SqlToken[] {
  return scanSync(sql).tokens;
}

/**
 * Parses `sql` into `@pgsql/types`' typed {@link ParseResult}, for code that reads a few known
 * fields (`stmts[0].stmt.SelectStmt.sortClause`). Call {@link loadSqlParser} once before.
 * @throws Error when the text does not parse or the parser is not loaded
 */
export function parseResult(sql: string): ParseResult {
  return parseSync(sql);
}

/**
 * The statement nodes of `sql` (each `RawStmt.stmt`, e.g. `{ SelectStmt: … }`) as JSON data, in
 * order; a statement without a node (the parser never gives one) is left out.
 * Call {@link loadSqlParser} once before.
 * @throws Error when the text does not parse or the parser is not loaded
 */
export function parseStatements(sql: string): JsonObject[] {
  const stmts = parseTree(sql).stmts;
  return (Array.isArray(stmts) ? stmts : []).flatMap((raw) => {
    const stmt = isJsonObject(raw) ? raw.stmt : undefined;
    return isJsonObject(stmt) ? [stmt] : [];
  });
}

/** True for a JSON object (not null, not an array). */
export function isJsonObject(value: Json | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * Visits every object-valued field of `root` as (its key, its value): `('RangeVar', { relname, … })`,
 * `('ColumnRef', { fields })`, … Iterative, so a deeply nested tree cannot overflow the stack; the
 * order is not specified beyond "every node once". The one generic walker over parse trees.
 */
export function walkTree(root: Json, visit: (key: string, node: JsonObject) => void): void {
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const value = stack.pop() as Json;
    if (Array.isArray(value)) {
      for (const item of value) stack.push(item);
      continue;
    }
    if (value === null || typeof value !== 'object') continue;
    for (const [key, child] of Object.entries(value)) {
      if (child !== null && typeof child === 'object' && !Array.isArray(child)) visit(key, child);
      if (child !== null && typeof child === 'object') stack.push(child);
    }
  }
}
