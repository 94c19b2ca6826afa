/**
 * {@link ChatModel} on an OpenAI-compatible `/v1/chat/completions`: always streamed (with
 * `stream_options.include_usage`), deterministic (temperature 0, fixed seed), explicit
 * `max_tokens`, JSON-schema replies through `response_format` when the request has a `format`. A
 * server that rejects `response_format` (HTTP 400/422 naming it, or HTTP 500 on a request carrying
 * it) gets the request again without it, the schema written into the prompt instead, and is never
 * sent one again by this instance; the caller parses and validates the reply either way
 * (src/memory/json-call.ts). A server that forbids `stream_options` gets one retry without it. The
 * event stream is read by `chat-stream.ts`: a reply counts only with its completion signal.
 */
import type OpenAI from 'openai';
import type { ChatCompletionCreateParamsStreaming } from 'openai/resources/chat/completions';
import { SqlrecallError } from '../../core/errors.js';
import type {
  ChatMessage,
  ChatModel,
  ChatPart,
  ChatRequest,
  ChatStreamOptions,
  FinishReason,
} from '../../core/ports.js';
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  estimatePromptTokens,
} from '../ollama/chat-model.js';
import type { StructuredOutputSupport } from '../provider.js';
import { purposeHeaders } from '../purpose.js';
import { estimateTokens } from '../tokens.js';
import { ChatStreamError, type ChatStreamReply, closeReason, readChatStream } from './chat-stream.js';
import {
  apiErrorMessage,
  closedByServer,
  createOpenAiClient,
  displayBaseUrl,
  isOpenAiAbort,
  mapOpenAiError,
  serverText,
} from './client.js';

/** Options of {@link createOpenAiChatModel}. */
export interface OpenAiChatModelOptions {
  /** Server base URL including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Model name as the server names it (see `/v1/models`). */
  model: string;
  /** Bearer token for servers that want one. Never logged. */
  apiKey?: string;
  /** Sampling temperature; default 0 (as the Ollama backend). */
  temperature?: number;
  /** Sampling seed; default 42 (as the Ollama backend). */
  seed?: number;
  /** Default `max_tokens` when a request has no `maxTokens`; default 1024 (as the Ollama backend). */
  maxTokens?: number;
  /** A ready client (tests); default {@link createOpenAiClient}. */
  client?: OpenAI;
}

/** Name given to the JSON schema in `response_format` (servers require one; it has no meaning). */
export const RESPONSE_SCHEMA_NAME = 'reply';

function finishReasonOf(reason: string | null | undefined): FinishReason {
  if (reason === 'stop') return 'stop';
  if (reason === 'length') return 'length';
  return 'other';
}

/** `response_format` for a request `format`: a JSON schema, or plain JSON mode for `'json'`. */
export function responseFormatFor(
  format: ChatRequest['format'],
): ChatCompletionCreateParamsStreaming['response_format'] | undefined {
  if (format === undefined) return undefined;
  if (format === 'json') return { type: 'json_object' };
  return { type: 'json_schema', json_schema: { name: RESPONSE_SCHEMA_NAME, schema: format } };
}

/**
 * True when an error says the server does not take `response_format`: HTTP 400 or 422 whose
 * message names `response_format`, `json_schema` or `json_object`.
 */
export function isResponseFormatRejection(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  // Some servers answer a schema they cannot compile into a grammar with HTTP 500 and a message
  // that does not name the field: on a request that carried response_format, that is the suspect.
  if (status === 500) return true;
  if (status !== 400 && status !== 422) return false;
  return /response_format|json_schema|json_object/i.test(apiErrorMessage(error));
}

/**
 * True when an error says the server does not take `stream_options` (strict servers that forbid
 * unknown fields answer HTTP 400 or 422 naming it).
 */
export function isStreamOptionsRejection(error: unknown): boolean {
  const status = (error as { status?: unknown } | null)?.status;
  if (status !== 400 && status !== 422) return false;
  return /stream_options|include_usage/i.test(apiErrorMessage(error));
}

/**
 * The error for a reply stream that failed after it started: the server's own message, or that the
 * stream was cut. `model_output` (exit 5); nothing of the partial reply is kept.
 */
