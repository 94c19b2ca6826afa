/**
 * Counts what a chat model costs during a benchmark: calls, prompt and completion tokens (as the
 * server reports them) and time spent waiting for the model.
 */
import type { ChatModel, ChatOptions, ChatRequest, ChatResult } from '../core/ports.js';

/** Cumulative counts since the meter was created. */
export interface MeterReading {
  calls: number;
  promptTokens: number;
  completionTokens: number;
  /** Wall-clock time inside `generate`, in milliseconds (failed calls included). */
  modelMs: number;
}

/** A {@link ChatModel} that counts its calls; `reading()` returns the totals so far. */
export interface MeteredChatModel extends ChatModel {
  reading(): MeterReading;
}

/** Wraps `inner` so every call is counted (one remote call per `generate`, as before). */
export function meterChatModel(inner: ChatModel): MeteredChatModel {
  const totals: MeterReading = { calls: 0, promptTokens: 0, completionTokens: 0, modelMs: 0 };
  return {
    id: inner.id,
    async generate(request: ChatRequest, options?: ChatOptions): Promise<ChatResult> {
      const started = performance.now();
      totals.calls += 1;
      try {
        const result = await inner.generate(request, options);
        totals.promptTokens += result.usage.promptTokens;
        totals.completionTokens += result.usage.completionTokens;
        return result;
      } finally {
        totals.modelMs += performance.now() - started;
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
