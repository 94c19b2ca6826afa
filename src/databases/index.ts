/**
 * Database connectors: one folder per engine, chosen by {@link openDatabase}. The connectors
 * themselves are imported from their folders (or loaded by `openDatabase` on demand) so that
 * importing this module never loads a driver.
 */
export { type DatabaseTarget, type OpenDatabaseOptions, openDatabase, parseDatabaseUrl } from './open.js';
export {
  type IntrospectCatalogOptions,
  introspectCatalog,
  introspectionStats,
} from './postgres/introspect.js';
export type { Queryable } from './postgres/queryable.js';
export { convertValue, parseArrayLiteral } from './postgres/values.js';
