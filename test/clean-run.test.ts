/**
 * A clean `npm test` (scripts/test.mjs): no lint warnings in the files this suite owns, Ctrl-C
 * stops every vitest worker and exits 130, and a run leaves no `sqlrecall-*` folder in the
 * temporary directory. The nested runs use their own TMPDIR and process group.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const BIOME = join(ROOT, 'node_modules', '@biomejs', 'biome', 'bin', 'biome');

/** Every process started (directly or not) by `root`, as `pid args`. */
function descendants(root: number): string[] {
  const rows = execFileSync('ps', ['-e', '-o', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((l) => l.trim().split(/\s+/))
    .filter((r) => r.length >= 2);
  const found = new Set<string>([String(root)]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const [pid, ppid] of rows)
      if (found.has(ppid!) && !found.has(pid!)) {
        found.add(pid!);
        grew = true;
      }
  }
  return rows.filter(([pid]) => pid !== String(root) && found.has(pid!)).map((r) => r.join(' '));
}

/** The pids among `pids` still running. */
function alive(pids: number[]): number[] {
  return pids.filter((pid) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  });
}

/** `node scripts/test.mjs ...files` in a new process group with its own TMPDIR, without the build. */
function startTestRun(files: string[], tmp: string): { child: ChildProcess; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'test.mjs'), ...files], {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      TMPDIR: tmp,
      SQLRECALL_TEST_NO_BUILD: '1',
      ...(process.env.TEST_DATABASE_URL ? { TEST_DATABASE_URL: process.env.TEST_DATABASE_URL } : {}),
    },
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, exited };
}

describe('a clean test run', () => {
  const tmps: string[] = [];
  afterAll(() => {
    for (const t of tmps) rmSync(t, { recursive: true, force: true });
  });

  it('biome reports no warning in the web styles or the scripts', () => {
    const run = () =>
      execFileSync(BIOME, ['check', '--error-on-warnings', 'web/src/styles.css', 'scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    expect(run).not.toThrow();
  });

  it('Ctrl-C of npm test stops every vitest worker and exits 130', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sqlrecall-cleanrun-'));
    tmps.push(tmp);
    const { child, exited } = startTestRun(['test/help.test.ts'], tmp);
    const root = child.pid!;
    let started: number[] = [];
    let descendantsSnapshot: string[] = [];
    try {
      // Wait for a vitest worker (a fork running the test file, `node (vitest 1)`) to be up.
      const deadline = Date.now() + 90_000;
      while (!descendants(root).some((p) => /\(vitest \d+\)/.test(p))) {
        if (Date.now() > deadline) throw new Error(`no vitest worker: ${descendants(root).join('\n')}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      descendantsSnapshot = descendants(root);
      started = descendantsSnapshot.map((p) => Number(p.split(' ')[0]));
      process.kill(root, 'SIGINT'); // the test command only, as `kill -INT` would
      expect(await exited).toBe(130);
      // Nothing the run started is left (a process may take a moment to be reaped after its signal).
      const until = Date.now() + 5_000;
      while (alive(started).length > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
      const left = descendantsSnapshot.filter((p) => alive([Number(p.split(' ')[0])]).length > 0);
      expect(left).toEqual([]);
    } finally {
      for (const pid of alive(started)) process.kill(pid, 'SIGKILL');
    }
  }, 120_000);

  it('a test run leaves no sqlrecall-* folder in the temporary directory', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'sqlrecall-cleanrun-'));
    tmps.push(tmp);
    const { exited } = startTestRun(['test/help.test.ts', 'test/doctor-backends.test.ts'], tmp);
    expect(await exited).toBe(0);
    expect(readdirSync(tmp).filter((n) => n.startsWith('sqlrecall-'))).toEqual([]);
  }, 240_000);
});
