/**
 * Runs the CLI in this process (`runCli` with captured streams): the same code path as the binary,
 * without the 0.3 s Node start-up per command. Use the subprocess helper (`cli.ts`) only where the
 * process boundary matters.
 */
import { PassThrough } from 'node:stream';
import { runCli } from '../../src/cli/program.js';
import type { CliRun } from './cli.js';
import { tempDir } from './temp-dir.js';

/** A folder without a `.env`, so the developer's settings never leak into a test (removed at exit). */
let cwd: string | undefined;

/** Runs `sqlrecall ...args` in-process with an explicit, minimal environment. */
export async function runCliInProcess(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<CliRun> {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  const stdin = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (d) => {
    out += d;
  });
  stderr.on('data', (d) => {
    err += d;
  });
  stdin.end(options.input ?? '');
  cwd ??= tempDir('sqlrecall-inproc-');
  const code = await runCli(
    args,
    {
      stdout,
      stderr,
      stdin,
      env: { HOME: process.env.HOME ?? '/tmp', ...options.env },
      cwd,
      interactive: false,
      stderrIsTTY: false,
    },
    { httpServer: async () => (await import('../../src/server/start.js')).startHttpServer },
  );
  return { code, stdout: out, stderr: err };
}
