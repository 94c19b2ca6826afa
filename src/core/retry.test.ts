import { describe, expect, it } from 'vitest';
import { SqlrecallError } from './errors.js';
import { backoffDelay, DEFAULT_RETRY_POLICY, isTransient, withRetry } from './retry.js';

const fast = { attempts: 3, baseDelayMs: 1, maxDelayMs: 2 };
const busy = () => new SqlrecallError('model_output', 'busy', { details: { status: 503, retryable: true } });

describe('withRetry', () => {
  it('retries a transient failure and returns the first success', async () => {
    let calls = 0;
    const result = await withRetry(
      async (attempt) => {
        calls += 1;
        if (attempt < 3) throw busy();
        return 'ok';
      },
      { policy: fast },
    );
    expect(result).toBe('ok');
    expect(calls).toBe(3);
  });

  it('makes exactly one attempt for an error that is not retryable', async () => {
    let calls = 0;
    const error = new SqlrecallError('model_missing', 'missing', {
      details: { status: 404, retryable: false },
    });
    await expect(
      withRetry(
        async () => {
          calls += 1;
          throw error;
        },
        { policy: fast },
      ),
    ).rejects.toBe(error);
    expect(calls).toBe(1);
  });

  it('stops at the attempt bound and rethrows the last error', async () => {
    let calls = 0;
    const errors: SqlrecallError[] = [];
    const retries: number[] = [];
    const thrown = await withRetry(
      async () => {
        calls += 1;
        errors.push(busy());
        throw errors.at(-1);
      },
      { policy: { ...fast, attempts: 4 }, onRetry: (_e, attempt) => retries.push(attempt) },
    ).catch((error: unknown) => error);
    expect(calls).toBe(4);
    expect(thrown).toBe(errors[3]);
    expect(retries).toEqual([1, 2, 3]);
  });

  it('stops waiting when the signal aborts', async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetry(
      async () => {
        calls += 1;
        throw busy();
      },
      {
        policy: { attempts: 5, baseDelayMs: 10_000, maxDelayMs: 10_000 },
        signal: controller.signal,
        random: () => 0.99,
      },
    );
    setTimeout(() => controller.abort(new Error('stopped')), 20);
    await expect(run).rejects.toThrow('stopped');
    expect(calls).toBe(1);
  });

  it('refuses a policy without attempts', async () => {
    await expect(withRetry(async () => 1, { policy: { ...fast, attempts: 0 } })).rejects.toThrow(RangeError);
  });
});

describe('retry rules', () => {
  it('treats only retryable errors with a transient or no status as transient', () => {
    expect(isTransient(busy())).toBe(true);
    expect(
      isTransient(new SqlrecallError('model_unreachable', 'refused', { details: { retryable: true } })),
    ).toBe(true);
    expect(
      isTransient(new SqlrecallError('model_output', 'oom', { details: { status: 500, retryable: true } })),
    ).toBe(false);
    expect(isTransient(new SqlrecallError('db_query', 'bad', {}))).toBe(false);
    expect(isTransient(new Error('plain'))).toBe(false);
  });

  it('draws full-jitter backoff below a doubling, capped ceiling', () => {
    const policy = { attempts: 6, baseDelayMs: 100, maxDelayMs: 350 };
    expect(backoffDelay(policy, 1, () => 0.999)).toBe(99);
    expect(backoffDelay(policy, 2, () => 0.999)).toBe(199);
    expect(backoffDelay(policy, 3, () => 0.999)).toBe(349); // capped at 350
    expect(backoffDelay(policy, 3, () => 0)).toBe(0);
    expect(DEFAULT_RETRY_POLICY.attempts).toBe(3);
  });

  it('exposes retryable and the upstream status as typed fields', () => {
    const error = busy();
    expect(error.retryable).toBe(true);
    expect(error.status).toBe(503);
    const plain = new SqlrecallError('usage', 'bad flag');
    expect(plain.retryable).toBe(false);
    expect(plain.status).toBeUndefined();
  });
});
