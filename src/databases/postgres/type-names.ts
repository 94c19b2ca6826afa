/**
 * Type oid → type name for result columns: a static map of the built-in types, and one cached
 * catalog look-up (`pg_type`) for anything else (enums, domains' arrays, extension types).
 */
import type { Queryable } from './queryable.js';
import { ARRAY_ELEMENT_OIDS, type ElementOidLookup } from './values.js';

/** Built-in type names by oid (PostgreSQL `pg_type.dat`). */
const BUILTIN_TYPE_NAMES: ReadonlyMap<number, string> = new Map([
  [16, 'bool'],
  [17, 'bytea'],
  [18, 'char'],
  [19, 'name'],
  [20, 'int8'],
  [21, 'int2'],
  [23, 'int4'],
  [25, 'text'],
  [26, 'oid'],
  [114, 'json'],
  [142, 'xml'],
  [650, 'cidr'],
  [700, 'float4'],
  [701, 'float8'],
  [705, 'unknown'],
  [790, 'money'],
  [829, 'macaddr'],
  [869, 'inet'],
  [1042, 'bpchar'],
  [1043, 'varchar'],
  [1082, 'date'],
  [1083, 'time'],
  [1114, 'timestamp'],
  [1184, 'timestamptz'],
  [1186, 'interval'],
  [1266, 'timetz'],
  [1560, 'bit'],
  [1562, 'varbit'],
  [1700, 'numeric'],
  [2249, 'record'],
  [2950, 'uuid'],
  [3614, 'tsvector'],
  [3615, 'tsquery'],
  [3802, 'jsonb'],
]);

const LOOKUP_SQL = `SELECT t.oid::text AS oid,
  CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN e.typname::text || '[]' ELSE t.typname::text END AS name,
  CASE WHEN t.typcategory = 'A' AND t.typelem <> 0 THEN t.typelem::text END AS element
FROM pg_catalog.pg_type t LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem
WHERE t.oid = ANY($1::oid[])`;

/** Resolves type oids to names; one instance per connector (oids are per database). */
export class TypeNameCache {
  private readonly names = new Map<number, string>();
  private readonly elements = new Map<number, number>();

  /** Name of a type already known (built-in or looked up before), else `undefined`. */
  known(oid: number): string | undefined {
    const builtin = BUILTIN_TYPE_NAMES.get(oid);
    if (builtin !== undefined) return builtin;
    const element = ARRAY_ELEMENT_OIDS.get(oid);
    if (element !== undefined) return `${BUILTIN_TYPE_NAMES.get(element) ?? element}[]`;
    return this.names.get(oid);
  }

  /**
   * Makes sure every oid has a name, with at most one catalog query for the unknown ones.
   * Unknown oids that the catalog does not have are named by their number.
   */
  async resolve(oids: number[], db: Queryable): Promise<void> {
    const missing = [...new Set(oids)].filter((oid) => this.known(oid) === undefined);
    if (missing.length === 0) return;
    const result = await db.query(LOOKUP_SQL, [missing]);
    for (const row of result.rows) {
      const oid = Number(row.oid);
      this.names.set(oid, String(row.name));
      if (row.element !== null && row.element !== undefined) this.elements.set(oid, Number(row.element));
    }
    for (const oid of missing) if (!this.names.has(oid)) this.names.set(oid, String(oid));
  }

  /** Type name of `oid` (call {@link resolve} first). */
  name(oid: number): string {
    return this.known(oid) ?? String(oid);
  }

  /** Element oid of an array type, for value conversion. */
  readonly elementOf: ElementOidLookup = (oid) => ARRAY_ELEMENT_OIDS.get(oid) ?? this.elements.get(oid);
}
