/**
 * Secret hygiene: connection strings may carry passwords, which must never
 * reach logs, prompts, the UI, API responses or error messages. {@link redactSecrets} is the ONE
 * function that masks them; every other helper here calls it.
 *
 * Forms masked (the forms `pg`/libpq accept, see the libpq "Connection Strings" and "Environment
 * Variables" chapters):
 * - URL user info: `postgres://user:secret@host/db` → `postgres://user:***@host/db` (any scheme; a
 *   raw `@` or `/` inside the password is masked too: everything up to the LAST `@` of the
 *   whitespace-free run is taken as user info, so an odd URL is over-masked rather than leaked; a
 *   password holding spaces, `postgres://u:S3cret Pw@host/db`, is masked up to the last `@` of the
 *   line that is followed by a host, so text after it may be over-masked, never the password leaked);
 * - URL query parameters `password=`, `sslpassword=`, `sslkey=` (and their `PG…` spellings):
 *   the value up to the next `&`, `#` or whitespace;
 * - keyword/value strings `host=h password=secret`, with single- or double-quoted values
 *   (`password='a b\'c'`), `key = value` spacing, and `key: value` / `"key":"value"` (JSON, YAML);
 * - environment assignments `PGPASSWORD=…`, `PGSSLKEY=…`.
 */

/** What replaces a secret. */
export const MASK = '***';

/** Parameter names whose value is a secret (lower case; matched case-insensitively). */
export const SECRET_KEYS = [
  'password',
  'sslpassword',
  'sslkey',
  'pgpassword',
  'pgsslpassword',
  'pgsslkey',
  'passwd',
  'pwd',
] as const;

const KEYS = SECRET_KEYS.join('|');

/** `scheme://` + user + `:` + password + `@` (password up to the last `@` of the token). */
const URL_USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#]*)(:\S*)?@(?=[^\s@]*(?:\s|$))/gi;

/**
 * Second pass, for user info the first pass could not take because the password holds whitespace
 * (a URL cannot, but people paste them): `scheme://user:` not already masked, then everything on
 * the line up to the last `@` followed by a whitespace-free, `@`-free host. A port (`host:5432/db`)
 * is not user info, so a stretch starting with digits then `/` or `?` is left alone.
 */
const URL_USERINFO_SPACED =
  /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/?#]*):(?!\*\*\*@)(?!\d{1,5}[/?])([^\n]*\s[^\n]*)@(?=[^\s@]*(?:\s|$))/gi;

/** `?password=…` / `&sslpassword=…` inside a URL: the value ends at `&`, `#` or whitespace. */
const QUERY_PARAM = new RegExp(`([?&;](?:${KEYS})=)[^&#\\s]*`, 'gi');

/**
 * Keyword/value, JSON or YAML form: an optional quote around the key, `=` or `:`, then a quoted
 * value (backslash escapes allowed) or a bare one up to whitespace, a comma or a closing brace.
 */
const KEY_VALUE = new RegExp(
  `(^|[^a-z0-9_?&;])(["']?)(${KEYS})\\2(\\s*[=:]\\s*)('(?:[^'\\\\]|\\\\.)*'?|"(?:[^"\\\\]|\\\\.)*"?|[^\\s,;}&]+)`,
  'gi',
);

/**
 * Masks every password, SSL key passphrase and SSL key path in free text (error messages, log
 * fields, settings), in every form listed in the module comment. Text without secrets is returned
 * unchanged; the function is idempotent.
 * @param text any string (non-strings are not accepted; use {@link redactValue} for objects).
 */
export function redactSecrets(text: string): string {
  if (typeof text !== 'string' || text.length === 0) return text;
  return text
    .replace(URL_USERINFO, (_m, scheme: string, user: string, pass: string | undefined) =>
      pass ? `${scheme}${user}:${MASK}@` : `${scheme}${user}@`,
    )
    .replace(URL_USERINFO_SPACED, (_m, scheme: string, user: string) => `${scheme}${user}:${MASK}@`)
    .replace(QUERY_PARAM, `$1${MASK}`)
    .replace(KEY_VALUE, (_m, before: string, quote: string, key: string, sep: string, value: string) => {
      const q = value.startsWith("'") ? "'" : value.startsWith('"') ? '"' : '';
      return `${before}${quote}${key}${quote}${sep}${q}${MASK}${q}`;
    });
}

/**
 * Masks the password of a connection URL or keyword/value string
 * (`postgres://u:secret@h/db` → `postgres://u:***@h/db`). Same as {@link redactSecrets}.
 */
export function maskUrl(url: string): string {
  return redactSecrets(url);
}

/**
 * {@link redactSecrets} applied to every string inside a JSON-like value (arrays and plain objects
 * are copied; other values are returned as they are). Depth is bounded at 20 levels (deeper
 * values become `"[nested]"`) so a hostile structure cannot make redaction expensive.
 */
export function redactValue<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return redactSecrets(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (depth >= 20) return '[nested]' as T;
  if (Array.isArray(value)) return value.map((v) => redactValue(v, depth + 1)) as T;
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null)
    return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = (SECRET_KEYS as readonly string[]).includes(k.toLowerCase()) ? MASK : redactValue(v, depth + 1);
  }
  return out as T;
}
