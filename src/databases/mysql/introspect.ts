/**
 * Reads a MySQL/MariaDB catalog from `information_schema` in a fixed number of queries (five,
 * whatever the number of tables): MySQL's databases are the {@link Schema}'s schemas.
 */
import type { Column, ForeignKey, RelationKind, Schema, Table, UniqueIndex } from '../../core/schema.js';

/** Runs one of our fixed catalog queries with bound parameters; rows as objects. */
export type CatalogQuery = (sql: string, params: unknown[]) => Promise<Record<string, unknown>[]>;

/** Databases that hold the server's own catalog, never the user's data. */
export const MYSQL_SYSTEM_SCHEMAS: readonly string[] = [
  'information_schema',
  'mysql',
  'performance_schema',
  'sys',
];

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  return Buffer.isBuffer(value) ? value.toString('utf8') : String(value);
}

function str(value: unknown): string {
  return text(value) ?? '';
}

/**
 * The labels of an `enum('a','b')` or `set(…)` column type, unquoted (`''` inside a label is one
 * quote, `\\` escapes as the server prints them); null for any other type.
 */
export function enumLabels(columnType: string): string[] | null {
  const match = /^(?:enum|set)\((.*)\)$/is.exec(columnType.trim());
  if (!match) return null;
  const labels: string[] = [];
  const body = match[1]!;
  let i = 0;
  while (i < body.length) {
    if (body[i] !== "'") {
      i += 1;
      continue;
    }
    let label = '';
    i += 1;
    while (i < body.length) {
      const char = body[i]!;
      if (char === "'" && body[i + 1] === "'") {
        label += "'";
        i += 2;
      } else if (char === '\\' && i + 1 < body.length) {
        label += body[i + 1];
        i += 2;
      } else if (char === "'") {
        i += 1;
        break;
      } else {
        label += char;
        i += 1;
      }
    }
    labels.push(label);
  }
  return labels;
}

/**
 * Reads the catalog of `schemas` (default: every database but the system ones). Views are
 * relations of kind `view`; `estimatedRows` is `information_schema.TABLES.TABLE_ROWS` (an
 * estimate for InnoDB), null for views.
 */
