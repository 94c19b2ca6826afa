/**
 * `npm install` and `npx sqlrecall …` in a checkout both run `prepare`; it builds only when the
 * build is missing or older than its inputs, so the first `npx` command answers at once instead of
 * after a 15–20 s rebuild. Checked on a copy of the script in a scratch project whose `build`
 * script only leaves a marker file.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/temp-dir.js';

const ROOT = resolve(import.meta.dirname, '..');

describe('prepare', () => {
  const dir = tempDir('sqlrecall-prepare-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  mkdirSync(join(dir, 'scripts'));
  mkdirSync(join(dir, 'src'));
  copyFileSync(join(ROOT, 'scripts', 'prepare.mjs'), join(dir, 'scripts', 'prepare.mjs'));
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({
      name: 'prepare-scratch',
      private: true,
      scripts: {
        build: "node -e \"require('fs').writeFileSync('built', 'yes')\" && node scripts/prepare.mjs --stamp",
      },
    }),
  );
  writeFileSync(join(dir, 'src', 'a.ts'), 'export const a = 1;\n');
  const prepare = () => spawnSync('node', ['scripts/prepare.mjs'], { cwd: dir, encoding: 'utf8' });
  const outputs = () => {
    mkdirSync(join(dir, 'dist', 'bundle'), { recursive: true });
    mkdirSync(join(dir, 'dist', 'web'), { recursive: true });
    mkdirSync(join(dir, 'dist', 'pglite-template'), { recursive: true });
    writeFileSync(join(dir, 'dist', 'bundle', 'main.js'), '');
    writeFileSync(join(dir, 'dist', 'web', 'index.html'), '');
  };

  it('builds when there is no build yet', () => {
    const run = prepare();
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'built'))).toBe(true);
    expect(existsSync(join(dir, 'dist', '.build-stamp'))).toBe(true);
  });

  it('skips the build when it is newer than every input', () => {
    outputs();
    rmSync(join(dir, 'built'));
    spawnSync('node', ['scripts/prepare.mjs', '--stamp'], { cwd: dir });
    const run = prepare();
    expect(run.status, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/the build is up to date/);
    expect(existsSync(join(dir, 'built'))).toBe(false);
  });

  it('builds again when a source file changed after the build', () => {
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(dir, 'src', 'a.ts'), later, later);
    const run = prepare();
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'built'))).toBe(true);
  });

  it('builds again when an output is missing', () => {
    rmSync(join(dir, 'built'));
    spawnSync('node', ['scripts/prepare.mjs', '--stamp'], { cwd: dir });
    const later = new Date(Date.now() + 120_000);
    utimesSync(join(dir, 'dist', '.build-stamp'), later, later);
    rmSync(join(dir, 'dist', 'web', 'index.html'));
    const run = prepare();
    expect(run.status, run.stderr).toBe(0);
    expect(existsSync(join(dir, 'built'))).toBe(true);
  });
});
