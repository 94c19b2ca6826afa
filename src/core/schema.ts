/**
 * The database catalog as sqlrecall sees it: engine-neutral, keyed by schema and name so that the
 * same table name in two schemas never mixes. Produced by {@link DatabaseConnector.introspect}.
 */
import type { DatabaseDialectName } from './ports.js';

/** Kind of relation, as PostgreSQL's `pg_class.relkind` distinguishes them. */
export type RelationKind = 'table' | 'view' | 'materialized_view' | 'partitioned_table' | 'foreign_table';

/** One column of a relation. */
export interface Column {
  /** Column name exactly as stored in the catalog (case and spaces preserved). */
  name: string;
  /** 1-based ordinal position in the relation. */
  position: number;
  /**
   * Type as PostgreSQL prints it (`format_type`): `integer`, `numeric(10,2)`, `text[]`, `jsonb`,
   * a domain name, or an enum type name (qualified when outside `public`/`pg_catalog`).
   */
  type: string;
  /** For a domain: the underlying type as printed by `format_type`; otherwise `null`. */
  domainBaseType: string | null;
  /** For an enum (or a domain over an enum): its labels in sort order; otherwise `null`. */
  enumValues: string[] | null;
  /** False when the column is declared NOT NULL. */
  nullable: boolean;
  /** Default expression as text, or `null`. */
  default: string | null;
  /** Column comment (`COMMENT ON COLUMN`), or `null`. Untrusted text. */
  comment: string | null;
}

/** A foreign key; composite keys keep their columns paired by position. */
export interface ForeignKey {
  /** Constraint name. */
  name: string;
  /** Referencing columns, in key order. */
  columns: string[];
  /** The referenced relation and columns; `columns[i]` references `references.columns[i]`. */
  references: { schema: string; table: string; columns: string[] };
}

/** A unique index (including the primary key's index). */
export interface UniqueIndex {
  name: string;
  /** Key columns in index order; expression parts are shown as their expression text. */
  columns: string[];
  /** True for the index backing the primary key. */
  primary: boolean;
}

/** One relation (table, view, materialized view, partitioned parent or foreign table). */
export interface Table {
  schema: string;
  name: string;
  kind: RelationKind;
  /** Table comment, or `null`. Untrusted text. */
  comment: string | null;
  /**
   * Planner estimate of the row count (`pg_class.reltuples`, summed over partitions for a
   * partitioned parent); `null` when the relation was never analyzed or is a view.
   */
  estimatedRows: number | null;
  columns: Column[];
  /** Primary key columns in key order; empty when there is none. */
  primaryKey: string[];
  foreignKeys: ForeignKey[];
  uniqueIndexes: UniqueIndex[];
}

/** The whole catalog the assistant may use. */
export interface Schema {
  /** SQL dialect of the engine that produced the catalog. */
  dialect: DatabaseDialectName;
  /** Database name as reported by the server. */
  database: string;
  /** Server version string, e.g. `15.20`. */
  serverVersion: string;
  /** Schemas that were read, in search order. */
  schemas: string[];
  /** Relations sorted by schema, then name. */
  tables: Table[];
}

/** Key of a relation: `schema.name` without quoting (used for maps only, never for SQL). */
export function tableKey(table: { schema: string; name: string }): string {
  return `${table.schema}\u0000${table.name}`;
}
