/**
 * Reads a DuckDB catalog through its `duckdb_*()` table functions in a fixed number of queries
 * (five, whatever the number of tables): the opened database's schemas, tables and views with
 * their comments, columns with types, defaults and comments, enum labels, and the primary,
 * unique and foreign keys a `.duckdb` file declares. Attached system and temporary databases are
 * left out.
 */
import type { Column, ForeignKey, Schema, Table } from '../../core/schema.js';

/** Runs one of our fixed catalog queries with bound parameters; rows as objects of JSON values. */
export type CatalogQuery = (sql: string, params?: unknown[]) => Promise<Record<string, unknown>[]>;

function text(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

function str(value: unknown): string {
  return text(value) ?? '';
}

function list(value: unknown): string[] {
  return Array.isArray(value) ? value.map((item) => String(item)) : [];
}

/**
 * The labels of a column type printed as `ENUM('a', 'b''s')` (DuckDB doubles a quote inside a
 * label), or null for any other type.
 */
export function duckdbEnumLabels(dataType: string): string[] | null {
  const match = /^ENUM\((.*)\)$/s.exec(dataType.trim());
  if (!match) return null;
  const labels: string[] = [];
  const pattern = /'((?:[^']|'')*)'/g;
  for (const found of match[1]!.matchAll(pattern)) labels.push(found[1]!.replace(/''/g, "'"));
  return labels;
}

/** The opened database's schemas but the catalog's own (`main` is listed as internal, so not that flag). */
const SCHEMAS_SQL = `SELECT DISTINCT schema_name AS name FROM duckdb_schemas()
  WHERE database_name = current_database() AND schema_name NOT IN ('information_schema', 'pg_catalog')
  ORDER BY schema_name`;

/**
 * Reads the catalog of `schemas` (default: every schema of the opened database but the internal
 * ones). `estimatedRows` is DuckDB's `estimated_size` of a table, null for views.
 */
export async function introspectDuckdb(
  query: CatalogQuery,
  options: { schemas?: readonly string[]; database?: string } = {},
): Promise<Schema> {
  const [info] = await query('SELECT current_database() AS db, version() AS version');
  let schemas = options.schemas?.length ? [...options.schemas] : [];
  if (schemas.length === 0) schemas = (await query(SCHEMAS_SQL)).map((row) => str(row.name));
  const database = options.database ?? str(info?.db);
  const serverVersion = str(info?.version).replace(/^v/, '');
  if (schemas.length === 0) return { dialect: 'duckdb', database, serverVersion, schemas, tables: [] };
  const inSchemas = `database_name = current_database() AND list_contains($1::VARCHAR[], schema_name)`;
  const [tableRows, viewRows, columnRows, constraintRows] = await Promise.all([
    query(
      `SELECT schema_name AS s, table_name AS t, comment, estimated_size AS est
         FROM duckdb_tables() WHERE ${inSchemas} AND NOT internal AND NOT temporary`,
      [schemas],
    ),
    query(
      `SELECT schema_name AS s, view_name AS t, comment
         FROM duckdb_views() WHERE ${inSchemas} AND NOT internal AND NOT temporary`,
      [schemas],
    ),
    query(
      `SELECT schema_name AS s, table_name AS t, column_name AS name, column_index AS pos,
              data_type AS type, is_nullable AS nullable, column_default AS def, comment
         FROM duckdb_columns() WHERE ${inSchemas} AND NOT internal
        ORDER BY schema_name, table_name, column_index`,
      [schemas],
    ),
    query(
      `SELECT schema_name AS s, table_name AS t, constraint_index AS idx, constraint_type AS kind,
              constraint_name AS name, constraint_column_names AS cols,
              referenced_table AS rt, referenced_column_names AS rc
         FROM duckdb_constraints()
        WHERE ${inSchemas} AND constraint_type IN ('PRIMARY KEY', 'UNIQUE', 'FOREIGN KEY')
        ORDER BY schema_name, table_name, constraint_index`,
      [schemas],
    ),
  ]);
  const tables = new Map<string, Table>();
  const keyOf = (schema: string, table: string) => `${schema}\u0000${table}`;
  const add = (row: Record<string, unknown>, kind: 'table' | 'view') => {
    const estimate = kind === 'table' && row.est !== null && row.est !== undefined ? Number(row.est) : null;
    tables.set(keyOf(str(row.s), str(row.t)), {
      schema: str(row.s),
      name: str(row.t),
      kind,
      comment: text(row.comment) || null,
      estimatedRows: estimate !== null && Number.isFinite(estimate) ? estimate : null,
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      uniqueIndexes: [],
    });
  };
  for (const row of tableRows) add(row, 'table');
  for (const row of viewRows) add(row, 'view');
  for (const row of columnRows) {
    const table = tables.get(keyOf(str(row.s), str(row.t)));
    if (!table) continue;
    const type = str(row.type);
    const labels = duckdbEnumLabels(type);
    const column: Column = {
      name: str(row.name),
      position: Number(row.pos),
      type: labels ? 'ENUM' : type,
      domainBaseType: null,
      enumValues: labels,
      nullable: row.nullable !== false,
      default: text(row.def),
      comment: text(row.comment) || null,
    };
    table.columns.push(column);
  }
  for (const row of constraintRows) {
    const schema = str(row.s);
    const table = tables.get(keyOf(schema, str(row.t)));
    if (!table) continue;
    const columns = list(row.cols);
    const kind = str(row.kind);
    const name = str(row.name);
    if (kind === 'FOREIGN KEY') {
      const fk: ForeignKey = {
        name,
        columns,
        // DuckDB keeps foreign keys within one schema: the referenced table is in the same one.
        references: { schema, table: str(row.rt), columns: list(row.rc) },
      };
      table.foreignKeys.push(fk);
    } else {
      const primary = kind === 'PRIMARY KEY';
      table.uniqueIndexes.push({ name, columns, primary });
      if (primary) table.primaryKey = [...columns];
    }
  }
  const sorted = [...tables.values()].sort((a, b) =>
    a.schema === b.schema ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.schema < b.schema ? -1 : 1,
  );
  return { dialect: 'duckdb', database, serverVersion, schemas, tables: sorted };
}
