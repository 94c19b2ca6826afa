/**
 * Types of the scripted Ollama server (tests' stand-in for a model): how replies are programmed and
 * how requests are recorded.
 */
import type { ScriptedModel, ScriptedModelSpec } from './catalog.js';

/** Which Ollama endpoint a request hit. */
export type ScriptedEndpoint =
  | 'chat'
  | 'generate'
  | 'embed'
  | 'tags'
  | 'show'
  | 'version'
  | 'pull'
  | 'v1-models'
  | 'v1-chat'
  | 'v1-embeddings'
  | 'other';

/** One chat message as received. */
export interface ScriptedMessage {
  role: string;
  content: string;
}

/** A `/api/chat` or `/api/generate` request as the reply handler sees it. */
export interface ScriptedChatRequest {
  endpoint: 'chat' | 'generate' | 'v1-chat';
  /** Model name as sent by the client. */
  model: string;
  /** Chat messages; for `/api/generate`, `system` (if any) and `prompt` as a system and a user message. */
  messages: ScriptedMessage[];
  /** Content of the last `user` message ('' when there is none): what rules usually match on. */
  lastUserMessage: string;
  /** `/api/generate` only: the prompt. */
  prompt?: string;
  /** `/api/generate` only: the system prompt. */
  system?: string;
  /** Ollama `format`: a JSON schema object or `'json'` (for `/v1`, derived from `response_format`). */
  format?: unknown;
  /** `/v1/chat/completions` only: the `response_format` as sent. */
  responseFormat?: unknown;
  /** Ollama `options` (temperature, seed, num_predict, num_ctx, …). */
  options?: Record<string, unknown>;
  /** Whether the client asked for a stream (Ollama's default when `stream` is absent). */
  stream: boolean;
  /** Ollama `keep_alive`, if sent. */
  keepAlive?: string | number;
  /**
   * The pipeline step: the `X-Sqlrecall-Purpose` request header when present (sqlrecall's model
   * clients send `ChatRequest.purpose` there; model servers ignore it), else recognised from the
   * prompt content by `ScriptedOptions.purposeOf` (default: a line `purpose: <label>`, any case,
   * optionally inside `<!-- -->` or `[ ]`, in a system message).
   */
  purpose?: string;
}

/** A programmed reply in full. */
export interface ScriptedReplyObject {
  /** The reply text, streamed in several chunks (about one per word). Default ''. */
  text?: string;
  /** `done_reason` of the final chunk; `length` simulates an answer cut by `num_predict`. Default `stop`. */
  doneReason?: 'stop' | 'length';
  /** Wait before the response headers, in milliseconds (a slow prompt evaluation). */
  delayMs?: number;
  /** Wait between streamed chunks, in milliseconds. */
  chunkDelayMs?: number;
  /** HTTP status. With `error` and a status ≥ 400 (default 500) the server answers `{ error }` with it. */
  status?: number;
  /**
   * An error message. With a status ≥ 400 (the default), an HTTP error; with `status: 200`, the text
   * is streamed and then an `{ error }` object ends the stream (as Ollama does when a runner dies).
   */
  error?: string;
  /**
   * The exact bytes of the response instead of a generated one, for transcripts of what a real
   * server sends (SSE `error:` fields, `event: error`, reasoning deltas, a stream cut mid-way).
   * Overrides every other field but `delayMs`.
   */
  raw?: ScriptedRawReply;
}

/** A response written verbatim: status, headers, then each part in order. */
export interface ScriptedRawReply {
  /** HTTP status; default 200. */
  status?: number;
  /** Response headers; default `Content-Type: text/event-stream` for `/v1`, NDJSON for Ollama routes. */
  headers?: Record<string, string>;
  /** Text written as-is, or a pause of `delayMs` milliseconds between writes. */
  parts: Array<string | { delayMs: number }>;
  /**
   * After the last part: `end` finishes the response (default), `open` keeps the connection open
   * until the client goes away (a server that does not close after `[DONE]`, or a hung model),
   * `destroy` drops the socket without finishing the chunked body (a crashed server).
   */
  after?: 'end' | 'open' | 'destroy';
}

/** An extra route's answer (see {@link ScriptedOptions.routes}). */
export interface ScriptedRouteReply {
  /** HTTP status; default 200. */
  status?: number;
  /** JSON body. */
  body: unknown;
}

/** A programmed reply: plain text, or a {@link ScriptedReplyObject}. */
export type ScriptedReply = string | ScriptedReplyObject;

/** Computes the reply to a chat or generate request. */
export type ScriptedChatHandler = (request: ScriptedChatRequest) => ScriptedReply | Promise<ScriptedReply>;

