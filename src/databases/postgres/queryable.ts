/**
 * The smallest interface both drivers satisfy, so introspection and type look-ups run the very
 * same SQL on pg and on PGlite.
 */

/** Anything that runs a parameterised catalog query (pg client or pool, PGlite, a PGlite transaction). */
export interface Queryable {
  /** Runs one statement with `$n` parameters; rows as objects keyed by column name. */
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}
