/**
 * Ollama model names: `name[:tag]`, where a missing tag means `latest` (`all-minilm` is the same
 * model as `all-minilm:latest`).
 */

/** Adds the implicit `:latest` tag when a name has none; trims whitespace. */
export function normalizeModelName(name: string): string {
  const trimmed = name.trim();
  const lastSegment = trimmed.slice(trimmed.lastIndexOf('/') + 1);
  return lastSegment.includes(':') ? trimmed : `${trimmed}:latest`;
}

/** True when two names denote the same model (`all-minilm` == `all-minilm:latest`). */
export function sameModelName(a: string, b: string): boolean {
  return normalizeModelName(a) === normalizeModelName(b);
}
