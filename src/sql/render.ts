/**
 * Schema → compact prompt text: ONE line per relation, e.g.
 *
 * ```
 * orders(id integer PK, customer_id integer FK→customers.id, status order_status['pending','shipped'], "Order Date" date) -- Orders placed by customers
 * ```
 *
 * Identifiers are quoted exactly when PostgreSQL needs it, so the model can copy them verbatim.
 * Comments are untrusted text: collapsed to one line and unable to close the comment they sit in.
 */
import type { Column, Schema, Table } from '../core/schema.js';

/**
 * Keywords that `quote_ident` quotes: every PostgreSQL keyword that is not UNRESERVED
 * (categories reserved, col_name and type_func_name), from `pg_get_keywords()` on PostgreSQL 18.
 */
const QUOTED_KEYWORDS: ReadonlySet<string> = new Set(
  (
    'all analyse analyze and any array as asc asymmetric authorization between bigint binary bit boolean both ' +
    'case cast char character check coalesce collate collation column concurrently constraint create cross ' +
    'current_catalog current_date current_role current_schema current_time current_timestamp current_user dec ' +
    'decimal default deferrable desc distinct do else end except exists extract false fetch float for foreign ' +
    'freeze from full grant greatest group grouping having ilike in initially inner inout int integer intersect ' +
    'interval into is isnull join json json_array json_arrayagg json_exists json_object json_objectagg json_query ' +
    'json_scalar json_serialize json_table json_value lateral leading least left like limit localtime ' +
    'localtimestamp merge_action national natural nchar none normalize not notnull null nullif numeric offset on ' +
    'only or order out outer overlaps overlay placing position precision primary real references returning right ' +
    'row select session_user setof similar smallint some substring symmetric system_user table tablesample then ' +
    'time timestamp to trailing treat trim true union unique user using values varchar variadic verbose when where ' +
    'window with xmlattributes xmlconcat xmlelement xmlexists xmlforest xmlnamespaces xmlparse xmlpi xmlroot ' +
    'xmlserialize xmltable'
  ).split(' '),
);

/**
 * Quotes an identifier when PostgreSQL needs it (like `quote_ident`): anything but
 * `/^[a-z_][a-z0-9_$]*$/`, or a non-unreserved keyword. Inner double quotes are doubled.
 * `orders` → `orders`; `Order Date` → `"Order Date"`; `user` → `"user"`; `a"b` → `"a""b"`.
 */
export function quoteIdent(name: string): string {
  if (/^[a-z_][a-z0-9_$]*$/.test(name) && !QUOTED_KEYWORDS.has(name)) return name;
  return `"${name.replaceAll('"', '""')}"`;
}

/** `orders` for `public.orders`; `consumer_div.users`, `"Sales"."Order"` otherwise. */
export function qualifiedName(table: { schema: string; name: string }): string {
  const name = quoteIdent(table.name);
  return table.schema === 'public' ? name : `${quoteIdent(table.schema)}.${name}`;
}

/** Options of {@link renderSchema}. */
export interface RenderOptions {
  /** Show table and column comments; default true. */
  includeComments?: boolean;
  /** Most enum labels listed per column (the rest counted as `…+N`); default 50. */
  maxEnumValues?: number;
  /** Longest comment kept, in characters (longer ones end with `…`); default 200. */
  maxCommentLength?: number;
}

/** Renders every relation of `schema`, one line each, in the schema's order. */
export function renderSchema(schema: Schema, options: RenderOptions = {}): string {
  return schema.tables.map((table) => renderTable(table, options)).join('\n');
}

const KIND_MARKERS: Readonly<Record<Table['kind'], string>> = {
  table: '',
  partitioned_table: '',
  view: ' [view]',
  materialized_view: ' [materialized view]',
  foreign_table: ' [foreign table]',
};

/** Renders one relation as one line (see the module comment for the format). */
export function renderTable(table: Table, options: RenderOptions = {}): string {
  const includeComments = options.includeComments ?? true;
  const maxComment = options.maxCommentLength ?? 200;
  const singlePk = table.primaryKey.length === 1 ? table.primaryKey[0] : undefined;
  const uniqueSingles = new Set(
    table.uniqueIndexes
      .filter((index) => !index.primary && index.columns.length === 1)
      .map((index) => index.columns[0]),
  );
  const parts = table.columns.map((column) => {
    let text = `${quoteIdent(column.name)} ${renderType(column, options.maxEnumValues ?? 50)}`;
    if (column.name === singlePk) text += ' PK';
    else if (uniqueSingles.has(column.name)) text += ' UNIQUE';
    for (const fk of table.foreignKeys) {
      if (fk.columns.length === 1 && fk.columns[0] === column.name) {
        text += ` FK→${qualifiedName({ schema: fk.references.schema, name: fk.references.table })}.${quoteIdent(fk.references.columns[0] ?? '')}`;
      }
    }
    if (includeComments && column.comment) text += ` /* ${cleanComment(column.comment, maxComment)} */`;
    return text;
  });
  if (table.primaryKey.length > 1) parts.push(`PK(${identList(table.primaryKey)})`);
  for (const fk of table.foreignKeys) {
    if (fk.columns.length > 1) {
      const target = qualifiedName({ schema: fk.references.schema, name: fk.references.table });
      parts.push(`FK(${identList(fk.columns)})→${target}(${identList(fk.references.columns)})`);
    }
  }
  const columnNames = new Set(table.columns.map((column) => column.name));
  for (const index of table.uniqueIndexes) {
    if (index.primary || (index.columns.length === 1 && columnNames.has(index.columns[0] ?? ''))) continue;
    parts.push(
      `UNIQUE(${index.columns.map((part) => (columnNames.has(part) ? quoteIdent(part) : part)).join(', ')})`,
    );
  }
  let line = `${qualifiedName(table)}(${parts.join(', ')})${KIND_MARKERS[table.kind]}`;
  if (includeComments && table.comment) line += ` -- ${cleanComment(table.comment, maxComment)}`;
  return line;
}

/** `numeric(12,2)`, `email:text` for a domain, `order_status['a','b']` for an enum. */
function renderType(column: Column, maxEnumValues: number): string {
  let text = column.domainBaseType ? `${column.type}:${column.domainBaseType}` : column.type;
  if (column.enumValues) {
    const shown = column.enumValues
      .slice(0, maxEnumValues)
      .map((label) => `'${neutralizeTags(label.replace(/\s+/g, ' ')).replaceAll("'", "''")}'`);
    const hidden = column.enumValues.length - shown.length;
    text += `[${shown.join(',')}${hidden > 0 ? `,…+${hidden}` : ''}]`;
  }
  return text;
}

function identList(names: string[]): string {
  return names.map(quoteIdent).join(', ');
}

/**
 * Untrusted catalog text (comments, enum labels) cannot open or close a prompt block: a tag-like
 * `<schema>` / `</schema>` / `<memories>` loses its `<` (shown as `‹`).
 */
export function neutralizeTags(text: string): string {
  return text.replace(/<(\s*\/?\s*[A-Za-z_])/g, '‹$1');
}

/** One line, bounded, and unable to end the `/* … *\/` or line it is embedded in, or a prompt block. */
function cleanComment(comment: string, maxLength: number): string {
  const flat = neutralizeTags(
    comment.replace(/\s+/g, ' ').replaceAll('*/', '* /').replaceAll('/*', '/ *'),
  ).trim();
  return flat.length > maxLength ? `${flat.slice(0, maxLength - 1).trimEnd()}…` : flat;
}
