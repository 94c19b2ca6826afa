/**
 * Per-user concurrency on the routes that run statements (`POST /api/sql`, `POST /api/ask`): one
 * user may have at most `max` of them running at once; one more is answered at once with 429
 * `too_many_requests` and `Retry-After`, so one user cannot take every database connection and
 * parser thread from the others. A request counts until its response body is finished or
 * cancelled (an `ask` streams its steps long after the handler returned).
 */
import type { MiddlewareHandler } from 'hono';
import { SqlrecallError } from '../core/errors.js';
import { type AppEnv, sendError } from './context.js';

/** Default of `SQLRECALL_MAX_REQUESTS_PER_USER`: 4 (a person working in two or three tabs). */
export const DEFAULT_MAX_REQUESTS_PER_USER = 4;

/** Seconds a refused client is told to wait: about one statement's time. */
const RETRY_AFTER_SECONDS = 2;

/**
 * The middleware; every route it is used on shares one count per user. Runs after sign-in
 * (`principal` set).
 * @param max most requests per user at once (≥ 1)
 */
export function perUserConcurrency(max: number): MiddlewareHandler<AppEnv> {
  const running = new Map<string, number>();
  const release = (user: string): void => {
    const left = (running.get(user) ?? 1) - 1;
    if (left <= 0) running.delete(user);
    else running.set(user, left);
  };
  return async (c, next) => {
    const user = c.get('principal').user;
    const now = running.get(user) ?? 0;
    if (now >= max) {
      const response = sendError(
        c,
        new SqlrecallError(
          'too_many_requests',
          `You already have ${now} ${now === 1 ? 'request' : 'requests'} running (at most ${max} at once); try again when one has finished.`,
          {
            details: {
              running: now,
              limit: max,
              retryable: true,
              hint: 'An administrator can raise SQLRECALL_MAX_REQUESTS_PER_USER.',
            },
          },
        ),
      );
      response.headers.set('Retry-After', String(RETRY_AFTER_SECONDS));
      return response;
    }
    running.set(user, now + 1);
    let done = false;
    const finish = (): void => {
      if (done) return;
      done = true;
      release(user);
    };
    try {
      await next();
    } catch (error) {
      finish();
      throw error;
    }
    const body = c.res.body;
    if (!body) {
      finish();
      return;
    }
    c.res = new Response(countedUntilDone(body, finish), c.res);
  };
}

/** `body`, calling `finish` once when it ends, fails or is cancelled by the client. */
function countedUntilDone(body: ReadableStream<Uint8Array>, finish: () => void): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          finish();
          controller.close();
        } else controller.enqueue(value);
      } catch (error) {
        finish();
        controller.error(error);
      }
    },
    async cancel(reason) {
      finish();
      await reader.cancel(reason);
    },
  });
}
