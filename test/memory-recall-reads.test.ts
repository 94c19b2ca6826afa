/**
 * `recallReads` (issue 15): recall's four reads of a scope in one statement must return exactly
 * what the `list`/`search` calls it stands for return — on both store engines, on the exact and the
 * approximate search path, and never a row of another scope (another user, a team of the same name).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryKind, MemoryOp, MemoryScope, RecallReadsQuery } from '../src/core/memory.js';
import type { SearchPath, SqlMemoryStore } from '../src/memory/store/index.js';
import { contentWords } from '../src/memory/text.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';

const DIMS = 8;
const MODEL = 'all-minilm';
const RECALLED: MemoryKind[] = ['term', 'metric', 'entity', 'example', 'context'];
const PAST = '2001-01-01T00:00:00.000Z';
const FUTURE = '2999-01-01T00:00:00.000Z';

function add(
  text: string,
  seed: number,
  kind: MemoryKind,
  extra: { tables?: string[]; pinned?: boolean; expiresAt?: string; sql?: string } = {},
): MemoryOp {
  return { op: 'add', memory: { kind, text, ...extra }, embedding: testVector(seed, DIMS) };
}

/** A scope's memories: every part of recall has rows it must return and rows it must not. */
function scopeMemories(tag: string): MemoryOp[] {
  return [
    add(`${tag} always show me customers from India`, 1, 'preference'),
    add(`${tag} only paid orders`, 2, 'preference', { tables: ['public.orders'] }),
    add(`${tag} only active products`, 3, 'preference', { tables: ['public.products'] }),
    add(`${tag} only this year`, 4, 'preference', { expiresAt: PAST }),
    add(`${tag} only this week`, 5, 'preference', { expiresAt: FUTURE, tables: ['PUBLIC.Orders'] }),
    add(`By high value order I mean total amount over 10000 ${tag}`, 6, 'term'),
    add(`By churned customer I mean no order in 90 days ${tag}`, 7, 'term'),
    add(`By big order I mean over 500 ${tag}`, 8, 'term', { expiresAt: PAST }),
    add(`${tag} revenue is net of refunds`, 9, 'metric', { pinned: true }),
    add(`${tag} fiscal year starts in April`, 10, 'context', { pinned: true, expiresAt: PAST }),
    add(`${tag} top customers`, 11, 'example', { sql: 'SELECT 1' }),
    add(`${tag} acme is a customer`, 12, 'entity'),
  ];
}

/** The calls `recallReads` stands for (see `RecallReadsQuery`). */
async function separately(store: SqlMemoryStore, scope: MemoryScope, query: RecallReadsQuery) {
  return {
    preferences: await store.list(scope, {
      kinds: ['preference'],
      statuses: ['active'],
      tablesAny: query.preferences.tablesAny,
      unexpired: true,
      limit: query.preferences.limit,
    }),
    definitions: query.definitions
      ? await store.list(scope, {
          kinds: query.definitions.kinds,
          statuses: ['active'],
          termWordsWithin: query.definitions.termWordsWithin,
          unexpired: true,
        })
      : [],
    similar: await store.search(scope, query.search),
    pinned: await store.list(scope, { statuses: ['active'], pinned: true, unexpired: true }),
  };
}

function queries(): RecallReadsQuery[] {
  const question = 'customers who have a high order value';
  const base = (seed: number) => ({ embedding: testVector(seed, DIMS, 0.3), kinds: RECALLED });
  return [
    {
      preferences: { tablesAny: ['public.orders', 'public.customers'], limit: 20 },
      definitions: { kinds: RECALLED, termWordsWithin: contentWords(question) },
      search: { ...base(6), topK: 5, minSimilarity: 0.3 },
    },
    {
      preferences: { tablesAny: [], limit: 20 },
      search: { ...base(11), topK: 3 },
    },
    {
      preferences: { tablesAny: ['public.products'], limit: 1 },
      definitions: { kinds: ['term'], termWordsWithin: contentWords('churned customer') },
      search: { ...base(2), topK: 0 },
    },
    {
      preferences: { tablesAny: ['public.orders'], limit: 0 },
      definitions: { kinds: RECALLED, termWordsWithin: ['nothing'] },
      search: { embedding: testVector(9, DIMS), topK: 12, minSimilarity: 0.99 },
    },
    {
      preferences: { tablesAny: ['public.orders'], limit: 20 },
      search: { embedding: testVector(3, DIMS), topK: 20 },
    },
  ];
}

