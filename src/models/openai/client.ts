/**
 * What the OpenAI-compatible adapters share: the official `openai` client bound to a local server
 * (llama.cpp `llama-server`, LM Studio, vLLM, LocalAI, Jan, Ollama's `/v1`), error mapping into
 * {@link SqlrecallError}, and the model list of `/v1/models` with the context length when the server
 * reports one.
 */
import OpenAI from 'openai';
import { SqlrecallError } from '../../core/errors.js';
import { normalizeModelName } from '../../core/model-names.js';
import { maskUrl, redactSecrets } from '../../core/redact.js';
import { createOllamaFetch } from '../ollama/client.js';
import type { ContextWindow } from '../provider.js';
import { blockedPortReason, serverErrorMessage, serverErrorMessageOfText } from '../server-error.js';

export type { ContextWindow };

/** Base URL when none is configured: llama.cpp `llama-server`'s default address. */
export const DEFAULT_OPENAI_BASE_URL = 'http://127.0.0.1:8080/v1';

/**
 * Sent as the bearer token when no API key is configured: the `openai` client insists on one, and
 * local servers that do not check keys ignore it. Never a secret.
 */
export const PLACEHOLDER_API_KEY = 'sqlrecall-no-key';

/**
 * Per-request timeout of the client, in milliseconds: one hour. A 7B model on a CPU can take
 * minutes on a long prompt before the first byte; cancellation is the caller's `AbortSignal`.
 */
export const OPENAI_TIMEOUT_MS = 60 * 60 * 1000;

/** Options of {@link createOpenAiClient}. */
export interface OpenAiClientOptions {
  /** Server base URL including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Bearer token for servers that want one; default {@link PLACEHOLDER_API_KEY}. Never logged. */
  apiKey?: string;
}

/**
 * A new `openai` client for `baseUrl`: no retries (errors are mapped and reported, the caller
 * decides), {@link OPENAI_TIMEOUT_MS}, our undici fetch without header/body timeouts. It never
 * reads OPENAI_API_KEY or OPENAI_BASE_URL from the environment.
 */
export function createOpenAiClient(options: OpenAiClientOptions): OpenAI {
  return new OpenAI({
    baseURL: normalizeBaseUrl(options.baseUrl),
    apiKey: options.apiKey || PLACEHOLDER_API_KEY,
    maxRetries: 0,
    timeout: OPENAI_TIMEOUT_MS,
    fetch: withServerErrorMessage(retryStaleSocket(createOllamaFetch())),
  });
}

/**
 * `fetch` whose HTTP error responses carry the server's message where the `openai` client reads
 * it (`{"error":{"message"}}`). The client only reads `error` of the body, so a vLLM body
 * (`{"object":"error","message":…}`) or a FastAPI `{"detail":…}` became "400 status code (no
 * body)"; the other fields of an `error` object (llama.cpp's `n_ctx`, `type`) are kept.
 */
function withServerErrorMessage(inner: typeof fetch): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    const response = await inner(input, init);
    if (response.ok) return response;
    const body = await response.text().catch(() => '');
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      parsed = undefined;
    }
    const message = serverErrorMessageOfText(body);
    if (!message) return new Response(body, { status: response.status, headers: response.headers });
    const original =
      parsed && typeof parsed === 'object' && typeof (parsed as { error?: unknown }).error === 'object'
        ? ((parsed as { error: Record<string, unknown> }).error ?? {})
        : {};
    const headers = new Headers(response.headers);
    headers.set('content-type', 'application/json');
    headers.delete('content-length');
    return new Response(JSON.stringify({ error: { ...original, message } }), {
      status: response.status,
      headers,
    });
  }) as typeof fetch;
}

/** Codes of a connection the server closed before answering (a kept-alive socket it had just dropped). */
const STALE_SOCKET_CODES = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);

function hasCode(error: unknown, codes: Set<string>, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 6) return false;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' && codes.has(code)) return true;
  return hasCode((error as Error & { cause?: unknown }).cause, codes, depth + 1);
}

/**
 * True when a request's connection was opened and then closed by the server before a whole
 * response came (undici's `UND_ERR_SOCKET`, "other side closed"), even after the one repeat: the
 * server answers connections but dropped this one mid-way, which is not "cannot reach".
 */
