/**
 * Runs the real `sqlrecall` binary (bin/sqlrecall.js → dist/) as a subprocess, as a user would.
 */
import { spawn } from 'node:child_process';
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
