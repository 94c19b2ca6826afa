/**
 * {@link DatabaseConnector} for DuckDB through `@duckdb/node-api`: a `.duckdb` file, or data files
 * (one CSV/TSV/Parquet/JSON file, or a folder of them) read in place through one view per file,
 * whose decimal columns get exact types where the file's text allows (`exact-numbers.ts`).
 *
 * What the engine itself enforces, whatever statement reaches it:
 * - the database is opened with `access_mode = READ_ONLY` (for data files: a small database of
 *   views, written once into a temporary folder and then reopened read-only);
 * - `enable_external_access = false`, with `allowed_paths` naming exactly the data files (none
 *   for a `.duckdb` file): no other file, folder, URL or database can be read, written or attached;
 * - no extension is installed or loaded (autoinstall and autoload off), nothing spills to a
 *   temporary folder beside the user's files (`temp_directory` empty);
 * - `lock_configuration = true` last, so no statement can undo any of it.
 * Before running, each statement is prepared and must be exactly one statement of type SELECT;
 * the SQL guard for this dialect (`src/sql/duckdb/`) has already refused everything else.
 * A statement runs on its own connection under a watchdog that interrupts it at `timeoutMs`
 * (DuckDB has no server-side statement timeout), and the caller's signal interrupts it too.
 */
import { closeSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import type { DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { SqlrecallError } from '../../core/errors.js';
import {
  type CellValue,
  type DatabaseConnector,
  DEFAULT_MAX_RESULT_BYTES,
  type ExecuteOptions,
  type IntrospectOptions,
  type QueryResult,
} from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import { duckdbCancelled, duckdbOpenError, duckdbQueryError } from './errors.js';
import { type CatalogQuery, exactCsvSelect, exactJsonSelect } from './exact-numbers.js';
import { type DataFile, type DataFolder, scanDataFiles } from './files.js';
import { introspectDuckdb } from './introspect.js';
import { type DuckdbModule, loadDuckdb, lockdownStatements, NO_EXTENSIONS } from './load.js';
import { DATA_FILE_READERS } from './url.js';
import { cellBytes, cellConverter, duckdbTypeName } from './values.js';

/** Options of {@link createDuckdbConnector}. */
export interface DuckdbConnectorOptions {
  /** Absolute path: a DuckDB database file, one data file, or a folder of data files. */
  path: string;
  /** Schemas to introspect by default; default: every schema of the database. */
  schemas?: string[];
  /** Replaces the import of `@duckdb/node-api` (tests of a missing package). */
  loader?: () => Promise<DuckdbModule>;
}

/** `'text'` as a DuckDB string literal. */
export function duckdbLiteral(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}

/** `"name"` as a DuckDB quoted identifier. */
export function duckdbIdentifier(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The table function reading one data file, on its absolute path. */
export function dataFileReader(file: Pick<DataFile, 'path' | 'format'>): string {
  const path = duckdbLiteral(file.path);
  switch (file.format) {
    case 'csv':
      return `read_csv_auto(${path})`;
    case 'tsv':
      return `read_csv_auto(${path}, delim = '\\t')`;
    case 'parquet':
      return `read_parquet(${path})`;
    case 'json':
      return `read_json_auto(${path})`;
    case 'jsonl':
      return `read_json_auto(${path}, format = 'newline_delimited')`;
  }
}

/**
 * The SELECT of one data file's view: the file's reader, with the columns it takes for DOUBLE
 * given exact types where the file's text allows (`exact-numbers.ts`).
 * @throws SqlrecallError `config` for a JSON number no type gives back as written
 */
export async function dataFileSelect(
  query: CatalogQuery,
  file: Pick<DataFile, 'path' | 'format' | 'fileName'>,
): Promise<string> {
  const path = duckdbLiteral(file.path);
  const withArguments = (...extra: string[]) => extra.filter((part) => part !== '').join(', ');
  switch (file.format) {
    case 'csv':
      return exactCsvSelect(query, (extra) => `read_csv_auto(${withArguments(path, extra)})`);
    case 'tsv':
      return exactCsvSelect(
        query,
        (extra) => `read_csv_auto(${withArguments(path, "delim = '\\t'", extra)})`,
      );
    case 'json':
      return exactJsonSelect(query, dataFileReader(file), `read_json_objects(${path})`, file.fileName);
    case 'jsonl':
      return exactJsonSelect(
        query,
        dataFileReader(file),
        `read_json_objects(${path}, format = 'newline_delimited')`,
        file.fileName,
      );
    case 'parquet':
      return `SELECT * FROM ${dataFileReader(file)}`;
  }
}

/** What {@link createDuckdbConnector} opens: a database file, or data files as views. */
type Source = { kind: 'database'; path: string } | { kind: 'files'; data: DataFolder };

function sourceOf(path: string): Source {
  const lower = path.toLowerCase();
  const dataFile = Object.keys(DATA_FILE_READERS).some((extension) => lower.endsWith(extension));
  let folder = false;
  try {
    folder = statSync(path).isDirectory();
  } catch {
    // missing: scanDataFiles and the database open say so in their own words
  }
  if (folder || dataFile) return { kind: 'files', data: scanDataFiles(path) };
  return { kind: 'database', path };
}

interface Opened {
  instance: DuckDBInstance;
  /** Folder of the views' database, removed on close. */
  tempDir?: string;
}

/**
 * Creates a connector. The package is loaded and a folder's files are listed now (so a missing
 * package, path or file is a configuration error at once); the database opens on the first call.
 * @throws SqlrecallError `config` when `@duckdb/node-api` is not installed, or the path holds no
 *   data (see {@link scanDataFiles})
 */
export async function createDuckdbConnector(options: DuckdbConnectorOptions): Promise<DatabaseConnector> {
  const duckdb = await loadDuckdb(options.loader);
  const source = sourceOf(options.path);
  const displayName = `duckdb:${options.path}`;
  const converter = cellConverter(duckdb);
  let opening: Promise<Opened> | undefined;
  let closed = false;
  const running = new Set<{ connection: DuckDBConnection; done: Promise<unknown> }>();

  const open = (): Promise<Opened> => {
    if (closed) return Promise.reject(new SqlrecallError('db_unreachable', `${displayName} is closed.`));
    opening ??= openSource(duckdb, source, displayName).catch((error: unknown) => {
      opening = undefined;
      throw error;
    });
    return opening;
  };

  /** Runs `work` on a connection of its own, closed afterwards; close() waits for it. */
  const withConnection = async <T>(work: (connection: DuckDBConnection) => Promise<T>): Promise<T> => {
    const { instance } = await open();
    const connection = await instance.connect();
    const done = work(connection).finally(() => {
      running.delete(entry);
      connection.closeSync();
    });
    const entry = { connection, done };
    running.add(entry);
    return done;
  };

  const catalogQuery =
    (connection: DuckDBConnection) =>
    async (sql: string, params: unknown[] = []) => {
      const values = params.map((value) =>
        Array.isArray(value) ? duckdb.listValue(value.map(String)) : (value as string),
      );
      const reader = await connection.runAndReadAll(sql, values);
      return reader.getRowObjectsJson() as Record<string, unknown>[];
    };

  return {
    dialect: 'duckdb',
    displayName,

    async ping(): Promise<void> {
      try {
        await withConnection((connection) => connection.run('SELECT 1'));
      } catch (error) {
        throw duckdbOpenError(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      try {
        const given = introspectOptions.schemas?.length ? introspectOptions.schemas : options.schemas;
        return await withConnection((connection) =>
          introspectDuckdb(catalogQuery(connection), {
            ...(given?.length ? { schemas: given } : {}),
            ...(source.kind === 'files' ? { database: basename(source.data.folder) } : {}),
          }),
        );
      } catch (error) {
        throw error instanceof SqlrecallError ? error : duckdbQueryError(error);
      }
    },

    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      const { signal, timeoutMs } = executeOptions;
      if (signal?.aborted) throw duckdbCancelled();
      let timedOut = false;
      let aborted = false;
      try {
        return await withConnection(async (connection) => {
          const onAbort = (): void => {
            aborted = true;
            connection.interrupt();
          };
          signal?.addEventListener('abort', onAbort, { once: true });
          const watchdog = setTimeout(() => {
            timedOut = true;
            connection.interrupt();
          }, timeoutMs);
          try {
            const stopped = () => timedOut || aborted;
            return await runSelect(duckdb, connection, sql, executeOptions, converter, stopped);
          } finally {
            clearTimeout(watchdog);
            signal?.removeEventListener('abort', onAbort);
          }
        });
      } catch (error) {
        throw duckdbQueryError(error, { timeoutMs, timedOut, aborted: aborted || signal?.aborted });
      }
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      for (const { connection } of running) connection.interrupt();
      await Promise.allSettled([...running].map(({ done }) => done));
      const opened = await opening?.catch(() => undefined);
      opened?.instance.closeSync();
      if (opened?.tempDir) rmSync(opened.tempDir, { recursive: true, force: true });
    },
  };
}

/**
 * Opens the source read-only and locks its configuration (see the module comment).
 * @throws SqlrecallError `config` for a data file DuckDB cannot read; `db_unreachable` otherwise
 */
async function openSource(duckdb: DuckdbModule, source: Source, displayName: string): Promise<Opened> {
  let tempDir: string | undefined;
  let instance: DuckDBInstance | undefined;
  try {
    let path: string;
    let allowed: string[] = [];
    if (source.kind === 'database') {
      path = source.path;
      if (startsWithSqliteHeader(path))
        throw new SqlrecallError('config', `${path} is a SQLite file, not a DuckDB one: use sqlite:${path}`, {
          details: { hint: `DATABASE_URL=sqlite:${path} (or --db sqlite:${path})` },
        });
    } else {
      tempDir = mkdtempSync(join(tmpdir(), 'sqlrecall-duckdb-views-'));
      path = join(tempDir, 'files.duckdb');
      await writeViews(duckdb, path, source.data.files);
      allowed = source.data.files.map((file) => file.path);
    }
    instance = await duckdb.DuckDBInstance.create(path, { ...NO_EXTENSIONS, access_mode: 'READ_ONLY' });
    const setup = await instance.connect();
    try {
      for (const statement of lockdownStatements(allowed)) await setup.run(statement);
      await refuseShadowingMacros(setup, displayName);
    } finally {
      setup.closeSync();
    }
    return { instance, ...(tempDir ? { tempDir } : {}) };
  } catch (error) {
    instance?.closeSync();
    if (tempDir) rmSync(tempDir, { recursive: true, force: true });
    throw duckdbOpenError(displayName, error);
  }
}

/**
 * Refuses a database that defines a macro under the name of a built-in function. The guard accepts
 * calls by the names of DuckDB's built-in functions, learnt from an engine that has no file; a
 * stored macro of the same name would run in their place and could read any table (the allowlist
 * and the data file's other tables included). Macros of new names need no check here: the guard
 * refuses any function it does not know.
 *
 * @throws SqlrecallError `config` naming the macros.
 */
async function refuseShadowingMacros(connection: DuckDBConnection, displayName: string): Promise<void> {
  const rows = (
    await connection.runAndReadAll(
      `SELECT DISTINCT function_name FROM duckdb_functions() AS stored
        WHERE NOT internal
          AND lower(function_name) IN (SELECT lower(function_name) FROM duckdb_functions() WHERE internal)
        ORDER BY 1`,
    )
  ).getRowObjectsJson() as { function_name?: unknown }[];
  const names = rows.map((row) => String(row.function_name));
  if (names.length === 0) return;
  throw new SqlrecallError(
    'config',
    `${displayName} defines ${names.length === 1 ? 'a macro' : 'macros'} under the name of DuckDB's built-in ${names.length === 1 ? 'function' : 'functions'} ${names.join(', ')}; sqlrecall cannot tell such a call from the built-in one, so it does not open this database.`,
    {
      details: {
        hint: 'Rename or drop the macro in the database (DROP MACRO name), or give sqlrecall a copy without it.',
      },
    },
  );
}

/**
 * True when the file begins with SQLite's header. DuckDB would read such a file only through its
 * SQLite extension, which sqlrecall never loads; the file belongs to `sqlite:PATH`.
 */
function startsWithSqliteHeader(path: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const header = Buffer.alloc(16);
    const read = readSync(fd, header, 0, 16, 0);
    return read === 16 && header.toString('latin1') === 'SQLite format 3\u0000';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Writes one view per data file into a new database at `path`, then closes it. */
async function writeViews(duckdb: DuckdbModule, path: string, files: readonly DataFile[]): Promise<void> {
  const writer = await duckdb.DuckDBInstance.create(path, { ...NO_EXTENSIONS });
  try {
    const connection = await writer.connect();
    try {
      // The files are read here to learn their columns: with no extension loaded on the way.
      for (const statement of lockdownStatements().slice(0, 4)) await connection.run(statement);
      const query: CatalogQuery = async (sql) =>
        (await connection.runAndReadAll(sql)).getRowObjectsJson() as Record<string, unknown>[];
      for (const file of files) {
        try {
          const select = await dataFileSelect(query, file);
          await connection.run(`CREATE VIEW ${duckdbIdentifier(file.table)} AS ${select}`);
        } catch (error) {
          if (error instanceof SqlrecallError) throw error;
          throw new SqlrecallError(
            'config',
            `Cannot read ${file.path} as ${file.format.toUpperCase()}: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`,
            {
              cause: error,
              details: { hint: 'Fix or remove the file; the other files are not opened until it reads.' },
            },
          );
        }
      }
    } finally {
      connection.closeSync();
    }
  } finally {
    writer.closeSync();
  }
}

/** A refusal by the engine's own check of the statement (the guard should have refused it first). */
function engineRefusal(reason: string, rule: string): SqlrecallError {
  return new SqlrecallError('guard_refused', `refused: ${reason}`, { details: { rule } });
}

/**
 * Prepares `sql`, checks it is exactly one SELECT, and streams its rows under the row cap and the
 * byte budget; `stopped` tells between chunks that the watchdog or the caller interrupted it.
 */
async function runSelect(
  duckdb: DuckdbModule,
  connection: DuckDBConnection,
  sql: string,
  options: ExecuteOptions,
  converter: ReturnType<typeof cellConverter>,
  stopped: () => boolean,
): Promise<QueryResult> {
  const maxRows = Math.max(0, Math.floor(options.maxRows));
  const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES));
  const interrupted = () => new Error('INTERRUPT Error: Interrupted!');
  const extracted = await connection.extractStatements(sql);
  if (extracted.count !== 1)
    throw engineRefusal(
      extracted.count === 0 ? 'there is no SQL statement' : 'only one statement is allowed',
      extracted.count === 0 ? 'empty' : 'multiple-statements',
    );
  const prepared = await extracted.prepare(0);
  try {
    if (prepared.statementType !== duckdb.StatementType.SELECT)
      throw engineRefusal('only SELECT is allowed', 'statement-kind');
    if (options.params?.length) prepared.bind([...options.params]);
    if (stopped()) throw interrupted();
    const started = performance.now();
    const result = await prepared.stream();
    const types = result.columnTypes();
    const columns = result.columnNames().map((name, i) => ({ name, type: duckdbTypeName(types[i]!) }));
    const rows: CellValue[][] = [];
    let bytes = 0;
    let truncatedReason: 'max_rows' | 'max_bytes' | undefined;
    reading: for (;;) {
      if (stopped()) throw interrupted();
      const chunk = await result.fetchChunk();
      if (!chunk || chunk.rowCount === 0) break;
      const values = types.map((_, i) => chunk.convertColumnValues(i, converter));
      for (let r = 0; r < chunk.rowCount; r += 1) {
        if (rows.length === maxRows) {
          truncatedReason = 'max_rows';
          break reading;
        }
        const row = values.map((column) => column[r] ?? null);
        let size = 0;
        for (const cell of row) size += cellBytes(cell);
        if (bytes + size > maxBytes) {
          if (rows.length === 0)
            throw new SqlrecallError(
              'result_too_large',
              `The first row alone (${size} bytes) is larger than the result budget of ${maxBytes} bytes; it was not kept.`,
              {
                details: {
                  maxBytes,
                  hint: 'Select fewer or shorter columns (e.g. left(col, 1000)), or raise --max-result-bytes.',
                },
              },
            );
          truncatedReason = 'max_bytes';
          break reading;
        }
        bytes += size;
        rows.push(row);
      }
    }
    return {
      columns,
      rows,
      rowCount: rows.length,
      truncated: truncatedReason !== undefined,
      ...(truncatedReason !== undefined ? { truncatedReason } : {}),
      durationMs: Math.round((performance.now() - started) * 100) / 100,
    };
  } finally {
    prepared.destroySync();
  }
}
