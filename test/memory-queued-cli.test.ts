/**
 * Queued memories through the CLI in process, with the model server wholly down (connection
 * refused): `memory list` prints each queued fact's queue id, `memory show ID` shows it, `memory
 * forget ID` (or `delete`) withdraws it; another user naming that queue id gets "not found"
 * (exit 2) without its text, and the fact stays queued. A text over 2,000 characters is refused
 * (exit 2) with a 120-character preview, and nothing is queued.
 */
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

describe('queued memories (CLI)', () => {
  let env: Record<string, string>;
  beforeAll(async () => {
    const dir = tempDir('sqlrecall-queued-cli-');
    // A port that refuses connections: a server was there and is stopped.
    const probe = await startScriptedOllama({});
    const port = Number(new URL(probe.url).port);
    await probe.close();
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: `http://127.0.0.1:${port}`,
      SQLRECALL_TZ: 'Europe/Berlin',
      PATH: process.env.PATH ?? '',
    };
  }, 120_000);
  const cli = (args: string[]) => runCliInProcess(args, { env });

  it('lists, shows and withdraws a queued fact by queue id; another user gets not found', async () => {
    const added = await cli([
      'memory',
      'add',
      '--user',
      'ann',
      '--kind',
      'context',
      'Fiscal years start in April',
    ]);
    expect(added.code, added.stderr).toBe(0);
    const doc = JSON.parse((await cli(['memory', 'list', '--user', 'ann', '--json'])).stdout);
    const id = doc.pending[0].pendingId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const listed = await cli(['memory', 'list', '--user', 'ann']);
    expect(listed.stdout).toContain(`queue id ${id.slice(0, 8)}`);

    const shown = await cli(['memory', 'show', '--user', 'ann', id.slice(0, 8)]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`Queued ${id}: Fiscal years start in April`);
    expect(shown.stdout).toContain('not yet a memory');
    const shownJson = JSON.parse((await cli(['memory', 'show', '--user', 'ann', '--json', id])).stdout);
    expect(shownJson.pending).toMatchObject({ pendingId: id, text: 'Fiscal years start in April' });

    // Hostile: bob names ann's queue id to show and to forget it.
    for (const sub of ['show', 'forget', 'delete']) {
      const run = await cli(['memory', sub, '--user', 'bob', id.slice(0, 8)]);
      expect(run.code, `${sub}: ${run.stdout}${run.stderr}`).toBe(2);
      expect(`${run.stdout}${run.stderr}`).toMatch(/No memory with id \S+ in this scope, nor a queued one/);
      expect(`${run.stdout}${run.stderr}`).not.toContain('April');
    }
    const still = JSON.parse((await cli(['memory', 'list', '--user', 'ann', '--json'])).stdout);
    expect(still.pending.map((p: { pendingId: string }) => p.pendingId)).toEqual([id]);

    const forgot = await cli(['memory', 'forget', '--user', 'ann', id.slice(0, 8)]);
    expect(forgot.code, forgot.stderr).toBe(0);
    expect(forgot.stdout).toContain(
      `Withdrawn queued memory [${id.slice(0, 8)}]: Fiscal years start in April`,
    );
    const after = JSON.parse((await cli(['memory', 'list', '--user', 'ann', '--json'])).stdout);
    expect(after).toMatchObject({ memories: [], pending: [] });
    const again = await cli(['memory', 'forget', '--user', 'ann', id]);
    expect(again.code).toBe(2);
  });

  it('refuses a text over 2,000 characters with exit 2 and a 120-character preview; nothing queued', async () => {
    const long = `Revenue means ${'net of returns and discounts, '.repeat(80)}`;
    const run = await cli(['memory', 'add', '--user', 'cy', '--kind', 'term', long]);
    expect(run.code).toBe(2);
    const out = `${run.stdout}${run.stderr}`;
    expect(out).toMatch(/limit is 2,000/);
    expect(out).toContain(`It begins: "${long.slice(0, 120)}…"`);
    expect(out).not.toContain(long.slice(0, 200));
    expect(out).not.toMatch(/\n\s+at /); // never a stack trace
    const json = await cli(['memory', 'add', '--user', 'cy', '--json', long]);
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout || json.stderr).error.code).toBe('usage');
    const listed = JSON.parse((await cli(['memory', 'list', '--user', 'cy', '--json'])).stdout);
    expect(listed).toMatchObject({ memories: [], pending: [] });
  });
});
