#!/usr/bin/env node
// The test command (`npm test`): build (server and web UI), type-check, lint, run vitest, then print the plain
// "N passed, N failed" line that CI reads (vitest's own summary is not recognised there).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const extra = process.argv.slice(2);
const run = (cmd, args) => spawnSync(cmd, args, { stdio: 'inherit', env: process.env }).status ?? 1;

let failedSteps = 0;
for (const [label, cmd, args] of [
  ['build', 'npm', ['run', '--silent', 'build']],
  ['typecheck', 'npm', ['run', '--silent', 'typecheck']],
  ['lint', 'npx', ['biome', 'check', '.']],
]) {
  if (extra.length > 0 && label !== 'build') continue; // focused runs skip type-check and lint
  process.stderr.write(`\n> ${label}\n`);
  if (run(cmd, args) !== 0) {
    process.stderr.write(`${label} failed\n`);
    failedSteps += 1;
  }
}

const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-vitest-'));
const report = join(dir, 'report.json');
const status = run('npx', [
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${report}`,
  ...extra,
]);

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
