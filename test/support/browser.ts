/**
 * What the browser tests share: Debian's Chromium driven by playwright-core (never a downloaded
 * browser), the web build they load, and a real `sqlrecall serve --users` child process.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { BIN, ROOT } from './cli.js';

/** Debian's Chromium; the browser tests fail (never skip) without it. */
export const CHROMIUM = '/usr/bin/chromium';
/** Where screenshots go (gitignored). */
export const ARTIFACTS = join(ROOT, 'test-artifacts');

/** Throws when Chromium is absent; builds dist/web when it is missing or older than web/src; makes ARTIFACTS. */
export function prepareBrowserTest(): void {
  if (!existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is absent: the browser test needs Debian's chromium (apt-get install chromium)`,
    );
  const index = join(ROOT, 'dist', 'web', 'index.html');
  const newest = Math.max(
    ...readdirSync(join(ROOT, 'web', 'src')).map((f) => statSync(join(ROOT, 'web', 'src', f)).mtimeMs),
  );
  if (!existsSync(index) || statSync(index).mtimeMs < newest)
    execFileSync(process.execPath, [join(ROOT, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', 'web'], {
      cwd: ROOT,
      stdio: 'ignore',
    });
  mkdirSync(ARTIFACTS, { recursive: true });
}

/** A running `sqlrecall serve --users`: its URL, the child and what it wrote to stderr so far. */
export interface ServeProcess {
  url: string;
  child: ChildProcess;
  log: () => string;
}

/** Starts `sqlrecall serve --users` on `db` with the model at `modelUrl`; rejects after 45 s or on exit. */
export function startServe(db: string, modelUrl: string, home: string): Promise<ServeProcess> {
  let log = '';
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--users', '--port', '0', '--db', db, '--ollama-host', modelUrl, '--home', home],
    { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.stderr?.on('data', (d) => {
    log += d;
  });
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`serve did not start: ${log}`)), 45_000);
    child.stdout?.on('data', (d) => {
      out += d;
      const m = /Listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ url: m[1]!, child, log: () => log });
      }
    });
    child.once('exit', (code) => reject(new Error(`serve exited with ${code}: ${log}`)));
  });
}

/** Stops a serve child with SIGTERM and waits for it (nothing when it already ended). */
export async function stopServe(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Launches headless Chromium with no sandbox and no background network traffic. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--headless',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