export async function introspectMysql(
  query: CatalogQuery,
  options: { schemas?: readonly string[] } = {},
): Promise<Schema> {
  const [info] = await query('SELECT DATABASE() AS db, VERSION() AS version', []);
  let schemas = options.schemas ? [...options.schemas] : [];
  if (schemas.length === 0) {
    const rows = await query(
      `SELECT SCHEMA_NAME AS name FROM information_schema.SCHEMATA
        WHERE SCHEMA_NAME NOT IN (${MYSQL_SYSTEM_SCHEMAS.map(() => '?').join(', ')}) ORDER BY SCHEMA_NAME`,
      [...MYSQL_SYSTEM_SCHEMAS],
    );
    schemas = rows.map((row) => str(row.name));
  }
  const database = text(info?.db) ?? schemas[0] ?? '';
  const version = str(info?.version);
  if (schemas.length === 0)
    return { dialect: 'mysql', database, serverVersion: version, schemas, tables: [] };
  const marks = schemas.map(() => '?').join(', ');
  const [tableRows, columnRows, indexRows, keyRows] = await Promise.all([
    query(
      `SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t, TABLE_TYPE AS kind, TABLE_COMMENT AS comment, TABLE_ROWS AS est
         FROM information_schema.TABLES WHERE TABLE_SCHEMA IN (${marks})`,
      schemas,
    ),
    query(
      `SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t, COLUMN_NAME AS name, ORDINAL_POSITION AS pos,
              COLUMN_TYPE AS type, IS_NULLABLE AS nullable, COLUMN_DEFAULT AS def, COLUMN_COMMENT AS comment
         FROM information_schema.COLUMNS WHERE TABLE_SCHEMA IN (${marks})
        ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION`,
      schemas,
    ),
    query(
      `SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t, INDEX_NAME AS idx, COLUMN_NAME AS col, SUB_PART AS part
         FROM information_schema.STATISTICS WHERE TABLE_SCHEMA IN (${marks}) AND NON_UNIQUE = 0
        ORDER BY TABLE_SCHEMA, TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
      schemas,
    ),
    query(
      `SELECT TABLE_SCHEMA AS s, TABLE_NAME AS t, CONSTRAINT_NAME AS name, COLUMN_NAME AS col,
              REFERENCED_TABLE_SCHEMA AS rs, REFERENCED_TABLE_NAME AS rt, REFERENCED_COLUMN_NAME AS rc
         FROM information_schema.KEY_COLUMN_USAGE
        WHERE TABLE_SCHEMA IN (${marks}) AND REFERENCED_TABLE_NAME IS NOT NULL
        ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION`,
      schemas,
    ),
  ]);
  const tables = new Map<string, Table>();
  const keyOf = (row: Record<string, unknown>) => `${str(row.s)}\u0000${str(row.t)}`;
  for (const row of tableRows) {
    const view = /view/i.test(str(row.kind));
    const comment = text(row.comment);
    const estimate = row.est === null || row.est === undefined ? null : Number(row.est);
    tables.set(keyOf(row), {
      schema: str(row.s),
      name: str(row.t),
      kind: (view ? 'view' : 'table') satisfies RelationKind,
      // MySQL fills a view's comment with the word VIEW and leaves an empty string for none.
      comment: view || comment === '' ? null : comment,
      estimatedRows: view || estimate === null || !Number.isFinite(estimate) ? null : estimate,
      columns: [],
      primaryKey: [],
      foreignKeys: [],
      uniqueIndexes: [],
    });
  }
  for (const row of columnRows) {
    const table = tables.get(keyOf(row));
    if (!table) continue;
    const columnType = str(row.type);
    const labels = enumLabels(columnType);
    const comment = text(row.comment);
    const column: Column = {
      name: str(row.name),
      position: Number(row.pos),
      type: labels ? columnType.slice(0, columnType.indexOf('(')).toLowerCase() : columnType,
      domainBaseType: null,
      enumValues: labels,
      nullable: str(row.nullable).toUpperCase() === 'YES',
      default: text(row.def),
      comment: comment === '' ? null : comment,
    };
    table.columns.push(column);
  }
  const indexes = new Map<string, UniqueIndex & { table: Table }>();
  for (const row of indexRows) {
    const table = tables.get(keyOf(row));
    if (!table) continue;
    const name = str(row.idx);
    const key = `${keyOf(row)}\u0000${name}`;
    let index = indexes.get(key);
    if (!index) {
      index = { table, name, columns: [], primary: name === 'PRIMARY' };
      indexes.set(key, index);
    }
    index.columns.push(str(row.col));
  }
  for (const { table, ...index } of indexes.values()) {
    table.uniqueIndexes.push(index);
    if (index.primary) table.primaryKey = [...index.columns];
  }
  const keys = new Map<string, ForeignKey & { table: Table }>();
  for (const row of keyRows) {
    const table = tables.get(keyOf(row));
    if (!table) continue;
    const key = `${keyOf(row)}\u0000${str(row.name)}`;
    let fk = keys.get(key);
    if (!fk) {
      fk = {
        table,
        name: str(row.name),
        columns: [],
        references: { schema: str(row.rs), table: str(row.rt), columns: [] },
      };
      keys.set(key, fk);
    }
    fk.columns.push(str(row.col));
    fk.references.columns.push(str(row.rc));
  }
  for (const { table, ...fk } of keys.values()) table.foreignKeys.push(fk);
  const sorted = [...tables.values()].sort((a, b) =>
    a.schema === b.schema ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.schema < b.schema ? -1 : 1,
  );
  return { dialect: 'mysql', database, serverVersion: version, schemas, tables: sorted };
}