export function closedByServer(error: unknown): boolean {
  return error instanceof OpenAI.APIConnectionError && hasCode(error, CLOSED_BY_SERVER);
}

const CLOSED_BY_SERVER = new Set(['UND_ERR_SOCKET']);

/**
 * `fetch` that repeats a request once when the connection was closed before any response (a reused
 * keep-alive socket the server had just closed; seen with servers whose keep-alive timeout is
 * short). Only requests with a re-sendable body (string or none) are repeated; the client's own
 * retries stay off (`maxRetries: 0`), so HTTP errors are never repeated.
 */
function retryStaleSocket(inner: typeof fetch): typeof fetch {
  return (async (input: string | URL | Request, init?: RequestInit) => {
    try {
      return await inner(input, init);
    } catch (error) {
      const resendable = init?.body === undefined || init.body === null || typeof init.body === 'string';
      if (init?.signal?.aborted || !resendable || !hasCode(error, STALE_SOCKET_CODES)) throw error;
      return inner(input, init);
    }
  }) as typeof fetch;
}

/** `baseUrl` without trailing slashes (`http://host:8080/v1/` → `http://host:8080/v1`). */
export function normalizeBaseUrl(baseUrl: string): string {
  return baseUrl.trim().replace(/\/+$/, '');
}

/** The base URL for messages: credentials masked. */
export function displayBaseUrl(baseUrl: string): string {
  return maskUrl(normalizeBaseUrl(baseUrl));
}

const NETWORK_CODES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connection timed out',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  UND_ERR_CONNECT_TIMEOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the server',
};

/** The reason of the first known network error code in the `cause` chain (and `AggregateError`s). */
function networkReason(error: unknown, depth = 0): string | undefined {
  if (!(error instanceof Error) || depth > 6) return undefined;
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string' && NETWORK_CODES[code]) return NETWORK_CODES[code];
  for (const inner of Array.isArray((error as Error & { errors?: unknown }).errors)
    ? ((error as AggregateError).errors as unknown[])
    : []) {
    const reason = networkReason(inner, depth + 1);
    if (reason) return reason;
  }
  return networkReason((error as Error & { cause?: unknown }).cause, depth + 1);
}

/**
 * llama-server's own running window from `GET /props` (`default_generation_settings.n_ctx`, or
 * `n_ctx` at the top in newer builds), for servers whose `/v1/models` entry does not carry it.
 * Undefined when the server has no such endpoint or does not answer it.
 */
