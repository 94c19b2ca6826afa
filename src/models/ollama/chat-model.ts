/**
 * {@link ChatModel} on Ollama's `/api/chat`: always streamed, deterministic (temperature 0, fixed
 * seed), explicit `num_predict`, and `num_ctx` sized to the prompt instead of Ollama's small default
 * window (2048–4096 tokens depending on the version), which silently cuts long schema prompts.
 */
import type { ChatResponse, Ollama } from 'ollama';
import { SqlrecallError } from '../../core/errors.js';
import type { ChatModel, ChatPart, ChatRequest, ChatStreamOptions, FinishReason } from '../../core/ports.js';
import { purposeHeaders } from '../purpose.js';
import { estimateTokens } from '../tokens.js';
import { createOllamaClient, mapOllamaError, modelInfoNumber, onAbort } from './client.js';

/** Default `num_predict`: room for a SQL statement plus a short explanation. */
export const DEFAULT_MAX_TOKENS = 1024;
/** Default sampling temperature: 0, so the same question gives the same SQL. */
export const DEFAULT_TEMPERATURE = 0;
/** Default seed, fixed for reproducible runs. */
export const DEFAULT_SEED = 42;
/** Smallest `num_ctx` we ask for (Ollama's historical default). */
export const MIN_NUM_CTX = 2048;
/** `num_ctx` is rounded up to a multiple of this, so similar prompts reuse a loaded model. */
export const NUM_CTX_STEP = 1024;
/** Tokens added to the estimate for the chat template (role markers, BOS) and estimate error. */
export const NUM_CTX_MARGIN = 256;
/** Template overhead per chat message, in tokens (`<|im_start|>role\n … <|im_end|>\n`). */
const TOKENS_PER_MESSAGE = 4;

/** Options of {@link createOllamaChatModel}. */
export interface OllamaChatModelOptions {
  /** Ollama address, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** Model name, e.g. `qwen2.5-coder:7b`. */
  model: string;
  /** Sampling temperature; default {@link DEFAULT_TEMPERATURE}. */
  temperature?: number;
  /** Sampling seed; default {@link DEFAULT_SEED}. */
  seed?: number;
  /** Default `num_predict` when a request has no `maxTokens`; default {@link DEFAULT_MAX_TOKENS}. */
  maxTokens?: number;
  /** Context window: a fixed number of tokens, or `'auto'` (default) to size it per request. */
  numCtx?: number | 'auto';
  /** Ollama `keep_alive` (e.g. `'10m'`); default: the server's (5 minutes). */
  keepAlive?: string;
  /** A ready client (tests); default: one built on our undici fetch, see `createOllamaClient`. */
  client?: Ollama;
}

/**
 * The context window for a prompt of `promptTokens` and an answer of up to `maxTokens`: their sum
 * plus {@link NUM_CTX_MARGIN}, rounded up to a multiple of {@link NUM_CTX_STEP}, at least
 * {@link MIN_NUM_CTX}, and at most `modelContextLength` when known.
 */
export function chooseNumCtx(promptTokens: number, maxTokens: number, modelContextLength?: number): number {
  const needed = promptTokens + maxTokens + NUM_CTX_MARGIN;
  const rounded = Math.max(MIN_NUM_CTX, Math.ceil(needed / NUM_CTX_STEP) * NUM_CTX_STEP);
  return modelContextLength ? Math.min(rounded, modelContextLength) : rounded;
}

/** Estimated prompt tokens of a request: the messages, their template overhead, and a schema `format`. */
export function estimatePromptTokens(request: ChatRequest): number {
  let total = 0;
  for (const message of request.messages) total += estimateTokens(message.content) + TOKENS_PER_MESSAGE;
  if (request.format && typeof request.format === 'object')
    total += estimateTokens(JSON.stringify(request.format));
  return total;
}

/**
 * A failure after part of the reply streamed in says so: the partial reply is discarded, never
 * used as an answer.
 */
function streamedFailure(error: unknown, started: boolean): unknown {
  if (!started || !(error instanceof SqlrecallError)) return error;
  return new SqlrecallError(
    error.code,
    `${error.message.replace(/\.?$/, '.')} The partial reply was discarded.`,
    {
      cause: error.cause ?? error,
      details: error.details,
    },
  );
}

function finishReasonOf(doneReason: string | undefined): FinishReason {
  if (doneReason === 'stop') return 'stop';
  if (doneReason === 'length') return 'length';
  return 'other';
}

