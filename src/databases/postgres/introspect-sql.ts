/**
 * The catalog queries of {@link introspectCatalog}: a fixed number (five) whatever the table count.
 * Every query takes `$1 text[]`: the schemas to read, or NULL for every non-system schema.
 * Written for PostgreSQL 12+ (`pg_partition_tree`, `conparentid`); tested on 15 and 18.
 * Values are cast to int4/float8/text/bool/text[] so that pg and PGlite parse them alike.
 */

/**
 * Relations in scope: tables, views, materialized views, partitioned parents (never their
 * partitions), foreign tables; no system schemas, no objects that belong to an extension.
 */
const RELATIONS_CTE = `rel AS (
  SELECT c.oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS relkind
  FROM pg_catalog.pg_class c
  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
  WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f')
    AND NOT c.relispartition
    AND CASE WHEN $1::text[] IS NULL THEN
          n.nspname NOT IN ('pg_catalog', 'information_schema')
          AND n.nspname NOT LIKE 'pg\\_toast%'
          AND n.nspname NOT LIKE 'pg\\_temp\\_%'
        ELSE n.nspname = ANY($1::text[]) END
    AND NOT EXISTS (
      SELECT 1 FROM pg_catalog.pg_depend d
      WHERE d.classid = 'pg_catalog.pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e'
    )
)`;

/** Database name, version and search path. Takes no parameters. */
export const META_SQL = `SELECT current_database()::text AS database,
  current_setting('server_version_num')::int4 AS version_num,
  current_setting('server_version')::text AS version,
  current_schemas(false)::text[] AS search_path`;

/** One row per relation, with comment and row estimate (summed over leaf partitions). */
export const RELATIONS_SQL = `WITH ${RELATIONS_CTE}
SELECT r.schema, r.name, r.relkind,
  pg_catalog.obj_description(r.oid, 'pg_class')::text AS comment,
  CASE
    WHEN r.relkind = 'v' THEN NULL
    WHEN r.relkind = 'p' THEN (
      SELECT sum(pc.reltuples) FILTER (WHERE pc.reltuples >= 0)::float8
      FROM pg_catalog.pg_partition_tree(r.oid) t
      JOIN pg_catalog.pg_class pc ON pc.oid = t.relid
      WHERE t.isleaf)
    WHEN c.reltuples < 0 THEN NULL
    ELSE c.reltuples::float8
  END AS estimated_rows
FROM rel r JOIN pg_catalog.pg_class c ON c.oid = r.oid`;

/**
 * One row per user column (no dropped or system columns): `format_type` spelling, NOT NULL,
 * default, comment; the base type of a domain; enum labels in `enumsortorder` for an enum, an
 * array of enums, a domain over an enum, or a domain over an array of enums.
 */
export const COLUMNS_SQL = `WITH ${RELATIONS_CTE}
SELECT r.schema, r.name AS table, a.attname::text AS name, a.attnum::int4 AS position,
  pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
  CASE WHEN t.typtype = 'd' THEN pg_catalog.format_type(t.typbasetype, t.typtypmod) END AS domain_base_type,
  a.attnotnull AS not_null,
  pg_catalog.pg_get_expr(ad.adbin, ad.adrelid) AS default,
  pg_catalog.col_description(a.attrelid, a.attnum)::text AS comment,
  (SELECT array_agg(e.enumlabel::text ORDER BY e.enumsortorder)
     FROM pg_catalog.pg_enum e WHERE e.enumtypid = et.oid) AS enum_values
FROM rel r
JOIN pg_catalog.pg_attribute a ON a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped
JOIN pg_catalog.pg_type t ON t.oid = a.atttypid
LEFT JOIN pg_catalog.pg_type bt ON bt.oid = CASE WHEN t.typtype = 'd' THEN t.typbasetype ELSE t.oid END
LEFT JOIN pg_catalog.pg_type et ON et.typtype = 'e'
  AND et.oid = CASE WHEN bt.typcategory = 'A' AND bt.typelem <> 0 THEN bt.typelem ELSE bt.oid END
LEFT JOIN pg_catalog.pg_attrdef ad ON ad.adrelid = a.attrelid AND ad.adnum = a.attnum`;

/**
 * Primary and foreign keys with their columns paired by position
 * (`unnest(conkey, confkey) WITH ORDINALITY`). Only top-level constraints: PostgreSQL adds
 * child constraints (`conparentid <> 0`) for FKs that reference a partitioned table.
 */
export const CONSTRAINTS_SQL = `WITH ${RELATIONS_CTE}
SELECT r.schema, r.name AS table, con.conname::text AS name, con.contype::text AS type,
  array_agg(la.attname::text ORDER BY k.ord) AS columns,
  fn.nspname::text AS ref_schema, fc.relname::text AS ref_table,
  array_agg(fa.attname::text ORDER BY k.ord) AS ref_columns
FROM rel r
JOIN pg_catalog.pg_constraint con ON con.conrelid = r.oid AND con.contype IN ('p', 'f') AND con.conparentid = 0
CROSS JOIN LATERAL unnest(con.conkey, con.confkey) WITH ORDINALITY AS k(attnum, ref_attnum, ord)
JOIN pg_catalog.pg_attribute la ON la.attrelid = con.conrelid AND la.attnum = k.attnum
LEFT JOIN pg_catalog.pg_attribute fa ON fa.attrelid = con.confrelid AND fa.attnum = k.ref_attnum
LEFT JOIN pg_catalog.pg_class fc ON fc.oid = con.confrelid
LEFT JOIN pg_catalog.pg_namespace fn ON fn.oid = fc.relnamespace
GROUP BY r.schema, r.name, con.oid, con.conname, con.contype, fn.nspname, fc.relname`;

/**
 * Unique indexes (including the primary key's), partial ones excluded. Key columns in index
 * order; an expression part is shown as its expression text.
 */
export const UNIQUE_INDEXES_SQL = `WITH ${RELATIONS_CTE}
SELECT r.schema, r.name AS table, ic.relname::text AS name, i.indisprimary AS primary,
  ARRAY(
    SELECT COALESCE(ka.attname::text, pg_catalog.pg_get_indexdef(i.indexrelid, k.n::int4, true))
    FROM generate_series(1, i.indnkeyatts) AS k(n)
    LEFT JOIN pg_catalog.pg_attribute ka
      ON ka.attrelid = i.indrelid AND ka.attnum = i.indkey[k.n - 1] AND i.indkey[k.n - 1] <> 0
    ORDER BY k.n
  ) AS columns
FROM rel r
JOIN pg_catalog.pg_index i ON i.indrelid = r.oid AND i.indisunique AND i.indpred IS NULL
JOIN pg_catalog.pg_class ic ON ic.oid = i.indexrelid`;
