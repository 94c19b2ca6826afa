/**
 * The pipeline step of a chat call (`ChatRequest.purpose`, e.g. `sql`, `answer`, `memory-extract`)
 * travels as an HTTP header, never inside the messages: model servers ignore unknown headers, so a
 * real model sees only the prompt it needs, while the scripted test server and HTTP logs can tell
 * the calls apart.
 */

/** Name of the header carrying `ChatRequest.purpose` (lower-case, as Node reports incoming headers). */
export const PURPOSE_HEADER = 'x-sqlrecall-purpose';

/**
 * The header object for `purpose`: empty when there is none or it is not a plain label
 * (letters, digits, `.`, `_`, `-`; at most 64 characters), so nothing else can ride along.
 */
export function purposeHeaders(purpose: string | undefined): Record<string, string> {
  if (!purpose || !/^[A-Za-z][\w.-]{0,63}$/.test(purpose)) return {};
  return { [PURPOSE_HEADER]: purpose };
}
