/**
 * Ctrl-C for one-shot commands (`sql`, `ask`): the first SIGINT aborts the command's signal, which
 * cancels the running statement on the database server (the connector's `pg_cancel_backend`); the
 * command then ends normally and exits {@link EXIT_INTERRUPTED} once the cancel is confirmed (the
 * statement failed with SQLSTATE 57014). A second Ctrl-C exits at once.
 */
import { EXIT_INTERRUPTED } from '../core/errors.js';
import type { CliIO } from './io.js';

export { EXIT_INTERRUPTED };

/**
 * Ctrl-C in a command that has no handling of its own (demo, doctor, memory, schema, users): one
 * line saying so and exit {@link EXIT_INTERRUPTED}, instead of Node's silent death by signal. A
 * command that listens for SIGINT itself (ask, sql, chat, serve, hold, eval, mcp) decides alone.
 */
export function exitOnUnhandledInterrupt(write: (text: string) => void): void {
  const handler = (): void => {
    if (process.listenerCount('SIGINT') > 1) return;
    write('\ncancelled\n');
    process.exit(EXIT_INTERRUPTED);
  };
  process.on('SIGINT', handler);
}

/** A SIGINT listener bound to one command run. */
export interface Interrupt {
  /** Aborted on the first Ctrl-C. */
  readonly signal: AbortSignal;
  /** True once Ctrl-C was pressed. */
  readonly interrupted: boolean;
  /** Removes the listener (call in `finally`). */
  dispose(): void;
}

/**
 * Listens for SIGINT on the real process until {@link Interrupt.dispose}.
 * @param io where the "cancelling" note goes (stderr)
 */
export function onInterrupt(io: CliIO): Interrupt {
  const controller = new AbortController();
  let count = 0;
  const handler = (): void => {
    count += 1;
    if (count > 1) process.exit(EXIT_INTERRUPTED);
    io.stderr.write('\nCancelling the running query… (Ctrl-C again to quit at once)\n');
    controller.abort();
  };
  process.on('SIGINT', handler);
  return {
    signal: controller.signal,
    get interrupted() {
      return count > 0;
    },
    dispose: () => {
      process.off('SIGINT', handler);
    },
  };
}
