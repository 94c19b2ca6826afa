/**
 * Ollama model names: `name[:tag]`, where a missing tag means `latest` (`all-minilm` is the same
 * model as `all-minilm:latest`), and Ollama's default address. In `core` because the memory store
 * (embedding model of a store), the model adapters and the configuration all need them.
 */

/** Ollama's address when nothing is configured (Ollama's own default). */
export const DEFAULT_OLLAMA_HOST = 'http://127.0.0.1:11434';

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
