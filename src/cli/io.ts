/**
 * The CLI's view of the outside world, so commands run the same in a process and in tests.
 */
import type { Readable, Writable } from 'node:stream';
import { processEnv } from '../config/env.js';

/** Streams and environment a command runs with. */
export interface CliIO {
  stdout: Writable;
  stderr: Writable;
  stdin: Readable;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** True when stdin is an interactive terminal (prompts may be asked). */
  interactive: boolean;
  /** True when stderr is a terminal (spinners and colours). */
  stderrIsTTY: boolean;
}

/** The real process's IO. */
export function processIO(): CliIO {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: processEnv(),
    cwd: process.cwd(),
    interactive: Boolean(process.stdin.isTTY),
    stderrIsTTY: Boolean(process.stderr.isTTY),
  };
}
