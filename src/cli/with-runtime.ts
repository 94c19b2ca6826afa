/**
 * The shape every runtime-backed command shares: read the configuration (flags applied), build a
 * {@link Runtime}, run the command's body, report a failure through the CLI's error path and close
 * the runtime whatever happened.
 */
import type { Config } from '../config/config.js';
import { Runtime } from '../runtime/runtime.js';
import { configFrom } from './config-from.js';
import type { CliIO } from './io.js';
import type { GlobalOptions } from './program.js';
import { reportError } from './report.js';

/** Options of {@link withRuntime}. */
export interface WithRuntimeOptions {
  /** Warnings of the runtime (model fallbacks, a memory store that could not open), e.g. `warnTo(io)`. */
  warn?: (message: string) => void;
  /** Each piece of a thinking model's reasoning as it streams (chat `--show-thinking`). */
  thinking?: (text: string) => void;
  /**
   * How a thrown error becomes the exit code; default `reportError(io, opts.json, error)` (message
   * on stderr, `{ error }` on stdout with `--json`, the error code's exit code).
   */
  onError?: (error: unknown) => number;
  /**
   * A one-shot command (`ask`): once the runtime is closed, hand the embedded stores it started to
   * a background `sqlrecall hold` when `SQLRECALL_KEEP_WARM` is above 0 (`keep-warm.ts`). Default false.
   */
  keepWarm?: boolean;
  /**
   * With no database configured, use the demo shop when it exists (`configFrom`); default true (the
   * commands built on this question a database; `memory` opts out).
   */
  demoDefault?: boolean;
}

/**
 * Runs `body` with the configuration and a fresh runtime; returns its exit code, or the error's.
 * The runtime is closed after `body` settles (also when it throws); a configuration error is
 * reported the same way as an error of `body`.
 */
export async function withRuntime(
  io: CliIO,
  opts: GlobalOptions,
  body: (runtime: Runtime, config: Config) => Promise<number>,
  options: WithRuntimeOptions = {},
): Promise<number> {
  let runtime: Runtime | undefined;
  let config: Config | undefined;
  try {
    config = configFrom(io, opts, { demoDefault: options.demoDefault ?? true });
    runtime = new Runtime(config, {
      ...(options.warn ? { warn: options.warn } : {}),
      ...(options.thinking ? { thinking: options.thinking } : {}),
    });
    return await body(runtime, config);
  } catch (error) {
    return options.onError ? options.onError(error) : reportError(io, Boolean(opts.json), error);
  } finally {
    await runtime?.close();
    if (options.keepWarm && config && config.keepWarmSeconds > 0)
      (await import('./keep-warm.js')).startKeepWarmHolder(io, config);
  }
}
