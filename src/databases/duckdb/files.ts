/**
 * Data files as tables: the CSV, TSV, Parquet and JSON files of one folder (or one such file),
 * each becoming a view named after the file that reads it in place. Only the folder's own files
 * count: subfolders and hidden files are left out, and a file that is a symbolic link to
 * somewhere outside the folder is refused, so nothing beyond the folder the user gave is read.
 */
import { readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, extname, join, sep } from 'node:path';
import { SqlrecallError } from '../../core/errors.js';
import { DATA_FILE_READERS } from './url.js';

/** One data file and the view that reads it. */
export interface DataFile {
  /** View name: the file name without its extension, as a lower-case identifier (see {@link tableNameOf}). */
  table: string;
  /** Absolute path with symbolic links resolved (inside {@link DataFolder.folder}). */
  path: string;
  /** The file name as found in the folder. */
  fileName: string;
  /** How it is read. */
  format: (typeof DATA_FILE_READERS)[string];
}

/** The files a path gives, and the folder DuckDB may read. */
export interface DataFolder {
  /** The folder, absolute and with symbolic links resolved. */
  folder: string;
  files: DataFile[];
}

/**
 * A file name's stem as an identifier a model can write unquoted: NFKC-normalised and lower case,
 * letters of any script kept with their accents (`Ventes_été` → `ventes_été`), runs of anything
 * but letters, combining marks, ASCII digits and `_` as one `_` (so no space, quote, dot, control
 * or invisible formatting character survives), a leading digit prefixed with `t_`; `t` when
 * nothing is left.
 */
export function tableNameOf(stem: string): string {
  const name = stem
    .normalize('NFKC')
    .toLowerCase()
    .normalize('NFC')
    .replace(/[^\p{L}\p{M}0-9_]+/gu, '_')
    .replace(/^[_\p{M}]+|_+$/gu, '');
  if (name === '') return 't';
  return /^[0-9]/.test(name) ? `t_${name}` : name;
}

function configError(message: string, hint: string): SqlrecallError {
  return new SqlrecallError('config', message, { details: { hint } });
}

/**
 * The data files `path` names: every data file directly in a folder, or the one data file given.
 * Two files whose names give the same table (`sales.csv` and `sales.parquet`) are told apart by
 * their extension (`sales_csv`, `sales_parquet`).
 * @throws SqlrecallError `config` when the path does not exist, holds no data file, holds a link
 *   to a file outside it, or two files still give the same table name
 */
export function scanDataFiles(path: string): DataFolder {
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    throw configError(
      `There is no file or folder at ${path}.`,
      'Give a DuckDB file, a CSV/TSV/Parquet/JSON file, or a folder holding such files.',
    );
  }
  const single = !statSync(real).isDirectory();
  const folder = single ? dirname(real) : real;
  const names = single ? [basename(real)] : readdirSync(folder).sort();
  const inside = folder.endsWith(sep) ? folder : `${folder}${sep}`;
  const found: Omit<DataFile, 'table'>[] = [];
  for (const fileName of names) {
    const format = DATA_FILE_READERS[extname(fileName).toLowerCase()];
    if (!format || fileName.startsWith('.')) continue;
    const entry = join(folder, fileName);
    let target: string;
    try {
      target = realpathSync(entry);
    } catch {
      continue; // a dangling link: nothing to read
    }
    if (!target.startsWith(inside))
      throw configError(
        `${entry} is a link to a file outside ${folder}; only the folder's own files are read.`,
        'Copy the file into the folder, or give the folder it lives in.',
      );
    if (!statSync(target).isFile()) continue;
    found.push({ path: target, fileName, format });
  }
  if (found.length === 0)
    throw configError(
      single
        ? `${path} is not a CSV, TSV, Parquet or JSON file.`
        : `There is no CSV, TSV, Parquet or JSON file in ${folder} (subfolders are not read).`,
      'Give a folder holding .csv, .tsv, .parquet, .json, .jsonl or .ndjson files, or a .duckdb file with duckdb:PATH.',
    );
  const stems = new Map<string, number>();
  for (const file of found) {
    const stem = tableNameOf(basename(file.fileName, extname(file.fileName)));
    stems.set(stem, (stems.get(stem) ?? 0) + 1);
  }
  const files: DataFile[] = [];
  const taken = new Map<string, string>();
  for (const file of found) {
    const extension = extname(file.fileName);
    const stem = tableNameOf(basename(file.fileName, extension));
    const table = (stems.get(stem) ?? 0) > 1 ? `${stem}_${extension.slice(1).toLowerCase()}` : stem;
    const other = taken.get(table);
    if (other !== undefined)
      throw configError(
        `${other} and ${file.fileName} would both be the table ${table}.`,
        'Rename one of the files.',
      );
    taken.set(table, file.fileName);
    files.push({ ...file, table });
  }
  return { folder, files };
}
