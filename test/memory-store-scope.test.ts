/**
 * The scope rule of the memory store, checked on the statements it really runs:
 * - every public method is called for one user while other scopes hold data, and every statement
 *   that names a table of user data must bind that user's scope key and id (a short, named list of
 *   cross-scope statements is allowed: the queue's scope listing, its start-up reset); a method
 *   added to the store without a call here fails the test;
 * - hostile: user B cannot list, claim, complete (delete), fail or apply user A's pending write,
 *   through the store or the service, and applying B's queue leaves A's waiting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryOp, MemoryScope } from '../src/core/memory.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import { MemoryService, type PendingTeach } from '../src/memory/service.js';
import { createMemoryStore, type SqlClient, type SqlMemoryStore } from '../src/memory/store/index.js';
import { scopeRef } from '../src/memory/store/scope.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import type { SqlSession } from '../src/memory/store/sql-client.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';
import { freshPgliteDataDir } from './support/pglite-template.js';

const DIMS = 8;
const MODEL = 'all-minilm';
const USER_TABLES =
  /\bsqlrecall_(memories|memory_history|conversations|conversation_turns|pending_writes|memory_settings)\b/;

/** Statements allowed to run without a scope, each with the reason it needs none. */
const CROSS_SCOPE: { pattern: RegExp; why: string }[] = [
  {
    pattern: /^SELECT scope_user, scope_team, min\(created_at\) AS oldest FROM sqlrecall_pending_writes/,
    why: 'pendingScopes: which scopes have queued writes, no payload',
  },
  {
    pattern: /pg_relation_size\(c\.oid\)|^ANALYZE /,
    why: 'planner statistics of the embedded store: catalog sizes, no rows',
  },
];

interface Recorded {
  text: string;
  params: unknown[];
}

/** `client` whose statements (in and out of transactions) are recorded while `on` is set. */
function recording(client: SqlClient): { client: SqlClient; log: Recorded[]; on: { value: boolean } } {
  const log: Recorded[] = [];
  const on = { value: false };
  const record = (text: string, params: unknown[] | undefined) => {
    if (on.value) log.push({ text: text.replace(/\s+/g, ' ').trim(), params: params ?? [] });
  };
  const session = (inner: SqlSession): SqlSession => ({
    query: (text, params) => {
      record(text, params);
      return inner.query(text, params);
    },
  });
  return {
    log,
    on,
    client: {
      engine: client.engine,
      displayName: client.displayName,
      query: (text, params) => {
        record(text, params);
        return client.query(text, params);
      },
      transaction: (fn) => client.transaction((tx) => fn(session(tx))),
      close: () => client.close(),
      ...(client.ownsStore ? { ownsStore: () => client.ownsStore!() } : {}),
    },
  };
}

/** A deterministic embedder (no model server): the test vector of each text's length. */
const fakeEmbedder: EmbeddingModel = {
  id: MODEL,
  dimensions: async () => DIMS,
  embed: async (texts) => texts.map((t) => testVector(t.length, DIMS)),
};

const add = (text: string, seed: number, kind: 'preference' | 'term' = 'preference'): MemoryOp => ({
  op: 'add',
  memory: { kind, text, tables: ['public.orders'] },
  embedding: testVector(seed, DIMS),
});

