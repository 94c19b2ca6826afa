/**
 * `sqlite:PATH` URLs → the database file. The file must already exist: SQLite would otherwise create
 * an empty database at a mistyped path and every question would find no tables.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { SqlrecallError } from '../../core/errors.js';

/** True for a URL whose scheme is `sqlite:`. */
export function isSqliteUrl(url: string): boolean {
  return /^sqlite:/i.test(url.trim());
}

/**
 * The absolute path a `sqlite:` URL names, without touching the disk: `sqlite:shop.db` (relative to
 * the current folder), `sqlite:/data/shop.db`, `sqlite:~/shop.db`, and the same after `sqlite://`.
 * @throws SqlrecallError `config` when the URL is not `sqlite:` or names no path
 */
export function sqlitePathOf(url: string): string {
  const trimmed = url.trim();
  if (!isSqliteUrl(trimmed)) throw new SqlrecallError('config', `Not a SQLite URL: "${trimmed}".`);
  // `sqlite:///abs` and `sqlite://rel` are read as `sqlite:/abs` and `sqlite:rel`, as for `pglite:`.
  const rest = trimmed
    .slice('sqlite:'.length)
    .replace(/^\/\/(?=\/)/, '')
    .replace(/^\/\/(?!\/)/, '');
  if (rest === '' || rest === ':memory:' || rest === 'memory:')
    throw new SqlrecallError('config', 'A SQLite URL must name a database file: sqlite:PATH.', {
      details: { hint: 'Example: sqlite:./shop.db or sqlite:/data/shop.db' },
    });
  if (rest === '~') return homedir();
  return resolve(rest.startsWith('~/') ? join(homedir(), rest.slice(2)) : rest);
}

/**
 * The path of an existing SQLite file named by `url`.
 * @throws SqlrecallError `config` when the file does not exist or is a folder
 */
export function existingSqliteFile(url: string): string {
  const path = sqlitePathOf(url);
  if (!existsSync(path))
    throw new SqlrecallError('config', `There is no SQLite database at ${path}.`, {
      details: {
        hint: 'Give the path of an existing database file (sqlrecall never creates one): sqlite:./shop.db',
      },
    });
  if (statSync(path).isDirectory())
    throw new SqlrecallError('config', `${path} is a folder, not a SQLite database file.`, {
      details: { hint: 'Give the path of the database file itself: sqlite:./shop.db' },
    });
  return path;
}
