/**
 * Picks the engine from a `DATABASE_URL`: `postgres://` / `postgresql://` → a server through pg;
 * `pglite:DIR` (relative or absolute path) or `pglite:memory:` → embedded PGlite.
 */
import { resolve } from 'node:path';
import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector } from '../core/ports.js';
import { maskUrl } from '../core/redact.js';

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
  /** `application_name` for server connections; default `sqlrecall`. */
  applicationName?: string;
}

/** The engine a URL selects, and its target. */
export type DatabaseTarget =
  | { engine: 'postgres'; url: string }
  | { engine: 'pglite'; dataDir: string | undefined };

/**
 * Parses a database URL without connecting.
 * @throws SqlrecallError `config` for any other scheme (the URL is masked in the message)
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { engine: 'postgres', url: trimmed };
  if (/^pglite:/i.test(trimmed)) {
    const rest = trimmed.slice('pglite:'.length).replace(/^\/\/(?=\/)/, '');
    if (rest === 'memory:' || rest === '' || rest === 'memory://')
      return { engine: 'pglite', dataDir: undefined };
    return { engine: 'pglite', dataDir: resolve(rest.replace(/^\/\/(?!\/)/, '')) };
  }
  throw new SqlrecallError(
    'config',
    `DATABASE_URL must start with postgres://, postgresql:// or pglite: (got "${maskUrl(trimmed)}").`,
    { details: { hint: 'Example: postgres://user@localhost:5432/shop or pglite:./shop-data' } },
  );
}

/**
 * Opens a connector for `url` (lazily: nothing connects until the first call; use `ping()` to
 * check). Drivers load on demand, so a pg-only user never loads the PGlite WASM.
 * @throws SqlrecallError `config` for an unsupported scheme
 */
export async function openDatabase(
  url: string,
  options: OpenDatabaseOptions = {},
): Promise<DatabaseConnector> {
  const target = parseDatabaseUrl(url);
  if (target.engine === 'postgres') {
    const { createPostgresConnector } = await import('./postgres/connector.js');
    return createPostgresConnector({
      url: target.url,
      schemas: options.schemas,
      applicationName: options.applicationName,
    });
  }
  const { createPgliteConnector } = await import('./pglite/connector.js');
  return createPgliteConnector({ dataDir: target.dataDir, schemas: options.schemas });
}
