/**
 * Reads a SQLite catalog in a fixed number of queries (five, whatever the number of tables): each
 * joins `sqlite_schema` with a table-valued pragma function (`pragma_table_info(name)`,
 * `pragma_foreign_key_list(name)`, `pragma_index_list(name)` and `pragma_index_info(index)`). The
 * one schema is `main`; SQLite keeps no comments and no row estimates.
 */
import type { Column, ForeignKey, Schema, Table, UniqueIndex } from '../../core/schema.js';

/** Relations of the user's: tables and views, SQLite's own `sqlite_*` tables left out. */
const RELATIONS = "m.type IN ('table', 'view') AND m.name NOT LIKE 'sqlite\\_%' ESCAPE '\\'";

/** The catalog statements, in the order {@link schemaFromCatalog} reads their rows. */
export const SQLITE_CATALOG_SQL: readonly string[] = [
  'SELECT sqlite_version() AS version',
  `SELECT m.name AS t, m.type AS kind FROM sqlite_schema AS m WHERE ${RELATIONS} ORDER BY m.name`,
  `SELECT m.name AS t, p.cid AS pos, p.name AS name, p.type AS type, p."notnull" AS not_null,
          p.dflt_value AS def, p.pk AS pk,
          (SELECT count(*) FROM pragma_table_info(m.name) AS k WHERE k.pk > 0) AS pk_columns
     FROM sqlite_schema AS m JOIN pragma_table_info(m.name) AS p
    WHERE ${RELATIONS} ORDER BY m.name, p.cid`,
  `SELECT m.name AS t, f.id AS id, f.seq AS seq, f."table" AS rt, f."from" AS col, f."to" AS rc
     FROM sqlite_schema AS m JOIN pragma_foreign_key_list(m.name) AS f
    WHERE m.type = 'table' AND ${RELATIONS} ORDER BY m.name, f.id, f.seq`,
  `SELECT m.name AS t, il.name AS idx, il.origin AS origin, ii.seqno AS seq, ii.name AS col
     FROM sqlite_schema AS m JOIN pragma_index_list(m.name) AS il JOIN pragma_index_info(il.name) AS ii
    WHERE m.type = 'table' AND il."unique" = 1 AND ${RELATIONS} ORDER BY m.name, il.name, ii.seqno`,
];

type Row = Record<string, unknown>;

function str(value: unknown): string {
  return value === null || value === undefined ? '' : String(value);
}

/**
 * The {@link Schema} of the rows of {@link SQLITE_CATALOG_SQL}, in order. `database` is the name
 * shown for the file (its base name). A foreign key that names no referenced columns refers to the
 * referenced table's primary key.
 */
export function schemaFromCatalog(database: string, results: readonly Row[][]): Schema {
  const [versionRows = [], tableRows = [], columnRows = [], keyRows = [], indexRows = []] = results;
  const tables = new Map<string, Table>();
  for (const row of tableRows)
    tables.set(str(row.t), {
      schema: 'main',
      name: str(row.t),
      kind: str(row.kind) === 'view' ? 'view' : 'table',
      comment: null,
      estimatedRows: null,
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      uniqueIndexes: [],
    });
  const pkOrder = new Map<Table, { name: string; order: number }[]>();
  for (const row of columnRows) {
    const table = tables.get(str(row.t));
    if (!table) continue;
    const column: Column = {
      name: str(row.name),
      position: Number(row.pos) + 1,
      type: str(row.type).toLowerCase(),
      domainBaseType: null,
      enumValues: null,
      // SQLite lets a PRIMARY KEY column other than INTEGER hold NULL; only NOT NULL is a promise,
      // and the one INTEGER PRIMARY KEY column, which is the rowid and can never be NULL.
      nullable:
        Number(row.not_null) === 0 && !(Number(row.pk) > 0 && str(row.type).toUpperCase() === 'INTEGER'),
      default: row.def === null || row.def === undefined ? null : str(row.def),
      comment: null,
    };
    table.columns.push(column);
    const pk = Number(row.pk);
    if (table.kind === 'table' && pk > 0) {
      const list = pkOrder.get(table) ?? [];
      list.push({ name: column.name, order: pk });
      pkOrder.set(table, list);
    }
  }
  for (const [table, list] of pkOrder)
    table.primaryKey = list.sort((a, b) => a.order - b.order).map((c) => c.name);
  const keys = new Map<string, ForeignKey & { table: Table; implicit: boolean }>();
  for (const row of keyRows) {
    const table = tables.get(str(row.t));
    if (!table) continue;
    const key = `${table.name}\u0000${str(row.id)}`;
    let fk = keys.get(key);
    if (!fk) {
      fk = {
        table,
        name: `fk_${table.name}_${str(row.id)}`,
        columns: [],
        references: { schema: 'main', table: str(row.rt), columns: [] },
        implicit: false,
      };
      keys.set(key, fk);
    }
    fk.columns.push(str(row.col));
    if (row.rc === null || row.rc === undefined) fk.implicit = true;
    else fk.references.columns.push(str(row.rc));
  }
  const byLowerName = new Map([...tables.values()].map((table) => [table.name.toLowerCase(), table]));
  for (const { table, implicit, ...fk } of keys.values()) {
    if (implicit)
      fk.references.columns = [...(byLowerName.get(fk.references.table.toLowerCase())?.primaryKey ?? [])];
    table.foreignKeys.push(fk);
  }
  const indexes = new Map<string, UniqueIndex & { table: Table }>();
  for (const row of indexRows) {
    const table = tables.get(str(row.t));
    if (!table) continue;
    const key = `${table.name}\u0000${str(row.idx)}`;
    let index = indexes.get(key);
    if (!index) {
      index = { table, name: str(row.idx), columns: [], primary: str(row.origin) === 'pk' };
      indexes.set(key, index);
    }
    index.columns.push(str(row.col));
  }
  for (const { table, ...index } of indexes.values()) table.uniqueIndexes.push(index);
  // An INTEGER PRIMARY KEY is the rowid itself and has no index of its own: listed as one.
  for (const table of tables.values())
    if (table.primaryKey.length > 0 && !table.uniqueIndexes.some((index) => index.primary))
      table.uniqueIndexes.unshift({
        name: `${table.name}_pkey`,
        columns: [...table.primaryKey],
        primary: true,
      });
  return {
    dialect: 'sqlite',
    database,
    serverVersion: str(versionRows[0]?.version),
    schemas: ['main'],
    tables: [...tables.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)),
  };
}
