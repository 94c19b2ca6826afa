/**
 * The one {@link DatabaseConnector}, built from a {@link Dialect} (what the engine's SQL, values
 * and errors are) and a {@link Driver} (how statements reach it). Everything a connector promises
 * beyond carrying statements lives here once: a session per call, the read-only recipe of the
 * dialect, the client-side watchdog and cancellation of a statement that outlives its timeout or
 * whose signal aborts, and every error mapped to a {@link SqlrecallError}.
 */
import { SqlrecallError } from '../core/errors.js';
import type { DatabaseConnector, ExecuteOptions, IntrospectOptions, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { Dialect, Driver, DriverSession } from './engine.js';

/** Options of {@link createConnector}. */
export interface ConnectorOptions {
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
}

/**
 * Extra time after `timeoutMs` before the connector cancels the statement itself (the server's
 * statement timeout normally fires first; this covers the whole BEGIN…FETCH round trip and an
 * engine that does not enforce it).
 */
export const WATCHDOG_GRACE_MS = 500;

/**
 * Creates the connector of `dialect` over `driver`; nothing connects until the first call (the
 * driver decides when). `close` closes the driver.
 */
export function createConnector<S extends DriverSession>(
  dialect: Dialect<S>,
  driver: Driver<S>,
  options: ConnectorOptions = {},
): DatabaseConnector {
  const { displayName } = driver;
  const runner = dialect.runner();

  return {
    dialect: dialect.name,
    displayName,

    async ping(): Promise<void> {
      try {
        await driver.ping();
      } catch (error) {
        throw error instanceof SqlrecallError ? error : dialect.errors.unreachable(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      try {
        return await driver.withSession((session) =>
          runner.introspect(session, { schemas: introspectOptions.schemas ?? options.schemas }),
        );
      } catch (error) {
        throw dialect.errors.query(error, { displayName });
      }
    },

    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      const { signal, timeoutMs } = executeOptions;
      if (signal?.aborted) throw dialect.errors.cancelled({ displayName });
      let started = false;
      let timedOut = false;
      try {
        return await driver.withSession(
          async (session) => {
            started = true;
            const onAbort = (): void => session.cancel();
            signal?.addEventListener('abort', onAbort, { once: true });
            const watchdog = setTimeout(() => {
              timedOut = true;
              session.cancel();
            }, timeoutMs + WATCHDOG_GRACE_MS);
            try {
              return await runner.execute(session, sql, executeOptions);
            } finally {
              clearTimeout(watchdog);
              signal?.removeEventListener('abort', onAbort);
            }
          },
          { timeoutMs, signal },
        );
      } catch (error) {
        // Aborted while waiting for a connection: the wait's own error (db_busy) would mislead.
        if (!started && signal?.aborted) throw dialect.errors.cancelled({ displayName });
        throw dialect.errors.query(error, { displayName, timeoutMs, aborted: signal?.aborted && !timedOut });
      }
    },

    async probe(statements, probeOptions): Promise<Record<string, string | null>[]> {
      try {
        return await driver.withSession((session) => runner.analyse(session, statements, probeOptions), {
          timeoutMs: probeOptions.timeoutMs,
        });
      } catch (error) {
        throw dialect.errors.query(error, { displayName, timeoutMs: probeOptions.timeoutMs });
      }
    },

    close: () => driver.close(),
  };
}
