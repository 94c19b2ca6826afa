/**
 * Secret hygiene: connection URLs may carry passwords, which must never reach logs, prompts, the UI
 * or error messages.
 */

const URL_WITH_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)([^\s:@/]+)(:[^\s@/]*)?@/gi;

/**
 * Masks the password of a URL (`postgres://u:secret@h/db` → `postgres://u:***@h/db`).
 * Strings that are not URLs are returned unchanged.
 */
export function maskUrl(url: string): string {
  return redactSecrets(url);
}

/** Masks every `scheme://user:password@` occurrence inside free text (error messages, logs). */
export function redactSecrets(text: string): string {
  return text.replace(URL_WITH_CREDENTIALS, (_m, scheme: string, user: string, pass: string | undefined) =>
    pass ? `${scheme}${user}:***@` : `${scheme}${user}@`,
  );
}
