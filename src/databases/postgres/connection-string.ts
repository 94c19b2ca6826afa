/**
 * Connection strings as the `pg` driver should read them. Its own small module so that every `pg`
 * user (the database connector, the memory store, the eval loader) applies the same rewrite
 * without loading the connector.
 */

/**
 * The URL as pg should read it, with the same TLS behaviour: pg's connection-string parser treats
 * `sslmode=prefer`, `require` and `verify-ca` as `verify-full` (the certificate and host name are
 * checked) and prints a multi-line deprecation warning on every connection saying so. Writing
 * `verify-full` explicitly keeps that behaviour and leaves one line (the connection error, if any)
 * to the user. A URL that chose `uselibpqcompat` keeps its own semantics.
 */
export function pgConnectionString(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url; // pg reports the malformed URL itself
  }
  const mode = parsed.searchParams.get('sslmode');
  if (mode === null || parsed.searchParams.has('uselibpqcompat')) return url;
  if (mode !== 'prefer' && mode !== 'require' && mode !== 'verify-ca') return url;
  parsed.searchParams.set('sslmode', 'verify-full');
  return parsed.toString();
}
