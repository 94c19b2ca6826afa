/**
 * {@link ChatModel} on an OpenAI-compatible `/v1/chat/completions`: always streamed (with
 * `stream_options.include_usage`), deterministic (temperature 0, fixed seed), explicit
 * `max_tokens`, JSON-schema replies through `response_format` when the request has a `format`. A
 * server that rejects `response_format` (HTTP 400/422 naming it) gets the request again without
 * it, the schema written into the prompt instead, and is never sent one again by this instance;
 * the caller parses and validates the reply either way (src/memory/json-call.ts).
 */
import type OpenAI from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionCreateParamsStreaming,
} from 'openai/resources/chat/completions';
import type {
  ChatMessage,
  ChatModel,
  ChatOptions,
  ChatRequest,
  ChatResult,
  FinishReason,
} from '../../core/ports.js';
import {
  DEFAULT_MAX_TOKENS,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  estimatePromptTokens,
} from '../ollama/chat-model.js';
import { purposeHeaders } from '../purpose.js';
import { estimateTokens } from '../tokens.js';
import { apiErrorMessage, createOpenAiClient, isOpenAiAbort, mapOpenAiError } from './client.js';

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

/** Carries an error thrown by the caller's `onToken` through our error mapping unchanged. */
class CallbackError {
  constructor(readonly original: unknown) {}
}

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
  if (status !== 400 && status !== 422) return false;
  return /response_format|json_schema|json_object/i.test(apiErrorMessage(error));
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

  async function stream(
    request: ChatRequest,
    useResponseFormat: boolean,
    callOptions: ChatOptions,
  ): Promise<{ text: string; finish?: string | null; usage?: ChatCompletionChunk['usage'] }> {
    const { signal, onToken } = callOptions;
    const responseFormat = useResponseFormat ? responseFormatFor(request.format) : undefined;
    const messages = useResponseFormat
      ? request.messages
      : withSchemaInPrompt(request.messages, request.format);
    const body: ChatCompletionCreateParamsStreaming = {
      model,
      messages: messages.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
      temperature,
      seed,
      max_tokens: request.maxTokens ?? defaultMaxTokens,
      ...(responseFormat ? { response_format: responseFormat } : {}),
    };
    const completion = await client.chat.completions.create(body, {
      signal,
      headers: purposeHeaders(request.purpose),
    });
    let text = '';
    let finish: string | null | undefined;
    let usage: ChatCompletionChunk['usage'];
    try {
      for await (const chunk of completion) {
        if (chunk.usage) usage = chunk.usage;
        const choice = chunk.choices?.[0];
        if (!choice) continue;
        const piece = choice.delta?.content ?? '';
        if (piece) {
          text += piece;
          try {
            onToken?.(piece);
          } catch (error) {
            completion.controller.abort();
            throw new CallbackError(error);
          }
        }
        if (choice.finish_reason) finish = choice.finish_reason;
      }
    } finally {
      if (signal?.aborted) completion.controller.abort();
    }
    return { text, finish, usage };
  }

  async function generate(request: ChatRequest, callOptions: ChatOptions = {}): Promise<ChatResult> {
    const { signal } = callOptions;
    signal?.throwIfAborted();
    const started = performance.now();
    const wantsFormat = request.format !== undefined && !responseFormatRejected;
    let reply: Awaited<ReturnType<typeof stream>>;
    try {
      try {
        reply = await stream(request, wantsFormat, callOptions);
      } catch (error) {
        if (!wantsFormat || !isResponseFormatRejection(error)) throw error;
        responseFormatRejected = true; // remembered: this server is never sent response_format again
        reply = await stream(request, false, callOptions);
      }
    } catch (error) {
      if (error instanceof CallbackError) throw error.original;
      if (signal?.aborted) throw signal.reason ?? error;
      if (isOpenAiAbort(error)) throw error;
      throw mapOpenAiError(error, { baseUrl, model });
    }
    // The client ends an aborted stream quietly; a cut-off reply must not pass for a whole one.
    if (signal?.aborted) throw signal.reason ?? new DOMException('aborted', 'AbortError');
    return {
      text: reply.text,
      finishReason: finishReasonOf(reply.finish),
      usage: {
        promptTokens: reply.usage?.prompt_tokens ?? estimatePromptTokens(request),
        completionTokens: reply.usage?.completion_tokens ?? estimateTokens(reply.text),
      },
      durationMs: performance.now() - started,
    };
  }

  return { id: model, generate };
}