/**
 * A chat model served by Ollama. `stream` makes one streamed `/api/chat` call (plus, once per
 * model instance and only with `numCtx: 'auto'`, an `/api/show` call for the context length).
 * `request.purpose` never reaches the model: it travels as the `X-Sqlrecall-Purpose` HTTP header
 * (see `../purpose.ts`), which Ollama ignores.
 * @throws SqlrecallError `model_unreachable` (server down), `model_missing` (not pulled),
 *   `model_output` (other HTTP errors, broken stream). An aborted `signal` rethrows the AbortError.
 */
export function createOllamaChatModel(options: OllamaChatModelOptions): ChatModel {
  const { host, model } = options;
  const temperature = options.temperature ?? DEFAULT_TEMPERATURE;
  const seed = options.seed ?? DEFAULT_SEED;
  const defaultMaxTokens = options.maxTokens ?? DEFAULT_MAX_TOKENS;
  const numCtxSetting = options.numCtx ?? 'auto';
  let contextLength: Promise<number | undefined> | undefined;

  const clientFor = (signal?: AbortSignal, purpose?: string): Ollama =>
    options.client ?? createOllamaClient({ host, signal, headers: purposeHeaders(purpose) });

  /** The model's trained context length from `/api/show`, fetched once; undefined when not reported. */
  const modelContextLength = (client: Ollama): Promise<number | undefined> => {
    contextLength ??= client.show({ model }).then(
      (show) => modelInfoNumber(show, 'context_length'),
      (error: unknown) => {
        contextLength = undefined; // not cached: the next call asks again
        const mapped = mapOllamaError(error, { host, model });
        // Server down or model missing: the chat call would fail the same way, so fail now.
        // Anything else (an older server without model_info, a proxy): go on without a cap.
        if (mapped instanceof SqlrecallError && mapped.code === 'model_output') return undefined;
        throw mapped;
      },
    );
    return contextLength;
  };

  async function* stream(
    request: ChatRequest,
    callOptions: ChatStreamOptions = {},
  ): AsyncGenerator<ChatPart> {
    const { signal } = callOptions;
    signal?.throwIfAborted();
    const client = clientFor(signal, request.purpose);
    const maxTokens = request.maxTokens ?? defaultMaxTokens;
    const promptEstimate = estimatePromptTokens(request);
    let numCtx: number;
    if (numCtxSetting === 'auto') {
      numCtx = chooseNumCtx(promptEstimate, maxTokens, await modelContextLength(client));
    } else {
      numCtx = numCtxSetting;
    }

    let started = false;
    let completionText = '';
    let toolIndex = 0;
    let final: ChatResponse | undefined;
    let abort = () => {};
    let removeAbortListener = () => {};
    try {
      const reply = await client.chat({
        model,
        messages: request.messages.map((m) => ({ role: m.role, content: m.content })),
        stream: true,
        ...(request.format === undefined ? {} : { format: request.format }),
        ...(options.keepAlive === undefined ? {} : { keep_alive: options.keepAlive }),
        options: { temperature, seed, num_predict: maxTokens, num_ctx: numCtx },
      });
      abort = () => reply.abort();
      removeAbortListener = onAbort(signal, abort);
      if (signal?.aborted) reply.abort();
      for await (const part of reply) {
        const thought = part.message?.thinking ?? '';
        if (thought) {
          started = true;
          yield { type: 'reasoning-delta', text: thought };
        }
        const piece = part.message?.content ?? '';
        if (piece) {
          started = true;
          completionText += piece;
          yield { type: 'text-delta', text: piece };
        }
        for (const call of part.message?.tool_calls ?? []) {
          const args = call.function?.arguments;
          yield {
            type: 'tool-call-delta',
            index: toolIndex++,
            name: call.function?.name ?? '',
            arguments: typeof args === 'string' ? args : JSON.stringify(args ?? {}),
          };
        }
        if (part.done) {
          final = part;
          break; // the server's completion signal: nothing after it belongs to this reply
        }
      }
      // The client already refuses a stream without `done`; kept so no partial reply ever passes.
      if (!final && !signal?.aborted) throw new Error('the reply stream ended before "done": true');
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw streamedFailure(mapOllamaError(error, { host, model }), started);
    } finally {
      removeAbortListener();
      if (!final) abort(); // the caller stopped reading early, or the read failed: close the request
    }
    if (signal?.aborted) throw signal.reason ?? new DOMException('aborted', 'AbortError');

    yield {
      type: 'finish',
      finishReason: finishReasonOf(final?.done_reason),
      usage: {
        promptTokens: final?.prompt_eval_count ?? promptEstimate,
        completionTokens: final?.eval_count ?? estimateTokens(completionText),
      },
    };
  }

  return { id: model, stream };
}