export function streamFailure(
  error: ChatStreamError,
  context: { baseUrl: string; model: string },
): SqlrecallError {
  const url = displayBaseUrl(context.baseUrl);
  // Whatever step asked (the SQL, the answer, a memory), nothing of a partial reply is used: it is
  // never run as SQL nor shown as an answer.
  const message =
    error.kind === 'error'
      ? `The server at ${url} reported an error while model "${context.model}" was answering: ${serverText(error.message)}. The partial reply was discarded: nothing of it was run or shown.`
      : `The reply of model "${context.model}" from the server at ${url} was cut off before it was complete (an incomplete stream: ${serverText(error.message)}). The partial reply was discarded: nothing of it was run or shown.`;
  return new SqlrecallError('model_output', message, {
    cause: error,
    details: {
      url,
      retryable: true,
      hint: `check the model server's log at ${url} (it may have crashed, run out of memory or been restarted, or a proxy may cut long replies), then ask again`,
    },
  });
}

/**
 * The messages for a server without `response_format`: the schema is appended to the first system
 * message (or sent as one), so the model still knows the fields it must produce.
 */
export function withSchemaInPrompt(messages: ChatMessage[], format: ChatRequest['format']): ChatMessage[] {
  if (format === undefined) return messages;
  const note =
    format === 'json'
      ? 'Reply with one JSON value only.'
      : `Reply with one JSON value only, matching this JSON schema: ${JSON.stringify(format)}`;
  const index = messages.findIndex((m) => m.role === 'system');
  if (index < 0) return [{ role: 'system', content: note }, ...messages];
  return messages.map((m, i) => (i === index ? { ...m, content: `${m.content}\n${note}` } : m));
}

/**
 * A chat model behind an OpenAI-compatible server. `request.purpose` travels as the
 * `X-Sqlrecall-Purpose` header, never in the messages.
 * @throws SqlrecallError `model_unreachable` (server down, key refused), `model_missing` (unknown
 *   model), `model_output` (other HTTP errors, broken stream). An aborted `signal` rethrows its reason.
 */
