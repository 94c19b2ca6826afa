/**
 * User lifecycle of multi-user `serve` (issue 10, item 6), through the CLI on the embedded memory
 * store and on the server-style connection: `users remove` archives the account's memories, a new
 * account of the same name starts empty, `users add NAME --restore-memories` brings them back and
 * says what it restored; names that collide after NFKC + case folding, mix scripts or only differ by
 * confusable characters are refused with a reason.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confusableSkeleton, scriptsOf, userNameConflict, userNameKey } from '../src/app/user-names.js';
import type { MemoryScope } from '../src/core/memory.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';

const DIMS = 8;

describe('user names', () => {
  it('normalizes with NFKC and case folding', () => {
    expect(userNameKey('ＡＬＩＣＥ')).toBe('alice');
    expect(userNameKey('Bob')).toBe('bob');
    expect(confusableSkeleton('аlice')).toBe('alice');
    expect(confusableSkeleton('b0b')).toBe('bob');
  });

  it('tells scripts apart', () => {
    expect([...scriptsOf('alice')]).toEqual(['Latin']);
    expect([...scriptsOf('аlice')].sort()).toEqual(['Cyrillic', 'Latin']);
    expect([...scriptsOf('jo.smith-2')]).toEqual(['Latin']);
  });

  it('refuses mixed scripts, case/width twins and confusables, and accepts distinct names', () => {
    expect(userNameConflict('аlice', [])).toMatch(/mixes scripts \(Cyrillic and Latin\)/);
    expect(userNameConflict('ａｌｉｃｅ', ['alice'])).toMatch(/same as the existing user "alice"/);
    expect(userNameConflict('BOB', ['bob'])).toMatch(/same as the existing user "bob"/);
    expect(userNameConflict('аре', ['ape'])).toMatch(/looks like the existing user "ape"/);
    expect(userNameConflict('b0b', ['bob'])).toMatch(/looks like/);
    expect(userNameConflict('carol', ['alice', 'bob'])).toBeUndefined();
    expect(userNameConflict('иван', ['alice'])).toBeUndefined();
    expect(userNameConflict('山田たろう', [])).toBeUndefined();
  });
});

describe.each(STORE_ENGINES)('user lifecycle (%s)', (engine) => {
  let harness: StoreHarness;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-users-'));
    env = {
      SQLRECALL_HOME: home,
      MEMORY_DATABASE_URL: harness.url ?? `pglite:${harness.dataDir}`,
    };
  }, 60_000);

  afterAll(async () => {
    await harness?.dispose();
    rmSync(home, { recursive: true, force: true });
  });

  const cli = (...args: string[]) => runCliInProcess(['users', ...args], { env });

  async function withStore<T>(use: (store: ReturnType<StoreHarness['open']>) => Promise<T>): Promise<T> {
    const store = harness.open();
    try {
      await store.init({ model: 'all-minilm', dimensions: DIMS });
      return await use(store);
    } finally {
      await store.close();
    }
  }

  const ghost: MemoryScope = { user: 'ghost' };

  it('a removed account is archived, a new one starts empty, --restore-memories brings it back', async () => {
    expect((await cli('add', 'ghost')).code).toBe(0);
    await withStore(async (store) => {
      await store.write(ghost, [
        { op: 'add', memory: { kind: 'term', text: 'ghost term' }, embedding: testVector(1, DIMS) },
        {
          op: 'add',
          memory: { kind: 'preference', text: 'ghost likes tables' },
          embedding: testVector(2, DIMS),
        },
      ]);
      expect(await store.list(ghost)).toHaveLength(2);
    });

    const removed = await cli('remove', 'ghost');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toMatch(/Their 2 memories .* archived/);

    const again = await cli('add', 'ghost');
    expect(again.code, again.stderr).toBe(0);
    await withStore(async (store) => {
      expect(await store.list(ghost)).toEqual([]);
    });

    expect((await cli('remove', 'ghost')).code).toBe(0); // the empty account: nothing to restore from it
    const restored = await cli('add', 'ghost', '--restore-memories');
    expect(restored.code, restored.stderr).toBe(0);
    // The most recently removed account held nothing; the older archive stays archived.
    expect(restored.stdout).toMatch(/No archived memories|Restored 0 memories/);

    await withStore(async (store) => {
      expect(await store.list(ghost)).toEqual([]);
      await store.write(ghost, [
        { op: 'add', memory: { kind: 'term', text: 'second term' }, embedding: testVector(3, DIMS) },
        { op: 'add', memory: { kind: 'term', text: 'third term' }, embedding: testVector(4, DIMS) },
        { op: 'add', memory: { kind: 'preference', text: 'short answers' }, embedding: testVector(5, DIMS) },
      ]);
    });
    expect((await cli('remove', 'ghost')).code).toBe(0);
    const back = await cli('--json', 'add', 'ghost', '--restore-memories');
    expect(back.code, back.stderr).toBe(0);
    const doc = JSON.parse(back.stdout) as { restored: { memories: number; kinds: Record<string, number> } };
    expect(doc.restored.memories).toBe(3);
    expect(doc.restored.kinds).toEqual({ preference: 1, term: 2 });
    await withStore(async (store) => {
      expect((await store.list(ghost)).map((m) => m.text).sort()).toEqual([
        'second term',
        'short answers',
        'third term',
      ]);
    });
  }, 120_000);

  it('refuses names that collide, mix scripts or are confusable, with the reason', async () => {
    expect((await cli('add', 'alice')).code).toBe(0);
    expect((await cli('add', 'bob')).code).toBe(0);
    const cases: [string, RegExp][] = [
      ['аlice', /mixes scripts/],
      ['ａｌｉｃｅ', /exists already/],
      ['BOB', /exists already/],
      ['b0b', /looks like the existing user "bob"/],
    ];
    for (const [name, reason] of cases) {
      const run = await cli('add', name);
      expect(run.code, name).not.toBe(0);
      expect(run.stderr, name).toMatch(reason);
      expect(run.stderr, name).not.toMatch(/\n\s+at /); // no stack trace
    }
    const list = await cli('--json', 'list');
    const names = (JSON.parse(list.stdout) as { users: { user: string }[] }).users.map((u) => u.user);
    expect(names).toEqual(expect.arrayContaining(['alice', 'bob']));
    expect(names).not.toContain('BOB');
    // Removing by a case/width variant of the name finds the stored account.
    expect((await cli('remove', 'ＢＯＢ')).code).toBe(0);
    const after = await cli('--json', 'list');
    expect(
      (JSON.parse(after.stdout) as { users: { user: string }[] }).users.map((u) => u.user),
    ).not.toContain('bob');
  }, 120_000);
});
