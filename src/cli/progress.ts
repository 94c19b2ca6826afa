/**
 * Spinners and progress bars on stderr (never stdout, which carries results and JSON). Silent when
 * stderr is not a terminal, except for a final line of long operations.
 */
import ora, { type Ora } from 'ora';
import type { CliIO } from './io.js';

/** A spinner that can be stopped and restarted with a new label; a no-op off a terminal. */
export interface Spinner {
  start(text: string): void;
  stop(): void;
}

/** Starts a spinner on stderr (only when stderr is a terminal). */
export function startSpinner(io: CliIO, text: string): Spinner {
  if (!io.stderrIsTTY) return { start() {}, stop() {} };
  let spinner: Ora | undefined = ora({
    text,
    stream: io.stderr as NodeJS.WriteStream,
    discardStdin: false,
  }).start();
  return {
    start(next) {
      spinner?.stop();
      spinner = ora({ text: next, stream: io.stderr as NodeJS.WriteStream, discardStdin: false }).start();
    },
    stop() {
      spinner?.stop();
      spinner = undefined;
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
