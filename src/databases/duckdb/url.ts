/**
 * Which database texts name DuckDB: `duckdb:PATH` (a `.duckdb` file, one data file or a folder of
 * them), and a plain path without a scheme to a data file (`./sales.csv`), a `.duckdb` file or a
 * folder (`./exports/`). Only the text and, for a plain folder name, whether that folder exists
 * are looked at here; the connector decides what the path holds when it opens it.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { extname, join, resolve } from 'node:path';
import { SqlrecallError } from '../../core/errors.js';

/** How each data file is read, by its extension (lower case, with the dot). */
export const DATA_FILE_READERS: Readonly<Record<string, 'csv' | 'tsv' | 'parquet' | 'json' | 'jsonl'>> = {
  '.csv': 'csv',
  '.tsv': 'tsv',
  '.parquet': 'parquet',
  '.json': 'json',
  '.jsonl': 'jsonl',
  '.ndjson': 'jsonl',
};

/** Extensions of DuckDB's own database files. */
const DUCKDB_FILE_EXTENSIONS = new Set(['.duckdb', '.ddb']);

/** Extensions of SQLite files: another engine's, named with `sqlite:PATH`. */
const SQLITE_FILE_EXTENSIONS = new Set(['.sqlite', '.sqlite3', '.db', '.db3']);

/** `~` and `~/…` name the home folder, as in a shell (no shell expands them inside a URL). */
function expandHome(path: string): string {
  if (path === '~') return homedir();
  if (path.startsWith('~/')) return join(homedir(), path.slice(2));
  return path;
}

/**
 * The absolute path a database text names for DuckDB, or undefined when the text is not DuckDB's
 * (a URL with another scheme, or a plain word that is neither a data file nor an existing folder).
 * @throws SqlrecallError `config` for `duckdb:` without a path, and for a plain path to a SQLite
 *   file (an engine of its own: `sqlite:PATH`)
 */
export function duckdbPathOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (/^duckdb:/i.test(trimmed)) {
    const rest = trimmed
      .slice('duckdb:'.length)
      .replace(/^\/\/(?=\/)/, '')
      .replace(/^\/\/(?!\/)/, '');
    if (rest === '' || rest === 'memory:')
      throw new SqlrecallError('config', 'duckdb: names no file or folder.', {
        details: {
          hint: 'Give a DuckDB file (duckdb:./sales.duckdb), a data file (duckdb:./sales.csv) or a folder of CSV, Parquet or JSON files (duckdb:./exports/).',
        },
      });
    return resolve(expandHome(rest));
  }
  // Anything with a scheme (`postgres:`, `oracle://`, `C:` aside) is not a plain path.
  if (trimmed === '' || /^[a-z][a-z0-9+.-]+:/i.test(trimmed)) return undefined;
  const path = resolve(expandHome(trimmed));
  const extension = extname(trimmed).toLowerCase();
  if (SQLITE_FILE_EXTENSIONS.has(extension))
    throw new SqlrecallError('config', `${trimmed} looks like a SQLite file: use sqlite:${trimmed}`, {
      details: { hint: `DATABASE_URL=sqlite:${trimmed} (or --db sqlite:${trimmed})` },
    });
  if (extension in DATA_FILE_READERS || DUCKDB_FILE_EXTENSIONS.has(extension)) return path;
  if (/[/\\]$/.test(trimmed)) return path;
  return isDirectory(path) ? path : undefined;
}

function isDirectory(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isDirectory();
  } catch {
    return false;
  }
}
