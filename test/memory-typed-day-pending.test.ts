/**
 * Issue 30's last gaps, through the CLI in process on a fresh memory store:
 * - the day an expiry was typed is stored (`expires_on`) and shown as typed to a viewer in another
 *   zone, in list, show, `--json` and an export/import round trip;
 * - a day already over is refused (exit 2, nothing stored); an unknown `SQLRECALL_TZ` is a
 *   configuration error naming the variable and an example;
 * - `memory show` of an expired memory says "expired on DAY";
 * - `memory edit` with nothing changed says so; `memory import` says why a file cannot be read;
 * - with the model server wholly down (connection refused) `memory add` keeps the fact as a
 *   pending write (never a secret), listed with a marker, and applied once the server answers.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemoryStore } from '../src/memory/store/index.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { testVector } from './support/memory-store.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

const LA = 'America/Los_Angeles';
const TOKYO = 'Asia/Tokyo';

describe('memory expiry days, as typed (CLI)', () => {
  let server: ScriptedOllama;
  let dir: string;
  let base: Record<string, string>;
  beforeAll(async () => {
    dir = tempDir('sqlrecall-typed-day-');
    server = await startScriptedOllama({ chat: () => JSON.stringify({ sql: null }) });
    base = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: server.url, PATH: process.env.PATH ?? '' };
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });
  const cli = (args: string[], zone: string, extra: Record<string, string> = {}) =>
    runCliInProcess(args, { env: { ...base, SQLRECALL_TZ: zone, ...extra } });
  const ok = async (args: string[], zone: string) => {
    const run = await cli(args, zone);
    expect(run.code, run.stderr).toBe(0);
    return run.stdout;
  };

  it('a day typed in Los Angeles is shown as that day to a viewer in Tokyo, everywhere', async () => {
    const added = JSON.parse(
      await ok(
        [
          'memory',
          'add',
          '--user',
          'ann',
          '--kind',
          'context',
          '--until',
          '2099-12-31',
          '--json',
          'Figures are in euros',
        ],
        LA,
      ),
    );
    expect(added).toMatchObject({ expiresAt: '2100-01-01T08:00:00.000Z', expiresOn: '2099-12-31' });
    // In Tokyo that instant falls on 2100-01-01: the day shown must still be the one typed.
    const listed = JSON.parse(await ok(['memory', 'list', '--user', 'ann', '--json'], TOKYO));
    expect(listed.memories).toEqual([
      expect.objectContaining({ expiresAt: '2100-01-01T08:00:00.000Z', expiresOn: '2099-12-31' }),
    ]);
    const text = await ok(['memory', 'list', '--user', 'ann'], TOKYO);
    expect(text).toContain('(until 2099-12-31)');
    expect(text).not.toContain('2100-01-01');
    const id = listed.memories[0].id as string;
    const shown = JSON.parse(await ok(['memory', 'show', '--user', 'ann', '--json', id], TOKYO));
    expect(shown).toMatchObject({
      memory: { expiresOn: '2099-12-31' },
      status: 'active',
      statusText: 'active, until 2099-12-31',
    });
    expect(await ok(['memory', 'show', '--user', 'ann', id], TOKYO)).toContain(
      'Status: active, until 2099-12-31',
    );

    // Export and import into another user, viewed in Tokyo: the typed day travels with it.
    const file = join(dir, 'export.json');
    await ok(['memory', 'export', '--user', 'ann', '--out', file], LA);
    await ok(['memory', 'import', '--user', 'bob', file], TOKYO);
    const bob = JSON.parse(await ok(['memory', 'list', '--user', 'bob', '--json'], TOKYO));
    expect(bob.memories).toEqual([expect.objectContaining({ expiresOn: '2099-12-31' })]);
  });

  it('edit keeps the typed day, takes a new one, and says when nothing changes', async () => {
    const listed = JSON.parse(await ok(['memory', 'list', '--user', 'ann', '--json'], LA));
    const id = listed.memories[0].id as string;
    const same = await cli(['memory', 'edit', '--user', 'ann', id], LA);
    expect(same.code, same.stderr).toBe(0);
    expect(same.stdout).toContain('Nothing to change');
    expect(same.stdout).not.toContain('Updated');
    const edited = JSON.parse(
      await ok(['memory', 'edit', '--user', 'ann', '--json', id, 'Figures are in euros, net of tax'], TOKYO),
    );
    expect(edited).toMatchObject({ changed: true, memory: { expiresOn: '2099-12-31' } });
    const moved = JSON.parse(
      await ok(['memory', 'edit', '--user', 'ann', '--json', '--until', '2099-06-30', id], TOKYO),
    );
    expect(moved.memory).toMatchObject({ expiresOn: '2099-06-30', expiresAt: '2099-06-30T15:00:00.000Z' });
  });

  it('a day already over is refused with exit 2 and nothing is stored', async () => {
    const run = await cli(
      ['memory', 'add', '--user', 'cy', '--kind', 'context', '--until', '2020-01-01', 'Old promo rules'],
      LA,
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/2020-01-01 is already over/);
    const listed = JSON.parse(await ok(['memory', 'list', '--user', 'cy', '--all', '--json'], LA));
    expect(listed.memories).toEqual([]);
    expect(listed.pending).toEqual([]);
  });

  it('an unknown SQLRECALL_TZ is a configuration error naming it and an example', async () => {
    const run = await cli(['memory', 'list', '--user', 'ann'], 'Mars/Base');
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SQLRECALL_TZ');
    expect(run.stderr).toContain('Europe/Berlin');
    expect(run.stderr).toContain('Mars/Base');
  });

  it('show says "expired on DAY" for a memory whose day is over, not "active"', async () => {
    const store = createMemoryStore({ dataDir: join(dir, 'home', 'memory') });
    try {
      await store.init((await store.embeddingInfo())!);
      const [written] = await store.write({ user: 'dee' }, [
        {
          op: 'add',
          memory: {
            kind: 'context',
            text: 'Launch week pricing',
            expiresAt: '2020-01-02T08:00:00.000Z',
            expiresOn: '2020-01-01',
          },
          embedding: testVector(3, (await store.embeddingInfo())!.dimensions),
        },
      ]);
      const id = written!.memory!.id;
      const text = await ok(['memory', 'show', '--user', 'dee', id], TOKYO);
      expect(text).toContain('Status: expired on 2020-01-01');
      expect(text).not.toContain('Status: active');
      const json = JSON.parse(await ok(['memory', 'show', '--user', 'dee', '--json', id], TOKYO));
      expect(json).toMatchObject({ status: 'expired', statusText: 'expired on 2020-01-01' });
      expect(await ok(['memory', 'list', '--user', 'dee', '--all'], TOKYO)).toContain('(expired 2020-01-01)');
    } finally {
      await store.close();
    }
  });

  it('import says why a file cannot be read', async () => {
    const missing = await cli(['memory', 'import', '--user', 'ann', join(dir, 'nope.json')], LA);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('no such file');
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{\n  "format": "sqlrecall-memory",\n  oops\n}\n');
    const broken = await cli(['memory', 'import', '--user', 'ann', bad], LA);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/not JSON at line 3/);
  });
});

describe('memory add with the model server wholly down (CLI)', () => {
  let dir: string;
  let port: number;
  let server: ScriptedOllama | undefined;
  let env: Record<string, string>;
  beforeAll(async () => {
    dir = tempDir('sqlrecall-model-down-');
    // A port that refuses connections: a server was there and is stopped.
    const probe = await startScriptedOllama({});
    port = Number(new URL(probe.url).port);
    await probe.close();
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: `http://127.0.0.1:${port}`,
      SQLRECALL_TZ: LA,
      PATH: process.env.PATH ?? '',
    };
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });
  const cli = (args: string[]) => runCliInProcess(args, { env });

  it('keeps the fact as a pending write, lists it, never queues a secret, applies it when the server is up', async () => {
    const added = await cli([
      'memory',
      'add',
      '--user',
      'ann',
      '--kind',
      'context',
      '--until',
      '2099-12-31',
      'The fiscal year starts in April',
    ]);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('Saved: The fiscal year starts in April (until 2099-12-31)');
    expect(added.stdout).toContain('applied when the model server is reachable');

    const secret = await cli([
      'memory',
      'add',
      '--user',
      'ann',
      '--kind',
      'context',
      'the reporting database is postgres://report:S3cretPw@db.internal/prod',
    ]);
    expect(secret.code).toBe(2);
    expect(`${secret.stdout}${secret.stderr}`).not.toContain('S3cretPw');

    const listed = await cli(['memory', 'list', '--user', 'ann', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    const doc = JSON.parse(listed.stdout);
    expect(doc.memories).toEqual([]);
    expect(doc.pending).toEqual([
      expect.objectContaining({
        kind: 'context',
        text: 'The fiscal year starts in April',
        expiresOn: '2099-12-31',
        status: 'pending',
      }),
    ]);
    const text = await cli(['memory', 'list', '--user', 'ann']);
    expect(text.stdout).toMatch(/pending\s+context\s+The fiscal year starts in April/);
    const audit = await cli(['memory', 'audit', '--user', 'ann']);
    expect(audit.code, audit.stdout).toBe(0);

    // The server comes back on the same address: the next command applies the queue.
    server = await startScriptedOllama({ port, chat: () => JSON.stringify({ sql: null }) });
    const after = await cli(['memory', 'list', '--user', 'ann', '--json']);
    expect(after.code, after.stderr).toBe(0);
    const applied = JSON.parse(after.stdout);
    expect(applied.pending).toEqual([]);
    expect(applied.memories).toEqual([
      expect.objectContaining({ text: 'The fiscal year starts in April', expiresOn: '2099-12-31' }),
    ]);
  });
});