describe.each(STORE_ENGINES)('recallReads on %s', (engine) => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;
  const me: MemoryScope = { user: 'rr-u' };

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
    await store.write(me, scopeMemories('mine'));
    // The same texts and vectors in other scopes: another user, and a team of the same name.
    await store.write({ user: 'rr-other' }, scopeMemories('other'));
    await store.write({ team: 'rr-u' }, scopeMemories('team'));
    // A superseded and a deleted memory of the scope are never recalled.
    const [gone] = await store.write(me, [add('mine deleted preference', 13, 'preference')]);
    await store.write(me, [{ op: 'delete', id: gone!.memory!.id }]);
    const [old] = await store.write(me, [add('By old term I mean x mine', 14, 'term')]);
    await store.write(me, [
      {
        op: 'supersede',
        target: old!.memory!.id,
        memory: { kind: 'term', text: 'By old term I mean y mine' },
        embedding: testVector(15, DIMS),
      },
    ]);
  });
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('returns exactly what the separate list and search calls return (exact path), only of its scope', async () => {
    for (const query of queries()) {
      const merged = await store.recallReads(me, query);
      expect(merged).toEqual(await separately(store, me, query));
      const all = [...merged.preferences, ...merged.definitions, ...merged.similar, ...merged.pinned];
      for (const memory of all) {
        expect(memory.scope).toEqual(me);
        expect(memory.text).toMatch(/mine/);
        expect(memory.status).toBe('active');
      }
    }
    // The first query finds something in every part, so the comparison above is not of empty lists.
    const first = await store.recallReads(me, queries()[0]!);
    expect(first.preferences.map((m) => m.text)).toEqual([
      'mine always show me customers from India',
      'mine only paid orders',
      'mine only this week',
    ]);
    expect(first.definitions.map((m) => m.text)).toEqual([
      'By high value order I mean total amount over 10000 mine',
    ]);
    expect(first.similar.length).toBeGreaterThan(0);
    expect(first.similar[0]!.text).toBe('By high value order I mean total amount over 10000 mine');
    expect(first.pinned.map((m) => m.text)).toEqual(['mine revenue is net of refunds']);
    // The team of the same name reads its own rows only.
    const team = await store.recallReads({ team: 'rr-u' }, queries()[0]!);
    expect(team).toEqual(await separately(store, { team: 'rr-u' }, queries()[0]!));
    expect(team.preferences.map((m) => m.text)).toEqual([
      'team always show me customers from India',
      'team only paid orders',
      'team only this week',
    ]);
  });

  it('on the approximate path searches apart and still returns what search returns', async () => {
    const paths: SearchPath[] = [];
    const approximate = harness.open({
      search: { exactUpTo: 0, minShare: 0 },
      onSearchPath: (p) => paths.push(p),
    });
    if (engine === 'pglite') await store.close(); // one process per embedded data directory
    try {
      await approximate.init({ model: MODEL, dimensions: DIMS });
      const query = queries()[4]!;
      paths.length = 0;
      const merged = await approximate.recallReads(me, query);
      const mergedPaths = [...paths];
      expect(merged).toEqual(await separately(approximate, me, query));
      expect(mergedPaths).toEqual(paths.slice(mergedPaths.length)); // same path as the plain search
      expect(merged.similar.every((m) => m.scope.user === 'rr-u')).toBe(true);
    } finally {
      await approximate.close();
      if (engine === 'pglite') {
        store = harness.open();
        await store.init({ model: MODEL, dimensions: DIMS });
      }
    }
  });

  it('checks its arguments as search and list do', async () => {
    const query = queries()[1]!;
    await expect(
      store.recallReads(me, { ...query, search: { ...query.search, topK: -1 } }),
    ).rejects.toMatchObject({
      code: 'usage',
    });
    await expect(
      store.recallReads(me, { ...query, preferences: { tablesAny: [], limit: 1.5 } }),
    ).rejects.toMatchObject({ code: 'usage' });
    const wrongDims = await store.search(me, { embedding: [1, 0] }).catch((e: { code: string }) => e.code);
    expect(typeof wrongDims).toBe('string');
    await expect(store.recallReads(me, { ...query, search: { embedding: [1, 0] } })).rejects.toMatchObject({
      code: wrongDims,
    });
    await expect(store.recallReads({ user: '' }, query)).rejects.toMatchObject({ code: 'usage' });
  });
});
