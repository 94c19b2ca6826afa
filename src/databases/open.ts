/**
 * Picks the engine from a `DATABASE_URL`: `postgres://` / `postgresql://` → a server through pg;
 * `pglite:DIR` (relative or absolute path) or `pglite:memory:` → embedded PGlite;
 * `mysql://` / `mariadb://` → MySQL or MariaDB through mysql2; `sqlite:PATH` → an existing SQLite
 * file through better-sqlite3 (optional dependency); `duckdb:PATH`, or a plain path to a
 * `.duckdb` file, a CSV/TSV/Parquet/JSON file or a folder of them → DuckDB (`duckdb/url.ts`).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, DatabaseDialectName } from '../core/ports.js';
import { maskUrl } from '../core/redact.js';
import { duckdbPathOf } from './duckdb/url.js';

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
  /** `application_name` for server connections; default `sqlrecall`. */
  applicationName?: string;
  /**
   * The table allowlist (`--allow-tables`), for the engines that check it again when a statement
   * runs (SQLite: on its compiled program); the guard checks it on the text for every engine.
   */
  allowTables?: readonly string[];
}

/** The engine a URL selects, and its target. */
export type DatabaseTarget =
  | { engine: 'postgres'; url: string }
  | { engine: 'mysql'; url: string }
  | { engine: 'sqlite'; url: string }
  | { engine: 'pglite'; dataDir: string | undefined }
  | { engine: 'duckdb'; path: string };

/**
 * Parses a database URL without connecting.
 * @throws SqlrecallError `config` for any other scheme (the URL is masked in the message)
 */
export function parseDatabaseUrl(url: string): DatabaseTarget {
  const trimmed = url.trim();
  if (/^postgres(ql)?:\/\//i.test(trimmed)) return { engine: 'postgres', url: trimmed };
  if (/^(mysql|mariadb):\/\//i.test(trimmed)) return { engine: 'mysql', url: trimmed };
  if (/^sqlite:/i.test(trimmed)) return { engine: 'sqlite', url: trimmed };
  if (/^pglite:/i.test(trimmed)) {
    const rest = trimmed.slice('pglite:'.length).replace(/^\/\/(?=\/)/, '');
    if (rest === 'memory:' || rest === '' || rest === 'memory://')
      return { engine: 'pglite', dataDir: undefined };
    return { engine: 'pglite', dataDir: resolve(expandHome(rest.replace(/^\/\/(?!\/)/, ''))) };
  }
  const duckdbPath = duckdbPathOf(trimmed);
  if (duckdbPath !== undefined) return { engine: 'duckdb', path: duckdbPath };
  throw new SqlrecallError(
    'config',
    `DATABASE_URL must start with postgres://, postgresql://, pglite:, mysql://, mariadb://, sqlite: or duckdb:, or name a data file or folder (got "${maskUrl(trimmed)}").`,
    {
      details: {
        hint: 'Example: postgres://user@localhost:5432/shop, pglite:./shop-data, sqlite:./app.db, duckdb:./sales.duckdb or ./exports/ (a folder of CSV/Parquet files)',
      },
    },
  );
}

/**
 * `~` and `~/…` name the home folder, as in a shell: after `pglite:` no shell expands them, so
 * `--db pglite:~/.sqlrecall/demo-shop` would otherwise name a folder called `~` under the current one.
 */
function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * Opens a connector for `url` (lazily: nothing connects until the first call; use `ping()` to
 * check). Drivers load on demand, so a pg-only user never loads the PGlite WASM.
 * @throws SqlrecallError `config` for an unsupported scheme, or a `pglite:` folder that does not exist
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
  if (target.engine === 'mysql') {
    const { createMysqlConnector } = await import('./mysql/connector.js');
    return createMysqlConnector({ url: target.url, schemas: options.schemas });
  }
  if (target.engine === 'duckdb') {
    const { createDuckdbConnector } = await import('./duckdb/connector.js');
    return createDuckdbConnector({ path: target.path, schemas: options.schemas });
  }
  if (target.engine === 'sqlite') {
    const { createSqliteConnector } = await import('./sqlite/connector.js');
    return createSqliteConnector({
      url: target.url,
      ...(options.allowTables?.length ? { allowTables: options.allowTables } : {}),
    });
  }
  // A missing parent folder is a mistyped path: creating every folder on the way would scatter
  // empty databases over the disk.
  if (target.dataDir !== undefined && !existsSync(target.dataDir) && !existsSync(dirname(target.dataDir)))
    throw new SqlrecallError(
      'config',
      `There is no database at ${target.dataDir}, nor the folder ${dirname(target.dataDir)}.`,
      {
        details: {
          hint: 'Give the folder of an existing embedded database (pglite:DIR), a postgres:// URL, or create the demo shop with `sqlrecall demo`.',
        },
      },
    );
  // A missing folder under an existing parent is refused too: a mistyped path must not quietly
  // become an empty database that answers every question with "no such table". Databases are
  // created by `sqlrecall demo` (or in a folder the user made).
  if (target.dataDir !== undefined && !existsSync(target.dataDir))
    throw new SqlrecallError(
      'config',
      `There is no database at ${target.dataDir}: give the folder of an existing embedded database, or create the demo shop with \`sqlrecall demo\`.`,
      {
        details: {
          hint: 'pglite:DIR names an existing folder (an empty one starts a new database); a server is postgres://…',
        },
      },
    );
  const { createPgliteConnector } = await import('./pglite/connector.js');
  return createPgliteConnector({ dataDir: target.dataDir, schemas: options.schemas });
}

/**
 * The SQL dialect a database URL selects, without connecting (see {@link parseDatabaseUrl});
 * `postgres` for a missing or unparsable URL, which fails later when the database is opened.
 */
export function dialectOfUrl(url: string | undefined): DatabaseDialectName {
  if (url === undefined) return 'postgres';
  let target: DatabaseTarget;
  try {
    target = parseDatabaseUrl(url);
  } catch {
    return 'postgres';
  }
  return ENGINE_DIALECT[target.engine];
}

/** The SQL dialect each engine speaks. */
const ENGINE_DIALECT: Record<DatabaseTarget['engine'], DatabaseDialectName> = {
  postgres: 'postgres',
  pglite: 'postgres',
  mysql: 'mysql',
  duckdb: 'duckdb',
  sqlite: 'sqlite',
};
