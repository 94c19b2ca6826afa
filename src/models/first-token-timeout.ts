/**
 * A first-token deadline for any {@link ChatModel} (issue 19, point 4): a model that is still
 * loading or too slow on the machine produces no token within the deadline, and the call fails with
 * `model_timeout` (exit 5), which the question pipeline treats like an unreachable model (it answers
 * from saved examples and rules if one fits). Once the first token arrives the call runs to its end:
 * a long answer that streams is never cut.
 */
import { SqlrecallError } from '../core/errors.js';
import type { ChatModel, ChatOptions, ChatRequest, ChatResult } from '../core/ports.js';

/**
 * Default first-token deadline: 300,000 ms (5 minutes). A design bound, not a measurement: loose
 * enough for a 7B model on a laptop CPU to load and evaluate a 4,096-token prompt (Ollama's prompt
 * evaluation on CPU runs at tens of tokens per second), tight enough that a hung server does not
 * hold a question forever. `SQLRECALL_MODEL_TIMEOUT_MS`; 0 turns the deadline off.
 */
export const DEFAULT_MODEL_TIMEOUT_MS = 300_000;

/**
 * Wraps `chat` so that each `generate` call fails with `model_timeout` when no token arrives within
 * `timeoutMs` milliseconds (the underlying request is aborted). `timeoutMs` ≤ 0 returns `chat`
 * unchanged. A caller's own abort still rejects with its AbortError, never `model_timeout`.
 */
export function withFirstTokenTimeout(chat: ChatModel, timeoutMs: number): ChatModel {
  if (!(timeoutMs > 0)) return chat;
  return {
    get id() {
      return chat.id;
    },
    async generate(request: ChatRequest, options: ChatOptions = {}): Promise<ChatResult> {
      const controller = new AbortController();
      const outer = options.signal;
      const forward = () => controller.abort(outer?.reason);
      if (outer?.aborted) forward();
      outer?.addEventListener('abort', forward, { once: true });
      let timedOut = false;
      let timer: NodeJS.Timeout | undefined = setTimeout(() => {
        timedOut = true;
        controller.abort();
      }, timeoutMs);
      const firstToken = () => {
        if (timer) clearTimeout(timer);
        timer = undefined;
      };
      try {
        return await chat.generate(request, {
          ...options,
          signal: controller.signal,
          onToken: (text) => {
            firstToken();
            options.onToken?.(text);
          },
        });
      } catch (error) {
        if (timedOut && !outer?.aborted) {
          throw new SqlrecallError(
            'model_timeout',
            `The model ${chat.id} gave no answer within ${Math.round(timeoutMs / 1000)} s (still loading, or too slow on this machine).`,
            {
              cause: error,
              details: {
                retryable: true,
                timeoutMs,
                hint: 'wait until the model is loaded (`ollama ps`), or raise SQLRECALL_MODEL_TIMEOUT_MS',
              },
            },
          );
        }
        throw error;
      } finally {
        firstToken();
        outer?.removeEventListener('abort', forward);
      }
    },
  };
}
