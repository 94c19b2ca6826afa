/**
 * The schema use case: the catalog of the user's database as the model sees it, written once for
 * `sqlrecall schema [--json]`, `GET /api/schema`, the MCP `schema` tool and its `schema://tables`
 * resources. As JSON every front end gives the same {@link Schema} document; as text the same
 * {@link schemaText} rendering the prompts use.
 */
import { SqlrecallError } from '../core/errors.js';
import type { Schema, Table } from '../core/schema.js';
import type { EffectivePolicy } from '../policy/types.js';
import { visibleSchema } from '../policy/visibility.js';
import { renderSchema } from '../sql/render.js';

/** Where the catalog comes from: a runtime (read on each call) or a server's question pipeline (kept). */
export interface CatalogSource {
  /**
   * The catalog, in the configured schemas. `refresh: true` reads it again where the source keeps
   * one (a table created since is then seen by later questions too).
   * @throws SqlrecallError `config` (no database), `db_*`
   */
  catalog(options?: { refresh?: boolean }): Promise<Schema>;
}

/**
 * The catalog, or the catalog with only `table` (`schema.name`, or a bare name that is unique);
 * with `policy`, only what that user's data policy lets them see.
 * @throws SqlrecallError `not_found` (no such table), `usage` (a bare name in several schemas), `db_*`
 */
export async function readSchema(
  source: CatalogSource,
  options: { table?: string; refresh?: boolean; policy?: EffectivePolicy } = {},
): Promise<Schema> {
  const catalog = await source.catalog(options.refresh ? { refresh: true } : undefined);
  // A relation or column the user's policy hides is absent, exactly as if it did not exist.
  const schema = options.policy ? visibleSchema(catalog, options.policy) : catalog;
  if (options.table === undefined) return schema;
  return { ...schema, tables: [findTable(schema, options.table)] };
}

/** The catalog as text, one line per relation: exactly the rendering the model's prompt uses. */
export function schemaText(schema: Schema): string {
  return renderSchema(schema);
}

/**
 * Finds a table by `schema.name` or a unique bare `name` (case-sensitive first, then not).
 * @throws SqlrecallError `not_found`, `usage` (ambiguous bare name)
 */
export function findTable(schema: Schema, given: string): Table {
  const exact = schema.tables.filter((t) => `${t.schema}.${t.name}` === given || t.name === given);
  const found =
    exact.length > 0
      ? exact
      : schema.tables.filter(
          (t) =>
            `${t.schema}.${t.name}`.toLowerCase() === given.toLowerCase() ||
            t.name.toLowerCase() === given.toLowerCase(),
        );
  if (found.length === 1) return found[0]!;
  if (found.length > 1)
    throw new SqlrecallError(
      'usage',
      `"${given.slice(0, 80)}" names more than one table; qualify it as schema.name.`,
    );
  throw new SqlrecallError('not_found', `No table "${given.slice(0, 80)}" in the database.`, {
    details: { hint: 'List the tables with the schema tool or the schema://tables resource.' },
  });
}