describe('every statement on user data names the caller’s scope', () => {
  let store: SqlMemoryStore;
  let rec: ReturnType<typeof recording>;
  const called = new Set<string>();
  const alice: MemoryScope = { user: 'alice' };

  beforeAll(async () => {
    rec = recording(createPgliteClient(freshPgliteDataDir('sqlrecall-scope-rule-')));
    const raw = createMemoryStore({ client: rec.client });
    await raw.init({ model: MODEL, dimensions: DIMS });
    // Other scopes hold data of every kind, so a statement missing its scope would touch them.
    for (const other of [{ user: 'bob' }, { team: 'alice' }] as MemoryScope[]) {
      await raw.write(other, [add('Only orders from India', 1), add('Loyal means two orders', 2, 'term')]);
      await raw.appendTurn(other, 'c1', { question: 'how many orders?' });
      await raw.enqueuePending(other, { type: 'other' });
      await raw.setEnabled(other, true);
    }
    // Every method call is counted, so a method missing from the scenario below is noticed.
    store = new Proxy(raw, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (typeof value !== 'function' || typeof name !== 'string') return value;
        return (...args: unknown[]) => {
          called.add(name);
          return value.apply(target, args);
        };
      },
    });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
  });

  it('runs every method for one user; each statement binds that user’s scope key and id', async () => {
    rec.on.value = true;
    const [first] = await store.write(alice, [
      add('Only orders from Chile', 3),
      add('Big means over 100', 4, 'term'),
    ]);
    const id = first?.memory?.id as string;
    await store.write(alice, [
      {
        op: 'update',
        id,
        memory: { kind: 'preference', text: 'Only orders from Peru' },
        embedding: testVector(5, DIMS),
      },
    ]);
    const [sup] = await store.write(alice, [
      {
        op: 'supersede',
        target: id,
        memory: { kind: 'preference', text: 'Orders from Peru or Chile' },
        embedding: testVector(6, DIMS),
      },
    ]);
    const newer = sup?.memory?.id as string;
    await store.write(alice, [
      { op: 'pin', id: newer, pinned: true },
      { op: 'delete', id: newer },
      { op: 'restore', id: newer },
      { op: 'noop', text: 'nothing', reason: 'test' },
    ]);
    await store.search(alice, { embedding: testVector(3, DIMS), topK: 3 });
    await store.recallReads(alice, {
      preferences: { tablesAny: ['public.orders'], limit: 5 },
      definitions: { kinds: ['term'], termWordsWithin: ['big'] },
      search: { embedding: testVector(4, DIMS), topK: 3 },
    });
    await store.list(alice, {
      statuses: ['active', 'deleted'],
      kinds: ['preference'],
      tablesAny: ['public.orders'],
      termWordsWithin: ['big'],
      pinned: true,
      unexpired: true,
      textWordsAny: ['peru'],
      limit: 10,
    });
    await store.get(alice, newer);
    await store.history(alice);
    await store.history(alice, newer);
    await store.markApplied(alice, [newer]);
    await store.appendTurn(alice, 'c1', { question: 'revenue?', sql: 'SELECT 1', rowCount: 1 });
    await store.recentTurns(alice, 'c1');
    await store.setSummary(alice, 'c1', 'about revenue');
    await store.getConversation(alice, 'c1');
    await store.listConversations(alice);
    await store.lastConversation(alice);
    await store.renameConversation(alice, 'c1', 'Revenue');
    await store.deleteConversation(alice, 'c1');
    const pendingId = await store.enqueuePending(alice, { type: 'x' });
    const second = await store.enqueuePending(alice, { type: 'y' });
    await store.pendingScopes();
    await store.takePending(alice);
    await store.failPending(alice, pendingId, 'boom', { retry: true });
    await store.completePending(alice, pendingId);
    await store.listPending(alice);
    await store.withdrawPending(alice, second);
    await store.completePending(alice, second);
    await store.setEnabled(alice, true);
    await store.isEnabled(alice);
    const doc = await store.export(alice);
    await store.import(alice, doc, fakeEmbedder.embed);
    await store.purge(alice, [newer], []);
    await store.deleteAll(alice);
    await store.deleteAll(alice, { purge: true });
    rec.on.value = false;

    // Methods whose statements are not one scope's, each named: set-up, re-embedding every scope.
    const notPerScope = new Set(['init', 'embeddingInfo', 'sql', 'reembed', 'close']);
    const methods = Object.keys(store).filter(
      (name) => typeof (store as unknown as Record<string, unknown>)[name] === 'function',
    );
    expect(methods.filter((m) => !called.has(m) && !notPerScope.has(m))).toEqual([]);

    const ref = scopeRef(alice);
    const onUserData = rec.log.filter((s) => USER_TABLES.test(s.text));
    expect(onUserData.length).toBeGreaterThan(40);
    const unscoped = onUserData.filter((s) => {
      if (CROSS_SCOPE.some((c) => c.pattern.test(s.text))) return false;
      const flat = s.params.flat();
      return !(s.text.includes('scope_key') && flat.includes(ref.key) && flat.includes(ref.id));
    });
    expect(unscoped.map((s) => s.text.slice(0, 160))).toEqual([]);
    // The pending-write queue in particular: every statement on it but the scope listing is scoped.
    const onQueue = onUserData.filter((s) => s.text.includes('sqlrecall_pending_writes'));
    expect(onQueue.length).toBeGreaterThanOrEqual(7);
  }, 120_000);

  it('the other scopes kept their data through all of it', async () => {
    for (const other of [{ user: 'bob' }, { team: 'alice' }] as MemoryScope[]) {
      expect((await store.list(other)).map((m) => m.text).sort()).toEqual([
        'Loyal means two orders',
        'Only orders from India',
      ]);
      expect(await store.listConversations(other)).toHaveLength(1);
      expect(await store.listPending(other)).toHaveLength(1);
    }
  });
});