/** Options of `startScriptedOllama`. */
export interface ScriptedOptions {
  /** Installed models; default `['qwen2.5-coder:7b', 'all-minilm']`. */
  models?: Array<string | ScriptedModelSpec>;
  /** Replies for requests the queue (`enqueue`) does not answer. Default: HTTP 500 "scripted server: no reply programmed". */
  chat?: ScriptedChatHandler;
  /** Embedding function; default the lexical `hashEmbedding` with `embeddingDimensions`. */
  embed?: (text: string) => number[];
  /** Length of default embeddings of embedding models; default 384. */
  embeddingDimensions?: number;
  /** Recognises the pipeline step from the prompt when the request has no purpose header; default: a `purpose: <label>` line in a system message. */
  purposeOf?: (messages: ScriptedMessage[]) => string | undefined;
  /** Names `/api/pull` can find; default: any name. Others fail like Ollama ("file does not exist"). */
  registry?: string[];
  /** What `/api/version` answers; default `0.12.6`. */
  version?: string;
  /** Port to listen on (127.0.0.1); default 0, an ephemeral port. */
  port?: number;
  /**
   * `/v1/chat/completions` answers HTTP 400 "response_format is not supported" to requests that
   * carry a `response_format` (as some OpenAI-compatible servers do), to test the fallback. Default false.
   */
  rejectResponseFormat?: boolean;
  /** `/v1/models` entries of chat models carry `context_length`; default true. */
  reportContextLength?: boolean;
  /**
   * Reshapes each `/v1/models` entry (e.g. llama-server's `meta.n_ctx` / `n_ctx_train`, vLLM's
   * `max_model_len`); receives the resolved model and the default entry.
   */
  v1ModelEntry?: (model: ScriptedModel, entry: Record<string, unknown>) => Record<string, unknown>;
  /**
   * `/v1/embeddings` vector encoding: `requested` (default) honours `encoding_format` as OpenAI does;
   * `float` always answers float arrays, as LM Studio, Ollama's `/v1` and LocalAI do.
   */
  embeddingEncoding?: 'requested' | 'float';
  /**
   * Extra routes, keyed `METHOD /path` (e.g. `GET /props` of llama-server, `GET /api/ps` of Ollama):
   * each answers JSON. Recorded with endpoint `other`.
   */
  routes?: Record<string, (body: unknown) => ScriptedRouteReply>;
  /**
   * Called once per request when its response ends (finished or aborted): the recorded request,
   * `performance.now()` when the request arrived (before its body was read) and when the response
   * closed, in milliseconds of this process's clock. For benchmarks that meter model time.
   */
  /**
   * Idle keep-alive timeout of the server's connections, in ms; default 1000. Node announces it
   * as `Keep-Alive: timeout=N` and undici closes a connection that close to its end at once, so
   * with the default every request opens a new connection. 0: no idle timeout and no header, as
   * Ollama's (Go) server — clients reuse connections, as in production.
   */
  keepAliveTimeoutMs?: number;
  onResponseEnd?: (request: RecordedRequest, arrivedAt: number, endedAt: number) => void;
}

/** One request as received, kept in `ScriptedOllama.requests`. */
export interface RecordedRequest {
  endpoint: ScriptedEndpoint;
  method: string;
  /** URL path, e.g. `/api/chat`. */
  path: string;
  /** Parsed JSON body (undefined for GET; the raw text when it was not JSON). */
  body: unknown;
  /** Request headers, lower-case names. */
  headers: Record<string, string>;
  /** `Date.now()` when the request arrived. */
  time: number;
  /** True when the client went away before the response was complete (e.g. an aborted stream). */
  aborted: boolean;
  /** For `chat` and `generate`: the request as handed to the reply handler. */
  chat?: ScriptedChatRequest;
}

/** A failure to inject into the next request(s) of an endpoint, see `ScriptedOllama.failNext`. */
export interface ScriptedFailure {
  /** HTTP status; default 500. */
  status?: number;
  /** Error message, sent as `{ "error": … }`. */
  error: string;
  /** How many requests fail; default 1. */
  count?: number;
}

/** A running scripted Ollama server. */
export interface ScriptedOllama {
  /** Base URL, e.g. `http://127.0.0.1:39421` — pass it as the Ollama host. */
  readonly url: string;
  /** Every request received, in arrival order. */
  readonly requests: RecordedRequest[];
  /** The chat and generate requests (with their recognised purpose), in arrival order. */
  chatRequests(): ScriptedChatRequest[];
  /** Queues replies, consumed in order by the next chat/generate requests before `options.chat`. */
  enqueue(...replies: ScriptedReply[]): void;
  /** Replies still queued. */
  readonly pendingReplies: number;
  /** Makes the next request(s) to `endpoint` fail with an HTTP error. */
  failNext(endpoint: ScriptedEndpoint, failure: ScriptedFailure): void;
  /** Replaces the installed models. */
  setModels(models: Array<string | ScriptedModelSpec>): void;
  /** Installed model names (with tags). */
  models(): string[];
  /** Changes the default embedding length (embedding models without an explicit `embeddingLength`). */
  setEmbeddingDimensions(dimensions: number): void;
  /** Switches {@link ScriptedOptions.rejectResponseFormat} on or off. */
  setRejectResponseFormat(reject: boolean): void;
  /** Forgets recorded requests, queued replies and pending failures. */
  reset(): void;
  /** Stops listening and drops open connections. Idempotent. */
  close(): Promise<void>;
}
