/** Helpers shared by the route modules. */
import type { Schema } from '../../core/schema.js';
import type { ServerDeps } from '../deps.js';

/** The catalog when the database is reachable; undefined otherwise (SQL is then parser-checked only). */
export async function optionalSchema(deps: ServerDeps): Promise<Schema | undefined> {
  try {
    return (await (await deps.assistant()).schema()).schema;
  } catch {
    return undefined;
  }
}
