/**
 * Deadlines for any {@link ChatModel}:
 * - first sign of life: a model that is still loading or too slow on the machine produces no token
 *   (content or reasoning) within `SQLRECALL_MODEL_TIMEOUT_MS`;
 * - idle: a stream that started and then goes silent for `SQLRECALL_MODEL_IDLE_TIMEOUT_MS` (a hung
 *   model process keeps the connection open and sends nothing).
 * Either fails the call with `model_timeout` (exit 5), naming its setting; the question pipeline
 * treats that like an unreachable model (it answers from saved examples and rules if one fits). A
 * long answer that keeps streaming is never cut: every token restarts the idle deadline.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatModel, ChatPart, ChatRequest, ChatStreamOptions } from '../core/ports.js';

/**
 * Default first-token deadline: 300,000 ms (5 minutes). A design bound, not a measurement: loose
 * enough for a 7B model on a laptop CPU to load and evaluate a 4,096-token prompt (Ollama's prompt
 * evaluation on CPU runs at tens of tokens per second), tight enough that a hung server does not
 * hold a question forever. `SQLRECALL_MODEL_TIMEOUT_MS`; 0 turns the deadline off.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 300_000;

/**
 * Default idle deadline of a started stream: 120,000 ms (2 minutes). A design bound, not a
 * measurement: a model that is generating produces tokens every fraction of a second even on a
 * CPU, so two minutes of silence means it hung. `SQLRECALL_MODEL_IDLE_TIMEOUT_MS`; 0 turns it off.
 */
export const DEFAULT_MODEL_IDLE_TIMEOUT_MS = 120_000;

const seconds = (ms: number) => (ms >= 10_000 ? `${Math.round(ms / 1000)} s` : `${ms} ms`);

/**
 * Wraps `chat` so that each reply stream fails with `model_timeout` when no token (content or
 * reasoning) arrives within `timeoutMs` milliseconds, or when, after the first token, no further
 * token arrives within `idleTimeoutMs` (default {@link DEFAULT_MODEL_IDLE_TIMEOUT_MS}); the
 * underlying request is aborted. Only the server's silence counts: the clock stops while the
 * caller holds a part. A deadline ≤ 0 is off; with both off, `chat` is returned unchanged. A
 * caller's own abort still throws its AbortError, never `model_timeout`.
 */
export function withFirstTokenTimeout(
  chat: ChatModel,
  timeoutMs: number,
  idleTimeoutMs: number = DEFAULT_MODEL_IDLE_TIMEOUT_MS,
): ChatModel {
  const firstOn = timeoutMs > 0;
  const idleOn = idleTimeoutMs > 0;
  if (!firstOn && !idleOn) return chat;
  return {
    get id() {
      return chat.id;
    },
    async *stream(request: ChatRequest, options: ChatStreamOptions = {}): AsyncGenerator<ChatPart> {
      const controller = new AbortController();
      const outer = options.signal;
      const forward = () => controller.abort(outer?.reason);
      if (outer?.aborted) forward();
      outer?.addEventListener('abort', forward, { once: true });
      let expired: 'first' | 'idle' | undefined;
      let timer: NodeJS.Timeout | undefined;
      let alive = false;
      const arm = () => {
        const which = alive ? 'idle' : 'first';
        const ms = alive ? idleTimeoutMs : timeoutMs;
        if (ms <= 0) return;
        timer = setTimeout(() => {
          expired = which;
          controller.abort();
        }, ms);
      };
      const stop = () => {
        if (timer) clearTimeout(timer);
        timer = undefined;
      };
      try {
        arm();
        for await (const part of chat.stream(request, { ...options, signal: controller.signal })) {
          stop();
          if (part.type !== 'finish') alive = true; // any streamed piece is a sign of life
          yield part;
          arm();
        }
      } catch (error) {
        if (expired && !outer?.aborted)
          throw deadlineError(chat.id, expired, expired === 'first' ? timeoutMs : idleTimeoutMs, error);
        throw error;
      } finally {
        stop();
        outer?.removeEventListener('abort', forward);
      }
    },
  };
}

function deadlineError(model: string, which: 'first' | 'idle', ms: number, cause: unknown): SqlrecallError {
  if (which === 'first') {
    return new SqlrecallError(
      'model_timeout',
      `The model ${model} gave no answer within ${seconds(ms)} (SQLRECALL_MODEL_TIMEOUT_MS; still loading, or too slow on this machine).`,
      {
        cause,
        details: {
          retryable: true,
          timeoutMs: ms,
          hint: 'wait until the model is loaded, or raise SQLRECALL_MODEL_TIMEOUT_MS',
        },
      },
    );
  }
  return new SqlrecallError(
    'model_timeout',
    `The model ${model} started answering, then sent nothing for ${seconds(ms)} (SQLRECALL_MODEL_IDLE_TIMEOUT_MS); the partial reply was discarded.`,
    {
      cause,
      details: {
        retryable: true,
        timeoutMs: ms,
        hint: 'check the model server (it may have hung), or raise SQLRECALL_MODEL_IDLE_TIMEOUT_MS',
      },
    },
  );
}
