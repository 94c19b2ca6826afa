/**
 * Loads `@duckdb/node-api`, an optional dependency: its native binary is large and only DuckDB
 * users need it, so it is imported on first use and its absence is a configuration error that
 * says how to install it, never a module-resolution stack trace.
 */
import { SqlrecallError } from '../../core/errors.js';

/** The DuckDB client module. */
export type DuckdbModule = typeof import('@duckdb/node-api');

/** The exact version sqlrecall is tested with (package.json pins the same). */
export const DUCKDB_PACKAGE = '@duckdb/node-api@1.5.6-r.1';

let loaded: Promise<DuckdbModule> | undefined;

/** True when `error` says a module (or its native binding) could not be found. */
function isMissingModule(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') return true;
  return /Cannot find (module|package)|node-bindings/i.test(error instanceof Error ? error.message : '');
}

/**
 * The DuckDB module, imported once per process (a failed import is retried on the next call).
 * `importer` replaces the import, uncached (tests).
 * @throws SqlrecallError `config` when the package or its platform binary is not installed
 */
export function loadDuckdb(importer?: () => Promise<DuckdbModule>): Promise<DuckdbModule> {
  if (importer) return importer().catch(missingPackage);
  loaded ??= import('@duckdb/node-api').catch((error: unknown) => {
    loaded = undefined;
    return missingPackage(error);
  });
  return loaded;
}

function missingPackage(error: unknown): never {
  if (!isMissingModule(error)) throw error;
  throw new SqlrecallError(
    'config',
    `DuckDB support needs the @duckdb/node-api package: npm install ${DUCKDB_PACKAGE}`,
    {
      cause: error,
      details: {
        hint: 'Install it beside sqlrecall; its platform binary (@duckdb/node-bindings-*) comes with it from the npm registry.',
      },
    },
  );
}

/**
 * Options every DuckDB instance sqlrecall creates is opened with: no extension installed or
 * loaded, even while the file is opened. They must be given at creation, not set after it: DuckDB
 * recognises some files by their header when it opens them (a SQLite file, say) and would fetch
 * and load the extension that reads them before any `SET` could run.
 */
export const NO_EXTENSIONS: Readonly<Record<string, string>> = {
  autoinstall_known_extensions: 'false',
  autoload_known_extensions: 'false',
  allow_community_extensions: 'false',
};

/**
 * The statements that lock an opened DuckDB instance down, in the order the engine accepts them:
 * no extension installed or loaded, nothing spilled to a temporary folder, no file but
 * `allowedPaths` reachable (`enable_external_access = false` also stops ATTACH, COPY and
 * INSTALL everywhere else), then the configuration locked so no statement can undo any of it.
 */
export function lockdownStatements(allowedPaths: readonly string[] = []): string[] {
  const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;
  return [
    'SET autoinstall_known_extensions = false',
    'SET autoload_known_extensions = false',
    'SET allow_community_extensions = false',
    "SET temp_directory = ''",
    ...(allowedPaths.length > 0 ? [`SET allowed_paths = [${allowedPaths.map(literal).join(', ')}]`] : []),
    'SET enable_external_access = false',
    'SET lock_configuration = true',
  ];
}
