/**
 * `mysql://` and `mariadb://` URLs → mysql2 connection options. Parsed here rather than handed to
 * mysql2 as a string so that the scheme `mariadb://` works too and the password never appears in a
 * message (`displayName` is masked).
 */
import { SqlrecallError } from '../../core/errors.js';
import { maskUrl } from '../../core/redact.js';

/** The connection target of a MySQL or MariaDB URL. */
export interface MysqlTarget {
  host: string;
  /** TCP port; default 3306. */
  port: number;
  user: string;
  password?: string;
  /** The database (MySQL's schema) the URL names; undefined when it names none. */
  database?: string;
  /** Unix socket path from `?socket=…`; used instead of host and port when set. */
  socketPath?: string;
  /** `?ssl=true` (or `ssl-mode=REQUIRED`): TLS with the server's certificate checked. */
  ssl: boolean;
  /** The URL with its password masked, safe to print. */
  displayName: string;
}

/** True for a URL whose scheme is `mysql://` or `mariadb://`. */
export function isMysqlUrl(url: string): boolean {
  return /^(mysql|mariadb):\/\//i.test(url.trim());
}

/**
 * Parses `mysql://user:password@host:port/database?socket=/path&ssl=true` (also `mariadb://`).
 * User and password are percent-decoded; the user defaults to `root`, as the mysql client's does.
 * @throws SqlrecallError `config` when the URL is not a MySQL/MariaDB URL or cannot be parsed
 */
export function parseMysqlUrl(url: string): MysqlTarget {
  const trimmed = url.trim();
  const displayName = maskUrl(trimmed);
  if (!isMysqlUrl(trimmed))
    throw new SqlrecallError('config', `Not a MySQL or MariaDB URL: "${displayName}".`);
  let parsed: URL;
  try {
    // WHATWG URL parses the authority of any `scheme://`; the scheme is swapped for one it treats
    // as special so that `host:port` and percent-decoding behave the same everywhere.
    parsed = new URL(trimmed.replace(/^(mysql|mariadb):/i, 'http:'));
  } catch {
    throw new SqlrecallError('config', `The database URL "${displayName}" is not a valid URL.`, {
      details: { hint: 'Example: mysql://reader:secret@localhost:3306/shop' },
    });
  }
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ''));
  const sslParam = (
    parsed.searchParams.get('ssl') ??
    parsed.searchParams.get('ssl-mode') ??
    ''
  ).toLowerCase();
  const socketPath = parsed.searchParams.get('socket') ?? undefined;
  return {
    host: parsed.hostname.replace(/^\[|\]$/g, '') || 'localhost',
    port: parsed.port === '' ? 3306 : Number(parsed.port),
    user: parsed.username === '' ? 'root' : decodeURIComponent(parsed.username),
    ...(parsed.password !== '' ? { password: decodeURIComponent(parsed.password) } : {}),
    ...(database !== '' ? { database } : {}),
    ...(socketPath ? { socketPath } : {}),
    ssl: ['true', '1', 'required', 'verify_ca', 'verify_identity'].includes(sslParam),
    displayName,
  };
}
