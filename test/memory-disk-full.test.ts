/**
 * A full disk under the embedded memory store is a clear error (`memory_unavailable`, exit 6, HTTP
 * 503, "no space left on device" and the directory), never a backend that spins at 100 % CPU and
 * ignores SIGTERM, never "[object Object]". The disk is real: a small tmpfs mounted for the test
 * (needs root, as the test machine and CI have; skipped where mounting is not allowed).
 */
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import { storeError } from '../src/memory/store/sql-client.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

/** Mounts a tmpfs of `mb` MiB on a new directory; undefined when this machine does not allow it. */
function mountTmpfs(mb: number): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m`, 'tmpfs', dir], { stdio: 'ignore' });
    return dir;
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return undefined;
  }
}

function unmount(dir: string): void {
  try {
    execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
}

/** Fills the file system of `dir` with a file until a write fails with ENOSPC. */
function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler.bin'), 'w');
  const block = Buffer.alloc(1024 * 1024, 7);
  try {
    for (;;) writeSync(fd, block);
  } catch (error) {
    if ((error as { code?: string }).code !== 'ENOSPC') throw error;
    for (;;) {
      try {
        writeSync(fd, block.subarray(0, 4096));
      } catch {
        break;
      }
    }
  } finally {
    closeSync(fd);
  }
}

const canMount = (() => {
  const probe = mountTmpfs(1);
  if (probe) unmount(probe);
  return probe !== undefined;
})();

describe.skipIf(!canMount)('a full disk under the memory store (a real tmpfs)', () => {
  const mounts: string[] = [];
  afterEach(() => {
    for (const dir of mounts.splice(0)) unmount(dir);
  });

  it('a write is refused before it starts: memory_unavailable naming the directory; reads still work', async () => {
    const disk = mountTmpfs(120)!;
    mounts.push(disk);
    const dir = join(disk, 'memory');
    const client = createPgliteClient(dir);
    try {
      await client.query('CREATE TABLE notes (x text)');
      await client.query("INSERT INTO notes VALUES ('kept')");
      fill(disk);
      const failed = await client.query("INSERT INTO notes VALUES ('new')").then(
        () => undefined,
        (error: unknown) => storeError(error, `pglite:${dir}`),
      );
      expect(failed).toBeInstanceOf(SqlrecallError);
      expect(failed?.code).toBe('memory_unavailable');
      expect(failed?.exitCode).toBe(6);
      expect(failed?.httpStatus).toBe(503);
      expect(failed?.message).toContain('No space left on device');
      expect(failed?.message).toContain(dir);
      expect(await client.query('SELECT x FROM notes')).toEqual([{ x: 'kept' }]);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('a write that fills the disk stops the store: later calls fail at once, no spin, SIGTERM exits', async () => {
    const disk = mountTmpfs(160)!;
    mounts.push(disk);
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve('test/support/disk-full-child.ts'), join(disk, 'memory')],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const steps: Record<string, unknown>[] = [];
    let buffered = '';
    child.stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      const lines = buffered.split('\n');
      buffered = lines.pop() ?? '';
      for (const line of lines) if (line.trim()) steps.push(JSON.parse(line));
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      for (let i = 0; i < 600 && !steps.some((s) => s.step === 'waiting'); i += 1)
        await new Promise((resolve) => setTimeout(resolve, 200));
      expect(
        steps.map((s) => s.step),
        stderr,
      ).toEqual(['opened', 'big write', 'read after', 'write after', 'waiting']);
      const [, big, read, write] = steps;
      expect(big).toMatchObject({ ok: false, code: 'memory_unavailable' });
      expect(String(big?.message)).toMatch(/No space left on device/);
      for (const after of [read, write]) {
        expect(after).toMatchObject({ ok: false, code: 'memory_unavailable' });
        expect(String(after?.message)).toContain(join(disk, 'memory'));
        expect(after?.ms as number).toBeLessThan(1000);
      }
      child.kill('SIGTERM');
      const code = await Promise.race([
        exited,
        new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000)),
      ]);
      expect(code).toBe(0);
    } finally {
      child.kill('SIGKILL');
    }
  }, 240_000);

  describe('memory add through the CLI', () => {
    let model: ScriptedOllama;
    beforeAll(async () => {
      model = await startScriptedOllama({ chat: () => '{}' });
    });
    afterAll(async () => {
      await model?.close();
    });

    it('says "no space left on device" and the directory, exit 6, never [object Object]', async () => {
      const disk = mountTmpfs(120)!;
      mounts.push(disk);
      const home = join(disk, 'home');
      mkdirSync(home);
      const env = { SQLRECALL_HOME: home, OLLAMA_HOST: model.url };
      const first = await runCliInProcess(
        ['memory', 'add', '--user', 'ana', '--kind', 'term', 'TPV is total paid value'],
        { env },
      );
      expect(first.code, first.stderr).toBe(0);
      fill(disk);
      const run = await runCliInProcess(
        ['memory', 'add', '--user', 'ana', '--kind', 'term', 'GMV is gross merchandise value'],
        {
          env,
        },
      );
      expect(run.code).toBe(6);
      expect(run.stderr).toMatch(/No space left on device/);
      expect(run.stderr).toContain(home);
      expect(run.stderr).not.toContain('[object Object]');
      expect(run.stderr).not.toMatch(/\n\s+at /);
    }, 120_000);
  });
});
