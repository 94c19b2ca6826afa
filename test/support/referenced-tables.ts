/**
 * The relations a SQL statement reads, from the real PostgreSQL parser's AST (libpg-query): every
 * `RangeVar` (FROM items, JOINs, subqueries, set operations) minus the names of its CTEs. Used to
 * get the gold tables of benchmark questions and the tables a memory's SQL touches.
 */
import type { Json } from '../../src/core/json.js';
import { loadSqlParser, parseTree } from '../../src/sql/parse-tree.js';

/** Loads the parser once per process (a failed load is retried next call). */
export const loadReferenceParser: () => Promise<void> = loadSqlParser;

/** A relation named by a statement: schema as written (`null` when unqualified), name lower-cased unless quoted. */
export interface TableReference {
  schema: string | null;
  name: string;
}

/**
 * Relations referenced by `sql` (one or more statements), deduplicated, in first-seen order. Names
 * of CTEs (`WITH x AS …`) are not relations and are left out when unqualified.
 * Call {@link loadReferenceParser} once before.
 * @throws Error when the text does not parse (the parser's message).
 */
export function referencedTables(sql: string): TableReference[] {
  const tree: Json = parseTree(sql);
  const found = new Map<string, TableReference>();
  const cteNames = new Set<string>();
  const visit = (node: Json): void => {
    if (Array.isArray(node)) {
      for (const item of node) visit(item);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const cte = node.CommonTableExpr;
    if (cte && typeof cte === 'object' && !Array.isArray(cte) && typeof cte.ctename === 'string') {
      cteNames.add(cte.ctename);
    }
    const range = node.RangeVar;
    if (range && typeof range === 'object' && !Array.isArray(range) && typeof range.relname === 'string') {
      const schema = typeof range.schemaname === 'string' ? range.schemaname : null;
      found.set(`${schema ?? ''}\u0000${range.relname}`, { schema, name: range.relname });
    }
    for (const value of Object.values(node)) visit(value);
  };
  visit(tree);
  return [...found.values()].filter((ref) => ref.schema !== null || !cteNames.has(ref.name));
}