export function createOpenAiChatModel(options: OpenAiChatModelOptions): ChatModel {
  const { baseUrl, model } = options;
  const client = options.client ?? createOpenAiClient({ baseUrl, apiKey: options.apiKey });
  const temperature = options.temperature ?? DEFAULT_TEMPERATURE;
  const seed = options.seed ?? DEFAULT_SEED;
  const defaultMaxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  let responseFormatRejected = false;
  let streamOptionsRejected = false;

  /** Sends the request; resolves to the reply's event stream once the server answered. */
  async function open(
    request: ChatRequest,
    useResponseFormat: boolean,
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<Uint8Array>> {
    const responseFormat = useResponseFormat ? responseFormatFor(request.format) : undefined;
    const messages = useResponseFormat
      ? request.messages
      : withSchemaInPrompt(request.messages, request.format);
    const body: ChatCompletionCreateParamsStreaming = {
      model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      ...(streamOptionsRejected ? {} : { stream_options: { include_usage: true } }),
      temperature,
      seed,
      max_tokens: request.maxTokens ?? defaultMaxTokens,
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    // The raw response, read by our own event-stream reader: the client's iterator ignores
    // `event: error` and `error:` lines, and reads on after `[DONE]` until the server closes.
    const response = await client.chat.completions
      .create(body, { signal, headers: purposeHeaders(request.purpose) })
      .asResponse();
    if (!response.body) throw new ChatStreamError('the server sent no reply body', 'cut', '');
    return response.body;
  }

  /** {@link open}, retried once without `stream_options` when the server refuses that field. */
  async function openTolerant(
    request: ChatRequest,
    useResponseFormat: boolean,
    signal: AbortSignal | undefined,
  ): Promise<ReadableStream<Uint8Array>> {
    try {
      return await open(request, useResponseFormat, signal);
    } catch (error) {
      if (streamOptionsRejected || !isStreamOptionsRejection(error)) throw error;
      streamOptionsRejected = true; // remembered: this server is never sent stream_options again
      return open(request, useResponseFormat, signal);
    }
  }

  async function* stream(
    request: ChatRequest,
    callOptions: ChatStreamOptions = {},
  ): AsyncGenerator<ChatPart> {
    const { signal } = callOptions;
    signal?.throwIfAborted();
    const wantsFormat = request.format !== undefined && !responseFormatRejected;
    let reply: ChatStreamReply;
    try {
      let body: ReadableStream<Uint8Array>;
      try {
        body = await openTolerant(request, wantsFormat, signal);
      } catch (error) {
        if (!wantsFormat || !isResponseFormatRejection(error)) throw error;
        responseFormatRejected = true; // remembered: this server is never sent response_format again
        body = await openTolerant(request, false, signal);
      }
      reply = yield* readChatStream(body);
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      if (isOpenAiAbort(error)) throw error;
      if (error instanceof ChatStreamError) throw streamFailure(error, { baseUrl, model });
      if (closedByServer(error)) {
        const cut = `the connection closed before the reply was complete (${closeReason(error)})`;
        throw streamFailure(new ChatStreamError(cut, 'cut', ''), { baseUrl, model });
      }
      throw mapOpenAiError(error, { baseUrl, model });
    }
    // A cancelled read must not pass for a whole reply.
    if (signal?.aborted) throw signal.reason ?? new DOMException('aborted', 'AbortError');
    yield {
      type: 'finish',
      finishReason: finishReasonOf(reply.finish),
      usage: {
        promptTokens: reply.usage?.prompt_tokens ?? estimatePromptTokens(request),
        completionTokens: reply.usage?.completion_tokens ?? estimateTokens(reply.text + reply.thinking),
      },
    };
  }

  return { id: model, stream };
}

/** The schema of the structured-output probe: one boolean field. */
const PROBE_SCHEMA = {
  type: 'object',
  properties: { ok: { type: 'boolean' } },
  required: ['ok'],
} as const;

/**
 * Asks the server once whether it holds a reply to a JSON schema: a tiny non-streamed request (at
 * most 4 tokens) with `response_format: json_schema`. Accepted: supported. Refused with a message
 * naming the field (HTTP 400/422): not supported. HTTP 500 is retried once without the field; if
 * that succeeds, the field is what the server fails on. Anything else: undefined, with the
 * server's message. For `doctor`; the chat model finds the same on its own first formatted call.
 * @throws the `signal`'s reason when it aborts
 */
export async function probeStructuredOutput(options: {
  baseUrl: string;
  model: string;
  apiKey?: string;
  signal?: AbortSignal;
  client?: OpenAI;
}): Promise<StructuredOutputSupport> {
  const { baseUrl, model, signal } = options;
  const client = options.client ?? createOpenAiClient({ baseUrl, apiKey: options.apiKey });
  const ask = (withFormat: boolean) =>
    client.chat.completions.create(
      {
        model,
        messages: [{ role: 'user', content: 'Reply with the JSON object {"ok": true}.' }],
        stream: false,
        max_tokens: 4,
        temperature: 0,
        ...(withFormat ? { response_format: responseFormatFor(PROBE_SCHEMA) } : {}),
      },
      { signal, headers: purposeHeaders('probe') },
    );
  const unknown = (error: unknown): StructuredOutputSupport => {
    const mapped = mapOpenAiError(error, { baseUrl, model });
    const message = mapped instanceof Error ? mapped.message : String(mapped);
    return { supported: undefined, how: `the probe request failed: ${message}` };
  };
  try {
    await ask(true);
    return { supported: true, how: 'the server accepted a JSON-schema response_format (one probe request)' };
  } catch (error) {
    if (signal?.aborted) throw signal.reason ?? error;
    const status = (error as { status?: unknown } | null)?.status;
    if (status !== 500 && isResponseFormatRejection(error))
      return {
        supported: false,
        how: `the server refused response_format (HTTP ${String(status)}: ${serverText(apiErrorMessage(error))}); sqlrecall writes the JSON schema into the prompt instead`,
      };
    if (status !== 500) return unknown(error);
    try {
      await ask(false);
    } catch (plain) {
      if (signal?.aborted) throw signal.reason ?? plain;
      return unknown(plain);
    }
    return {
      supported: false,
      how: 'the server failed (HTTP 500) on response_format but answers without it; sqlrecall writes the JSON schema into the prompt instead',
    };
  }
}
