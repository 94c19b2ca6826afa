/**
 * Runs the real `sqlrecall` binary (bin/sqlrecall.js → dist/) as a subprocess, as a user would.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The launcher users run. */
export const BIN = join(ROOT, 'bin', 'sqlrecall.js');

/** What a finished command printed. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns `sqlrecall ...args`. The environment is minimal and explicit: nothing from the developer's
 * shell (no DATABASE_URL, no OLLAMA_HOST) leaks in unless passed.
 */
export function runSqlrecall(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<CliRun> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** A long-running `sqlrecall` process whose output (stdout and stderr together) is collected as it comes. */
export interface Running {
  child: ChildProcessWithoutNullStreams;
  out: () => string;
  waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

export function startSqlrecall(args: string[], env: Record<string, string>): Running {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let text = '';
  child.stdout.on('data', (d) => {
    text += d;
  });
  child.stderr.on('data', (d) => {
    text += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp, timeoutMs = 90_000): Promise<RegExpExecArray> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const match = pattern.exec(text);
      if (match) return match;
      if (child.exitCode !== null || Date.now() > deadline)
        throw new Error(`no ${pattern} from sqlrecall ${args.join(' ')}; output:\n${text}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  return { child, out: () => text, waitFor, exited };
}
