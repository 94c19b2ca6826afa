/**
 * The one entry to libpg-query's parser (PostgreSQL 18's own grammar, compiled to WebAssembly): loads
 * the module once per process and returns the tree both as `@pgsql/types`' `ParseResult` and, for
 * generic walkers, as plain {@link JsonObject} data (the tree is JSON parsed from the C parser's output).
 */
import type { ParseResult } from '@pgsql/types';
import { loadModule, parseSync } from 'libpg-query';
import type { JsonObject } from '../core/json.js';

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
