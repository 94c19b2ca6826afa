/**
 * One index document per relation: its qualified name, columns with types, comments, foreign-key
 * neighbours and value hints, as text for the embedding model; plus the per-table catalog hash that
 * decides whether a table must be re-indexed, and the database fingerprint that keys the index.
 */
import { createHash } from 'node:crypto';
import type { Schema, Table } from '../core/schema.js';
import { splitWords } from './words.js';

/**
 * Version of the document format and hashing. Folded into every catalog hash, so bumping it
 * re-indexes every table once (no migration needed).
 */
export const INDEX_FORMAT_VERSION = 1;

/** Distinct values of one low-cardinality text column, or the labels of an enum. */
export interface ValueHint {
  /** Column name as in the catalog. */
  column: string;
  /** Distinct values (sorted), each at most {@link MAX_HINT_VALUE_LENGTH} characters. Untrusted text. */
  values: string[];
  /** `enum`: labels from the catalog (complete); `sample`: distinct values in a bounded sample. */
  source: 'enum' | 'sample';
  /** Non-null rows the sample saw (for `sample`); `null` for enums. */
  sampledRows: number | null;
}

/** Longest value kept as a hint, in characters (longer ones are dropped: prose, not categories). */
export const MAX_HINT_VALUE_LENGTH = 100;

/**
 * Display key of a relation, the same string {@link PlannedContext.tables} uses: `schema.name`
 * (unquoted; for maps, JSON and messages, never for SQL).
 */
export function displayKey(table: { schema: string; name: string }): string {
  return `${table.schema}.${table.name}`;
}

/** Relations that reference `table` through a declared foreign key, as display keys (sorted). */
export function incomingNeighbours(schema: Schema): Map<string, string[]> {
  const incoming = new Map<string, Set<string>>();
  for (const table of schema.tables) {
    for (const fk of table.foreignKeys) {
      const target = displayKey({ schema: fk.references.schema, name: fk.references.table });
      let set = incoming.get(target);
      if (!set) {
        set = new Set();
        incoming.set(target, set);
      }
      set.add(displayKey(table));
    }
  }
  return new Map([...incoming].map(([key, set]) => [key, [...set].sort()]));
}

/**
 * SHA-256 (hex, first 32 characters) of everything the document is made of except data values:
 * name, kind, comment, columns (name, type, enum labels, nullability, comment, order), keys,
 * foreign keys and incoming FK neighbours. Row estimates and defaults are left out: they change
 * without the table's meaning changing. Adding a column changes this table's hash only.
 */
export function catalogHash(table: Table, incoming: readonly string[] = []): string {
  const canonical = JSON.stringify([
    INDEX_FORMAT_VERSION,
    table.schema,
    table.name,
    table.kind,
    table.comment,
    table.columns.map((c) => [c.name, c.type, c.domainBaseType, c.enumValues, c.nullable, c.comment]),
    table.primaryKey,
    table.foreignKeys.map((fk) => [
      fk.columns,
      fk.references.schema,
      fk.references.table,
      fk.references.columns,
    ]),
    table.uniqueIndexes.map((index) => [index.columns, index.primary]),
    incoming,
  ]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 32);
}

/**
 * Fingerprint of one database as seen through one connection: SHA-256 (hex, 24 characters) of the
 * masked connection name, the database name and the schemas read. Keys the index rows, so two
 * databases never share entries.
 */
export function databaseFingerprint(input: {
  displayName: string;
  database: string;
  schemas: readonly string[];
}): string {
  const canonical = JSON.stringify([input.displayName, input.database, [...input.schemas].sort()]);
  return createHash('sha256').update(canonical).digest('hex').slice(0, 24);
}

/** Longest document text, in characters (embedding models truncate around 256–512 tokens anyway). */
export const MAX_DOCUMENT_LENGTH = 2000;

/**
 * The text embedded for a table: qualified name and its words, comment, columns with types and
 * comments, FK neighbours, then value hints. Bounded to {@link MAX_DOCUMENT_LENGTH} characters.
 *
 * @example
 * table public.order_items (order items)
 * columns: order_id integer, product_id integer, quantity integer
 * joins: public.orders, public.products
 * values: status: delivered, pending
 */
export function tableDocument(
  table: Table,
  hints: readonly ValueHint[],
  incoming: readonly string[],
): string {
  const lines = [`table ${displayKey(table)} (${splitWords(table.name).join(' ')})`];
  if (table.comment) lines.push(`about: ${oneLine(table.comment, 300)}`);
  const columns = table.columns.map((column) => {
    let text = `${column.name} ${column.type}`;
    if (column.comment) text += ` (${oneLine(column.comment, 120)})`;
    return text;
  });
  lines.push(`columns: ${columns.join(', ')}`);
  const outgoing = table.foreignKeys.map((fk) =>
    displayKey({ schema: fk.references.schema, name: fk.references.table }),
  );
  const joins = [...new Set([...outgoing, ...incoming])].filter((key) => key !== displayKey(table));
  if (joins.length > 0) lines.push(`joins: ${joins.join(', ')}`);
  const valueParts = hints.map((hint) => `${hint.column}: ${hint.values.slice(0, 20).join(', ')}`);
  if (valueParts.length > 0) lines.push(`values: ${valueParts.join('; ')}`);
  const text = lines.join('\n');
  return text.length > MAX_DOCUMENT_LENGTH ? text.slice(0, MAX_DOCUMENT_LENGTH) : text;
}

function oneLine(text: string, maxLength: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1)}…` : flat;
}