describe.each(STORE_ENGINES)('pending writes across users on %s (hostile)', (engine) => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;
  const a: MemoryScope = { user: 'pend-a' };
  const b: MemoryScope = { user: 'pend-b' };
  const teach = (text: string): PendingTeach => ({
    type: 'teach',
    kind: 'context',
    text,
    sql: null,
    expiresAt: null,
    expiresOn: null,
    pinned: false,
  });

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('user B cannot list, claim, delete, fail or apply user A’s pending write', async () => {
    const idA = await store.enqueuePending(a, teach('Fiscal year starts in April'));
    const idB = await store.enqueuePending(b, teach('Amounts are in euros'));

    expect((await store.listPending(b)).map((p) => p.id)).toEqual([idB]);
    expect(await store.completePending(b, idA)).toBe(false);
    expect(await store.failPending(b, idA, 'hijacked', { retry: false })).toBe(false);
    const claimed = await store.takePending(b, { limit: 100, staleAfterMs: 0 });
    expect(claimed.map((p) => p.id)).toEqual([idB]);
    await store.failPending(b, idB, 'model down', { retry: true });
    const [untouched] = await store.listPending(a);
    expect([untouched?.id, untouched?.status, untouched?.attempts, untouched?.error]).toEqual([
      idA,
      'pending',
      0,
      null,
    ]);

    // Applying B's queue (a user's own command) teaches B's fact in B's scope only.
    const service = new MemoryService({ store, embedder: fakeEmbedder });
    expect(await service.recoverPending({ scope: b })).toEqual({ applied: 1, failed: 0 });
    expect((await store.list(b)).map((m) => m.text)).toEqual(['Amounts are in euros']);
    expect(await store.list(a)).toEqual([]);
    expect((await store.listPending(a)).map((p) => p.id)).toEqual([idA]);
    // Applying A's write with B's scope neither deletes it nor writes into A's memories.
    await service.applyPendingTeach(idA, b, teach('Fiscal year starts in April'));
    expect((await store.listPending(a)).map((p) => [p.id, p.status])).toEqual([[idA, 'pending']]);
    expect(await store.list(a)).toEqual([]);

    // A process applying every scope's queue (start-up) applies A's write in A's scope.
    expect(await service.recoverPending()).toEqual({ applied: 1, failed: 0 });
    expect((await store.list(a)).map((m) => m.text)).toEqual(['Fiscal year starts in April']);
    expect(await store.listPending(a)).toEqual([]);
  }, 60_000);
});
