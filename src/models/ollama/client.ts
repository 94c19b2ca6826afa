/**
 * What the three Ollama adapters share: the HTTP client (the official `ollama` package on an undici
 * Agent without header/body timeouts), error mapping into {@link SqlrecallError}, and reading model
 * metadata from `/api/show`.
 */
import { Ollama, type ShowResponse } from 'ollama';
import { Agent, fetch as undiciFetch } from 'undici';
import { SqlrecallError } from '../../core/errors.js';
import { DEFAULT_OLLAMA_HOST } from '../../core/model-names.js';
import { maskUrl, redactSecrets } from '../../core/redact.js';
import { blockedPortReason } from '../server-error.js';

export { DEFAULT_OLLAMA_HOST };

let sharedAgent: Agent | undefined;

/**
 * One undici Agent for every Ollama call of the process. `headersTimeout: 0` and `bodyTimeout: 0`
 * disable undici's 300 s defaults: a 7B model on a CPU can spend minutes on a long prompt before the
 * first byte (LIBRARIES.md, "Ollama client"). Cancellation is the caller's `AbortSignal`.
 */
function agent(): Agent {
  sharedAgent ??= new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 4_000 });
  return sharedAgent;
}

/**
 * A `fetch` for the `ollama` client, built on {@link agent}. With `signal`, every request made
 * through it is also cancelled when that signal aborts (the client has no per-call signal of its
 * own for non-streaming calls, and none before response headers for streaming ones).
 */
export function createOllamaFetch(
  signal?: AbortSignal,
  extraHeaders: Record<string, string> = {},
): typeof fetch {
  const ollamaFetch = (input: string | URL | Request, init?: RequestInit) => {
    const signals = [init?.signal, signal].filter((s): s is AbortSignal => s != null);
    const merged = signals.length > 1 ? AbortSignal.any(signals) : signals[0];
    const { url, authorization } = splitCredentials(input);
    const headers = new Headers(init?.headers);
    if (authorization && !headers.has('authorization')) headers.set('authorization', authorization);
    for (const [name, value] of Object.entries(extraHeaders)) headers.set(name, value);
    return undiciFetch(url as Parameters<typeof undiciFetch>[0], {
      ...(init as Parameters<typeof undiciFetch>[1]),
      headers: Object.fromEntries(headers),
      signal: merged,
      dispatcher: agent(),
    });
  };
  // undici's fetch and Response are the same code as Node's global fetch but separately declared
  // types (undici's Response lacks nothing at runtime, differs in its declared header/body types):
  // the `ollama` client wants the global `typeof fetch`, so this one cast stays.
  return ollamaFetch as unknown as typeof fetch;
}

/**
 * `fetch` refuses URLs with credentials; an Ollama behind a proxy with basic auth
 * (`http://user:pass@host:11434`, which OLLAMA_HOST allows) gets them as an Authorization header.
 */
function splitCredentials(input: string | URL | Request): {
  url: string | URL | Request;
  authorization?: string;
} {
  if (input instanceof Request) return { url: input };
  const parsed = new URL(input);
  if (!parsed.username && !parsed.password) return { url: input };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/** Options of {@link createOllamaClient}. */
export interface OllamaClientOptions {
  /** Server address, e.g. `http://127.0.0.1:11434` (scheme and port optional, as with OLLAMA_HOST). */
  host: string;
  /** Cancels every request made through this client. */
  signal?: AbortSignal;
  /** Extra headers on every request (e.g. the purpose header of `../purpose.ts`); servers ignore them. */
  headers?: Record<string, string>;
}

/** A new `ollama` client bound to `host` (never the package's default export, which reads OLLAMA_HOST). */
export function createOllamaClient(options: OllamaClientOptions): Ollama {
  return new Ollama({ host: options.host, fetch: createOllamaFetch(options.signal, options.headers) });
}

/** The host as the client formats it (`localhost` → `http://localhost:11434`), password masked. */
export function displayHost(host: string): string {
  let url = host.trim() || DEFAULT_OLLAMA_HOST;
  if (url.startsWith(':')) url = `http://127.0.0.1${url}`;
  if (!url.includes('://')) url = `http://${url}`;
  try {
    const parsed = new URL(url);
    if (!parsed.port && !host.includes('://')) parsed.port = '11434';
    return maskUrl(parsed.toString().replace(/\/$/, ''));
  } catch {
    return maskUrl(url);
  }
}

/** What was being done when an error happened, for the message. */
export interface OllamaErrorContext {
  host: string;
  /** The model involved, if any: a 404 then means "model missing". */
  model?: string;
}

const NETWORK_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
  UND_ERR_CLOSED: 'connection closed',
};

