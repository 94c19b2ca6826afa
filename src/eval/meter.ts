/**
 * Counts what a chat model costs during a benchmark: calls, prompt and completion tokens (as the
 * server reports them) and time spent waiting for the model.
 */
import type { ChatModel, ChatPart, ChatRequest, ChatStreamOptions } from '../core/ports.js';

/** Cumulative counts since the meter was created. */
export interface MeterReading {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /**
   * Wall-clock time spent waiting for reply streams, in milliseconds (failed calls included; the
   * time the caller holds a part is not counted).
   */
  modelMs: number;
}

/** A {@link ChatModel} that counts its calls; `reading()` returns the totals so far. */
export interface MeteredChatModel extends ChatModel {
  reading(): MeterReading;
}

/** Wraps `inner` so every call is counted (one remote call per reply stream). */
export function meterChatModel(inner: ChatModel): MeteredChatModel {
  const totals: MeterReading = { calls: 0, promptTokens: 0, completionTokens: 0, modelMs: 0 };
  return {
    id: inner.id,
    async *stream(request: ChatRequest, options?: ChatStreamOptions): AsyncGenerator<ChatPart> {
      totals.calls += 1;
      // Only the wait for the server counts, not the time the caller holds a part.
      let waitingSince = performance.now();
      try {
        for await (const part of inner.stream(request, options)) {
          totals.modelMs += performance.now() - waitingSince;
          if (part.type === 'finish') {
            totals.promptTokens += part.usage.promptTokens;
            totals.completionTokens += part.usage.completionTokens;
          }
          yield part;
          waitingSince = performance.now();
        }
        totals.modelMs += performance.now() - waitingSince;
      } catch (error) {
        totals.modelMs += performance.now() - waitingSince;
        throw error;
      }
    },
    reading: () => ({ ...totals }),
  };
}

/** `after − before`, field by field. */
export function meterDelta(before: MeterReading, after: MeterReading): MeterReading {
  return {
    calls: after.calls - before.calls,
    promptTokens: after.promptTokens - before.promptTokens,
    completionTokens: after.completionTokens - before.completionTokens,
    modelMs: after.modelMs - before.modelMs,
  };
}
