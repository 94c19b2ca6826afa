/**
 * The one retry policy of sqlrecall: bounded attempts, exponential
 * backoff with full jitter, cancellable by an `AbortSignal`. Callers wrap only calls that are safe
 * to repeat — an embedding request (an idempotent read), or opening a database connection before
 * any statement was sent on it — never a statement that may have run (a user query in flight, a
 * memory write) and never a streamed chat reply.
 *
 * Whether a failure is worth another attempt is {@link isTransient}: a {@link SqlrecallError} marked
 * `retryable` whose upstream status, if any, is one of {@link TRANSIENT_STATUSES}.
 */
import { isSqlrecallError } from './errors.js';

/** Bounds of a retry loop. */
export interface RetryPolicy {
  /** Most calls in total, the first one included (≥ 1). */
  attempts: number;
  /** Backoff ceiling before the second call, in milliseconds; doubled for each further call. */
  baseDelayMs: number;
  /** Largest backoff ceiling, in milliseconds. */
  maxDelayMs: number;
}

/**
 * Default policy: 3 attempts, backoff ceilings of 250 ms then 500 ms (capped at 4 s), so a call that
 * keeps failing costs at most 0.75 s of waiting on top of its own attempts. Three attempts ride over
 * a server restart or an Ollama model that is still loading ("503 Service Unavailable") without
 * hiding a server that is down; the values follow the AWS Architecture Blog's "Exponential Backoff
 * And Jitter" (2015) recipe, scaled to interactive use.
 */
export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = {
  attempts: 3,
  baseDelayMs: 250,
  maxDelayMs: 4000,
};

/**
 * Upstream HTTP statuses that say "try again later": 408 Request Timeout, 429 Too Many Requests,
 * 502 Bad Gateway, 503 Service Unavailable (Ollama while a model loads), 504 Gateway Timeout
 * (RFC 9110 §15.5.9, §15.6.3–15.6.5; RFC 6585 §4). A plain 500 is not among them: the same request
 * tends to fail the same way (a model out of memory).
 */
export const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([408, 429, 502, 503, 504]);

/**
 * True when another attempt of the same call may succeed: a {@link SqlrecallError} with
 * `retryable` set and no upstream status, or one of {@link TRANSIENT_STATUSES}.
 */
export function isTransient(error: unknown): boolean {
  if (!isSqlrecallError(error) || !error.retryable) return false;
  return error.status === undefined || TRANSIENT_STATUSES.has(error.status);
}

/**
 * Backoff before attempt `attempt + 1` (after `attempt` failed, `attempt` ≥ 1), with full jitter:
 * a uniform draw in [0, min(maxDelayMs, baseDelayMs · 2^(attempt − 1))).
 * @param random a uniform draw in [0, 1); default `Math.random`
 */
export function backoffDelay(
  policy: RetryPolicy,
  attempt: number,
  random: () => number = Math.random,
): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}

/** Options of {@link withRetry}. */
export interface RetryOptions {
  /** Attempts and backoff; default {@link DEFAULT_RETRY_POLICY}. */
  policy?: RetryPolicy;
  /** Stops the loop: no further attempt, and a wait in progress ends with the signal's reason. */
  signal?: AbortSignal;
  /** Whether a failure may be retried; default {@link isTransient}. */
  retryIf?: (error: unknown) => boolean;
  /** Called before each wait (logging); `attempt` is the call that failed (1-based). */
  onRetry?: (error: unknown, attempt: number, delayMs: number) => void;
  /** Uniform draw in [0, 1) for the jitter (tests); default `Math.random`. */
  random?: () => number;
}

/**
 * Calls `fn` until it succeeds, fails with an error that {@link RetryOptions.retryIf} rejects, or
 * `policy.attempts` calls were made; then rethrows the last error unchanged. `fn` gets the 1-based
 * attempt number.
 * @throws whatever `fn` threw last, or the signal's reason when aborted
 * @throws RangeError when `policy.attempts` is not a whole number ≥ 1
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  options: RetryOptions = {},
): Promise<T> {
  const policy = options.policy ?? DEFAULT_RETRY_POLICY;
  if (!Number.isInteger(policy.attempts) || policy.attempts < 1)
    throw new RangeError(`retry attempts must be a whole number ≥ 1 (got ${policy.attempts})`);
  const retryIf = options.retryIf ?? isTransient;
  for (let attempt = 1; ; attempt += 1) {
    options.signal?.throwIfAborted();
    try {
      return await fn(attempt);
    } catch (error) {
      if (attempt >= policy.attempts || options.signal?.aborted || !retryIf(error)) throw error;
      const delayMs = backoffDelay(policy, attempt, options.random);
      options.onRetry?.(error, attempt, delayMs);
      await sleep(delayMs, options.signal);
    }
  }
}

/** Waits `ms` milliseconds; rejects with the signal's reason when it aborts first. */
function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