export async function llamaServerContext(
  baseUrl: string,
  apiKey?: string,
  signal?: AbortSignal,
): Promise<ContextWindow | undefined> {
  try {
    const url = new URL(normalizeBaseUrl(baseUrl));
    url.pathname = `${url.pathname.replace(/\/v1$/, '')}/props`;
    const response = await retryStaleSocket(createOllamaFetch())(url.toString(), {
      headers: { authorization: `Bearer ${apiKey || PLACEHOLDER_API_KEY}` },
      signal: signal ?? AbortSignal.timeout(5_000),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as Record<string, unknown>;
    const settings = (body.default_generation_settings ?? {}) as Record<string, unknown>;
    const tokens = positive(settings.n_ctx) ?? positive(body.n_ctx);
    return tokens ? { tokens, source: '/props n_ctx' } : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The window Ollama runs `model` with, when the server behind `baseUrl` is Ollama (its `/v1`) and
 * has the model loaded: `context_length` of the model's `GET /api/ps` entry, the `num_ctx` it was
 * loaded with, which Ollama's `/v1` cannot change per request. Undefined for other servers, a
 * model not loaded, or an Ollama too old to report it.
 */
export async function ollamaRunningContext(
  baseUrl: string,
  model: string,
  apiKey?: string,
  signal?: AbortSignal,
): Promise<ContextWindow | undefined> {
  try {
    const url = new URL(normalizeBaseUrl(baseUrl));
    url.pathname = `${url.pathname.replace(/\/v1$/, '')}/api/ps`;
    const response = await retryStaleSocket(createOllamaFetch())(url.toString(), {
      headers: { authorization: `Bearer ${apiKey || PLACEHOLDER_API_KEY}` },
      signal: signal ?? AbortSignal.timeout(5_000),
    });
    if (!response.ok) return undefined;
    const body = (await response.json()) as { models?: unknown };
    if (!Array.isArray(body.models)) return undefined;
    const wanted = normalizeModelName(model);
    for (const entry of body.models as Array<Record<string, unknown>>) {
      const names = [entry.name, entry.model].filter((n): n is string => typeof n === 'string');
      if (!names.some((name) => normalizeModelName(name) === wanted)) continue;
      const tokens = positive(entry.context_length);
      if (tokens) return { tokens, source: 'context_length of the loaded model (Ollama /api/ps)' };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** The message of the deepest `cause` (e.g. undici's "bad port"), for errors without a known code. */
function innermostMessage(error: unknown): string {
  let current: unknown = error;
  let message = 'connection error';
  for (let depth = 0; depth < 6 && current instanceof Error; depth += 1) {
    message = current.message;
    current = (current as Error & { cause?: unknown }).cause;
  }
  return serverText(message);
}

/** A server message shortened to one line of at most 300 characters, secrets masked. */
export function serverText(message: string): string {
  const line = redactSecrets(message.replace(/\s+/g, ' ').trim());
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/**
 * The server's error message from an `APIError` (whose `error` is the body's `error` field, already
 * normalised by the client's fetch, see `withServerErrorMessage`), else the error's own message.
 */
export function apiErrorMessage(error: unknown): string {
  if (error instanceof OpenAI.APIError) {
    const message = serverErrorMessage({ error: error.error });
    if (message) return message;
  }
  return error instanceof Error ? error.message : String(error);
}

/** What was being done when an error happened, for the message. */
export interface OpenAiErrorContext {
  baseUrl: string;
  /** The model involved, if any: a 404 then means "model missing". */
  model?: string;
}

/** True for the errors a cancelled request produces (the client's own or an AbortError). */
export function isOpenAiAbort(error: unknown): boolean {
  if (error instanceof OpenAI.APIUserAbortError) return true;
  const name = (error as { name?: unknown } | null)?.name;
  return name === 'AbortError';
}

/**
 * Turns whatever the `openai` client threw into a {@link SqlrecallError}; aborts are returned
 * unchanged (cancellation is not a failure).
 * - no connection (refused, DNS, reset, timeout) → `model_unreachable` (retryable), fix: start the server
 * - HTTP 401/403 → `model_unreachable`, fix: set SQLRECALL_API_KEY
 * - HTTP 404 with a model → `model_missing`, fix: load/serve that model or name one from `/v1/models`
 * - any other HTTP status → `model_output` (with `status`; retryable for 429 and 5xx)
 */
export function mapOpenAiError(error: unknown, context: OpenAiErrorContext): unknown {
  if (error instanceof SqlrecallError || isOpenAiAbort(error)) return error;
  const url = displayBaseUrl(context.baseUrl);
  if (error instanceof OpenAI.APIConnectionError) {
    const found = networkReason(error);
    const reason =
      error instanceof OpenAI.APIConnectionTimeoutError
        ? 'timed out'
        : (blockedPortReason(error, url) ??
          (found === 'connection refused' ? 'connection refused; nothing answers there' : found) ??
          innermostMessage(error));
    return new SqlrecallError(
      'model_unreachable',
      `Cannot reach the OpenAI-compatible server at ${url}: ${reason}. Start the server (e.g. \`llama-server\`, LM Studio, vLLM) or set SQLRECALL_BASE_URL to its address.`,
      {
        cause: error,
        details: {
          url,
          retryable: true,
          hint: 'start your model server, or set SQLRECALL_BASE_URL (e.g. http://127.0.0.1:8080/v1)',
        },
      },
    );
  }
  const message = serverText(apiErrorMessage(error));
  const status = error instanceof OpenAI.APIError ? error.status : undefined;
  if (typeof status === 'number') {
    if (status === 401 || status === 403) {
      return new SqlrecallError(
        'model_unreachable',
        `The server at ${url} refused the request (HTTP ${status}): ${message}`,
        {
          cause: error,
          details: {
            url,
            status,
            retryable: false,
            hint: 'set SQLRECALL_API_KEY to the key the server expects',
          },
        },
      );
    }
    if (status === 404 && context.model) {
      return new SqlrecallError(
        'model_missing',
        `Model "${context.model}" is not served by the OpenAI-compatible server at ${url}: ${message}`,
        {
          cause: error,
          details: {
            url,
            status,
            retryable: false,
            hint: `load "${context.model}" in the server, or name a model that \`sqlrecall doctor\` lists from ${url}/models`,
          },
        },
      );
    }
    return new SqlrecallError('model_output', `The server at ${url} answered HTTP ${status}: ${message}`, {
      cause: error,
      details: { url, status, retryable: status >= 500 || status === 429 },
    });
  }
  return new SqlrecallError('model_output', `The server at ${url} failed: ${message}`, {
    cause: error,
    details: { url, retryable: false },
  });
}

/** One model as `/v1/models` lists it. */
export interface OpenAiModelInfo {
  id: string;
  /** Context length when the entry reports one (see {@link contextLengthOf}). */
  contextLength?: number;
  /** Where {@link contextLength} was read (`meta.n_ctx`, `max_model_len`, …). */
  contextSource?: string;
}

function positive(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.floor(value) : undefined;
}

/**
 * Fields of a `/v1/models` entry holding the window the server runs with (what a prompt must fit),
 * before those holding the model's trained or maximum size: llama-server reports `meta.n_ctx`
 * (its `-c`) next to `meta.n_ctx_train`, LM Studio `loaded_context_length` next to
 * `max_context_length`, vLLM `max_model_len` (its effective limit).
 */
const CONTEXT_FIELDS: ReadonlyArray<
  [string, (entry: Record<string, unknown>, meta: Record<string, unknown>) => unknown]
> = [
  ['meta.n_ctx', (_e, meta) => meta.n_ctx],
  ['max_model_len', (e) => e.max_model_len],
  ['loaded_context_length', (e) => e.loaded_context_length],
  ['context_length', (e) => e.context_length],
  ['context_window', (e) => e.context_window],
  ['max_context_length', (e) => e.max_context_length],
  ['meta.n_ctx_train', (_e, meta) => meta.n_ctx_train],
];

/** The context window a `/v1/models` entry reports, runtime size first (see {@link CONTEXT_FIELDS}). */
export function contextWindowOf(entry: Record<string, unknown>): ContextWindow | undefined {
  const meta = entry.meta && typeof entry.meta === 'object' ? (entry.meta as Record<string, unknown>) : {};
  for (const [source, read] of CONTEXT_FIELDS) {
    const tokens = positive(read(entry, meta));
    if (tokens) return { tokens, source };
  }
  return undefined;
}

/**
 * The context length a `/v1/models` entry reports: the window the server runs with when it says
 * (`meta.n_ctx`, `max_model_len`, `loaded_context_length`), else the model's size
 * (`context_length`, `context_window`, `max_context_length`, `meta.n_ctx_train`). Undefined when
 * none is present (OpenAI, Ollama's `/v1`).
 */
export function contextLengthOf(entry: Record<string, unknown>): number | undefined {
  return contextWindowOf(entry)?.tokens;
}

/**
 * The models the server lists at `/v1/models`.
 * @throws SqlrecallError as {@link mapOpenAiError}
 */
export async function listOpenAiModels(
  client: OpenAI,
  baseUrl: string,
  signal?: AbortSignal,
): Promise<OpenAiModelInfo[]> {
  try {
    const models: OpenAiModelInfo[] = [];
    for await (const entry of client.models.list({ signal })) {
      // Servers add fields the SDK's Model type does not declare (context_length, meta, …).
      const raw: Record<string, unknown> = Object.fromEntries(Object.entries(entry));
      const window = contextWindowOf(raw);
      models.push({
        id: String(raw.id),
        ...(window ? { contextLength: window.tokens, contextSource: window.source } : {}),
      });
    }
    return models;
  } catch (error) {
    throw mapOpenAiError(error, { baseUrl });
  }
}
