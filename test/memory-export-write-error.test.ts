/**
 * `memory export --out` to a place that cannot be written is a usage error (exit 2) that names
 * the file and the reason in words, like `memory import` does for a file it cannot read; never an
 * "Unexpected error" with the OS message.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

describe('memory export --out that cannot be written', () => {
  it('exits 2 with "Cannot write FILE: reason" for a missing folder, a folder, and a file as folder', async () => {
    const dir = tempDir('sqlrecall-export-out-');
    const model = await startScriptedOllama({ chat: () => '{}' });
    const env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: model.url };
    try {
      writeFileSync(join(dir, 'plain'), 'x');
      const cases: [string, string][] = [
        ['/proc/nope/x.json', 'its folder does not exist'],
        [join(dir, 'missing', 'x.json'), 'its folder does not exist'],
        [dir, 'it is a folder'],
        [join(dir, 'plain', 'x.json'), 'part of the path is not a folder'],
      ];
      for (const [file, reason] of cases) {
        const r = await runCliInProcess(['memory', 'export', '--user', 'kai', '--out', file], { env });
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toContain(`Cannot write ${file}: ${reason}.`);
        expect(r.stderr).not.toMatch(/Unexpected error|ENOENT|EISDIR|ENOTDIR|\n\s+at /);
      }
      const ok = await runCliInProcess(['memory', 'export', '--user', 'kai', '--out', join(dir, 'ok.json')], {
        env,
      });
      expect(ok.code, ok.stderr).toBe(0);
    } finally {
      await model.close();
    }
  }, 60_000);
});