/** The `code` of the error or of any error in its `cause` chain. */
function networkReason(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    const code = (current as Error & { code?: unknown }).code;
    if (typeof code === 'string' && NETWORK_CODES[code]) return NETWORK_CODES[code];
    current = (current as Error & { cause?: unknown }).cause;
  }
  if (error instanceof TypeError && /fetch failed/i.test(error.message)) {
    const cause = error.cause instanceof Error ? error.cause.message : '';
    return cause ? `fetch failed (${serverText(cause)})` : 'fetch failed';
  }
  return undefined;
}

/** True for the errors an aborted `AbortSignal` produces (DOMException or Error named AbortError). */
export function isAbortError(error: unknown): boolean {
  return (
    typeof error === 'object' &&
    error !== null &&
    ((error as { name?: unknown }).name === 'AbortError' ||
      (error as { name?: unknown }).name === 'TimeoutError')
  );
}

/** A server message shortened to one line, secrets masked. */
function serverText(message: string): string {
  const line = redactSecrets(message.replace(/\s+/g, ' ').trim());
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * Turns whatever the `ollama` client threw into a {@link SqlrecallError}; abort errors are returned
 * unchanged (cancellation is not a failure).
 * - connection refused, DNS, reset, `fetch failed` → `model_unreachable` (retryable, hint `ollama serve`)
 * - HTTP 404 "model … not found" → `model_missing` (hint `ollama pull <model>`)
 * - any other HTTP status or an error object inside the stream → `model_output` (with `status`)
 */
export function mapOllamaError(error: unknown, context: OllamaErrorContext): unknown {
  if (error instanceof SqlrecallError || isAbortError(error)) return error;
  const url = displayHost(context.host);
  const blocked = blockedPortReason(error, url);
  const found = networkReason(error);
  const reason =
    blocked ?? (found === 'connection refused' ? 'connection refused; nothing answers there' : found);
  if (reason) {
    const advice = blocked
      ? 'Ollama listens on 11434 unless told otherwise.'
      : found === 'host not found'
        ? 'Check OLLAMA_HOST.'
        : found === 'connection refused'
          ? 'Start it with `ollama serve`, or check the host and port in OLLAMA_HOST.'
          : 'Start it with `ollama serve`.';
    return new SqlrecallError('model_unreachable', `Cannot reach Ollama at ${url}: ${reason}. ${advice}`, {
      cause: error,
      details: {
        url,
        retryable: true,
        hint: 'ollama serve (or set OLLAMA_HOST to the address of your Ollama server)',
      },
    });
  }
  const status = (error as { status_code?: unknown }).status_code;
  const message = error instanceof Error ? error.message : String(error);
  if (typeof status === 'number') {
    if (status === 404 && context.model && /not found/i.test(message)) {
      return new SqlrecallError(
        'model_missing',
        `Model "${context.model}" is not installed on the Ollama server at ${url}.`,
        { cause: error, details: { url, status, retryable: false, hint: `ollama pull ${context.model}` } },
      );
    }
    return new SqlrecallError(
      'model_output',
      `Ollama at ${url} answered HTTP ${status}: ${serverText(message)}`,
      {
        cause: error,
        details: { url, status, retryable: status >= 500 || status === 429 },
      },
    );
  }
  return new SqlrecallError('model_output', `Ollama at ${url} failed: ${serverText(message)}`, {
    cause: error,
    details: { url, retryable: false },
  });
}

/**
 * A number from `model_info` whose key ends with `.<suffix>` (e.g. `qwen2.context_length`,
 * `bert.embedding_length`); the architecture prefix differs per model family.
 */
export function modelInfoNumber(show: Pick<ShowResponse, 'model_info'>, suffix: string): number | undefined {
  const info = show.model_info as unknown;
  const entries: Iterable<[string, unknown]> =
    info instanceof Map
      ? (info as Map<string, unknown>).entries()
      : info && typeof info === 'object'
        ? Object.entries(info as Record<string, unknown>)
        : [];
  for (const [key, value] of entries) {
    if (key.endsWith(`.${suffix}`) && typeof value === 'number' && Number.isFinite(value) && value > 0) {
      return value;
    }
  }
  return undefined;
}

/** Registers `listener` on `signal` and returns a function that removes it again. */
export function onAbort(signal: AbortSignal | undefined, listener: () => void): () => void {
  if (!signal) return () => {};
  signal.addEventListener('abort', listener, { once: true });
  return () => signal.removeEventListener('abort', listener);
}
