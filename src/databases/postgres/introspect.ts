/**
 * Catalog → {@link Schema}, shared by the pg and PGlite connectors: the same five catalog queries
 * (see `introspect-sql.ts`) whatever the number of tables, everything keyed by schema + name.
 */
import type { Column, ForeignKey, RelationKind, Schema, Table } from '../../core/schema.js';
import { tableKey } from '../../core/schema.js';
import {
  COLUMNS_SQL,
  CONSTRAINTS_SQL,
  META_SQL,
  RELATIONS_SQL,
  UNIQUE_INDEXES_SQL,
} from './introspect-sql.js';
import type { Queryable } from './queryable.js';

/**
 * Catalog queries run by {@link introspectCatalog} since the process started (all connectors).
 * Tests and the benchmark read it before and after a call to count queries.
 */
export const introspectionStats = { queries: 0 };

/** Options of {@link introspectCatalog}. */
export interface IntrospectCatalogOptions {
  /** Schemas to read; default (undefined or empty): every non-system schema. */
  schemas?: string[];
  /** Called before each catalog query (for counting or tracing). */
  onQuery?: (sql: string) => void;
}

const RELKINDS: Readonly<Record<string, RelationKind>> = {
  r: 'table',
  v: 'view',
  m: 'materialized_view',
  p: 'partitioned_table',
  f: 'foreign_table',
};

/**
 * Reads the catalog. Run it inside one transaction (REPEATABLE READ where possible) so that the
 * five queries see the same catalog.
 * @throws whatever the driver throws; the connector maps it to `db_query` / `db_unreachable`
 */
export async function introspectCatalog(
  db: Queryable,
  options: IntrospectCatalogOptions = {},
): Promise<Schema> {
  const configured = options.schemas && options.schemas.length > 0 ? options.schemas : null;
  const run = async (sql: string, params: unknown[]): Promise<Record<string, unknown>[]> => {
    introspectionStats.queries += 1;
    options.onQuery?.(sql);
    return (await db.query(sql, params)).rows;
  };
  const meta = (await run(META_SQL, []))[0] ?? {};
  const relations = await run(RELATIONS_SQL, [configured]);
  const columns = await run(COLUMNS_SQL, [configured]);
  const constraints = await run(CONSTRAINTS_SQL, [configured]);
  const indexes = await run(UNIQUE_INDEXES_SQL, [configured]);

  const tables = new Map<string, Table>();
  for (const row of relations) {
    const table: Table = {
      schema: str(row.schema),
      name: str(row.name),
      kind: RELKINDS[str(row.relkind)] ?? 'table',
      comment: strOrNull(row.comment),
      estimatedRows:
        row.estimated_rows === null || row.estimated_rows === undefined ? null : Number(row.estimated_rows),
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      uniqueIndexes: [],
    };
    tables.set(tableKey(table), table);
  }
  const owner = (row: Record<string, unknown>): Table | undefined =>
    tables.get(tableKey({ schema: str(row.schema), name: str(row.table) }));

  for (const row of columns) {
    const domainBaseType = strOrNull(row.domain_base_type);
    const column: Column = {
      name: str(row.name),
      position: Number(row.position),
      type: str(row.type),
      domainBaseType,
      enumValues: Array.isArray(row.enum_values) ? row.enum_values.map(String) : null,
      nullable: row.not_null !== true,
      default: strOrNull(row.default),
      comment: strOrNull(row.comment),
    };
    owner(row)?.columns.push(column);
  }
  for (const row of constraints) {
    const table = owner(row);
    if (!table) continue;
    const cols = strings(row.columns);
    if (row.type === 'p') {
      table.primaryKey = cols;
    } else {
      const foreignKey: ForeignKey = {
        name: str(row.name),
        columns: cols,
        references: {
          schema: str(row.ref_schema),
          table: str(row.ref_table),
          columns: strings(row.ref_columns),
        },
      };
      table.foreignKeys.push(foreignKey);
    }
  }
  for (const row of indexes) {
    owner(row)?.uniqueIndexes.push({
      name: str(row.name),
      columns: strings(row.columns),
      primary: row.primary === true,
    });
  }

  const sorted = [...tables.values()].sort((a, b) => compare(a.schema, b.schema) || compare(a.name, b.name));
  for (const table of sorted) {
    table.columns.sort((a, b) => a.position - b.position);
    table.foreignKeys.sort((a, b) => compare(a.name, b.name));
    table.uniqueIndexes.sort((a, b) => Number(b.primary) - Number(a.primary) || compare(a.name, b.name));
  }
  const searchPath = strings(meta.search_path);
  return {
    dialect: 'postgres',
    database: str(meta.database),
    serverVersion: versionString(meta),
    schemas: configured ?? orderSchemas(sorted, searchPath),
    tables: sorted,
  };
}

/** Schemas holding relations: those on the search path first (in its order), then by name. */
function orderSchemas(tables: Table[], searchPath: string[]): string[] {
  const present = [...new Set(tables.map((table) => table.schema))];
  const rank = (schema: string): number => {
    const index = searchPath.indexOf(schema);
    return index === -1 ? searchPath.length : index;
  };
  return present.sort((a, b) => rank(a) - rank(b) || compare(a, b));
}

/** `150020` → `15.20`; falls back to the first word of `server_version`. */
function versionString(meta: Record<string, unknown>): string {
  const num = Number(meta.version_num);
  if (Number.isInteger(num) && num >= 100000) return `${Math.floor(num / 10000)}.${num % 10000}`;
  return str(meta.version).split(' ')[0] ?? '';
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function str(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => String(item)) : [];
}
