#!/usr/bin/env node
// The test command (`npm test`): build (server and web UI), type-check, lint, run vitest, then print the plain
// "N passed, N failed" line that CI reads (vitest's own summary is not recognised there).
// `SQLRECALL_TEST_NO_BUILD=1` skips the build (the caller has just built).
//
// Ctrl-C (SIGINT) or SIGTERM is forwarded to the running step's whole process group (each step runs
// in its own, so wrappers such as npx that do not pass signals on cannot keep a vitest worker alive),
// the step is waited for, and the command exits 130 (143 for SIGTERM) without starting further steps.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const extra = process.argv.slice(2);
/** The signal that stopped the run, if any. */
let stoppedBy;
/** The step running now. */
let current;

/** Sends `signal` to the running step and everything it started. */
const forward = (signal) => {
  if (!current?.pid) return;
  try {
    process.kill(-current.pid, signal);
  } catch {
    current.kill(signal); // the group is gone already
  }
};

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stoppedBy ??= signal;
    forward(signal);
  });
}

/** Runs one step, resolving its exit status once it (and what it waits for) has ended. */
const run = (cmd, args) =>
  new Promise((resolve) => {
    current = spawn(cmd, args, { stdio: 'inherit', env: process.env, detached: true });
    current.on('error', () => resolve(1));
    current.on('close', (code) => {
      current = undefined;
      resolve(code ?? 1);
    });
  });

const exitIfStopped = () => {
  if (!stoppedBy) return;
  process.stderr.write(`\ncancelled (${stoppedBy})\n`);
  process.exit(stoppedBy === 'SIGINT' ? 130 : 143);
};

let failedSteps = 0;
for (const [label, cmd, args] of [
  ['build', 'npm', ['run', '--silent', 'build']],
  ['typecheck', 'npm', ['run', '--silent', 'typecheck']],
  ['lint', 'npx', ['biome', 'check', '--error-on-warnings', '.']],
]) {
  if (label === 'build' && process.env.SQLRECALL_TEST_NO_BUILD === '1') continue;
  if (extra.length > 0 && label !== 'build') continue; // focused runs skip type-check and lint
  process.stderr.write(`\n> ${label}\n`);
  const status = await run(cmd, args);
  exitIfStopped();
  if (status !== 0) {
    process.stderr.write(`${label} failed\n`);
    failedSteps += 1;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-vitest-'));
const report = join(dir, 'report.json');
const status = await run(process.execPath, [
  join(import.meta.dirname, '..', 'node_modules', 'vitest', 'vitest.mjs'),
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...extra,
]);
if (stoppedBy) rmSync(dir, { recursive: true, force: true });
exitIfStopped();

let passed = 0;
let failed = 0;
let skipped = 0;
try {
  const json = JSON.parse(readFileSync(report, 'utf8'));
  passed = json.numPassedTests ?? 0;
  // A file that fails to load has no failed tests but a failed suite: count it then, not twice.
  const failedTests = json.numFailedTests ?? 0;
  failed = (failedTests > 0 ? failedTests : (json.numFailedTestSuites ?? 0)) + failedSteps;
  skipped = (json.numPendingTests ?? 0) + (json.numTodoTests ?? 0);
} catch {
  failed = Math.max(1, failedSteps);
}
rmSync(dir, { recursive: true, force: true });
if (status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed, ${skipped} skipped`);
process.exit(failed > 0 || status !== 0 ? 1 : 0);
