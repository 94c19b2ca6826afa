/**
 * Spinners and progress bars on stderr (never stdout, which carries results and JSON). Silent when
 * stderr is not a terminal, except for a final line of long operations.
 */
import type { Ora, Options as OraOptions } from 'ora';
import type { CliIO } from './io.js';

/** A spinner that can be stopped and restarted with a new label; a no-op off a terminal. */
export interface Spinner {
  start(text: string): void;
  stop(): void;
}

type OraFactory = (options: OraOptions) => Ora;
let oraFactory: OraFactory | undefined;
let oraLoading: Promise<void> | undefined;

/**
 * Starts a spinner on stderr (only when stderr is a terminal). `ora` is imported on the first
 * spinner, not with the CLI (to keep process start short); the spinner appears once it has loaded,
 * unless it was stopped before.
 */
export function startSpinner(io: CliIO, text: string): Spinner {
  if (!io.stderrIsTTY) return { start() {}, stop() {} };
  let wanted: string | undefined = text;
  let spinner: Ora | undefined;
  const show = () => {
    spinner?.stop();
    spinner = undefined;
    if (wanted === undefined || !oraFactory) return;
    spinner = oraFactory({
      text: wanted,
      stream: io.stderr as NodeJS.WriteStream,
      discardStdin: false,
    }).start();
  };
  if (oraFactory) show();
  else {
    oraLoading ??= import('ora').then(
      (m) => {
        oraFactory = m.default;
      },
      () => undefined, // no spinner is better than a failed command
    );
    void oraLoading.then(show);
  }
  return {
    start(next) {
      wanted = next;
      show();
    },
    stop() {
      wanted = undefined;
      show();
    },
  };
}

/** Formats a byte count (1.2 GB). */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/**
 * A progress bar on stderr: redrawn in place on a terminal, otherwise a line every 10%.
 * `update(done, total)` with any unit; `label` names the work.
 */
export function progressBar(
  io: CliIO,
  label: string,
  format: (done: number, total: number) => string = (d, t) => `${d}/${t}`,
) {
  let lastDecile = -1;
  const width = 24;
  return {
    update(done: number, total: number) {
      const ratio = total > 0 ? Math.min(1, done / total) : 0;
      const text = `${label} ${String(Math.round(ratio * 100)).padStart(3)}% ${format(done, total)}`;
      if (io.stderrIsTTY) {
        const filled = Math.round(ratio * width);
        io.stderr.write(
          `\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${text.slice(label.length + 1)}\u001b[K`,
        );
      } else {
        const decile = Math.floor(ratio * 10);
        if (decile !== lastDecile) {
          lastDecile = decile;
          io.stderr.write(`${text}\n`);
        }
      }
    },
    done(message?: string) {
      if (io.stderrIsTTY) io.stderr.write('\r\u001b[K');
      if (message) io.stderr.write(`${message}\n`);
    },
  };
}
