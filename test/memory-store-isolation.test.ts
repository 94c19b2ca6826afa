/**
 * Scope isolation of the memory store, on embedded PGlite and on the server-style connection:
 * - a fast-check property run: 24 scopes (users and teams, hostile ids included), 2,000 random ops
 *   over add/update/supersede/delete/restore/search/list/get/history/export, compared after every
 *   step with an in-memory model — no result may ever contain another scope's memory, and every
 *   result must equal what the model predicts;
 * - hostile scope ids stored and searched literally; `deleteAll` of one scope touches no other;
 * - reading/changing another scope's memory by id behaves exactly like an unknown id;
 * - conversations: random appends and reads with the SAME conversation ids in many scopes, on the
 *   store and on the in-process fallback used when memory is off (issue 10, point 1), never mix.
 */
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { Memory, MemoryKind, MemoryOp, MemoryScope, MemoryStatus } from '../src/core/memory.js';
import { KEPT_TURNS, LocalConversations } from '../src/memory/conversation.js';
import { contentHash, createMemoryStore, type SqlMemoryStore } from '../src/memory/store/index.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

const DIMS = 8;
const MODEL = 'all-minilm';

const HOSTILE_IDS = [
  "'",
  '"',
  '%',
  '_',
  '*',
  "' OR '1'='1",
  ' alice ',
  'alice',
  'ALICE',
  '\\',
  'bob; DROP TABLE sqlrecall_memories; --',
  'a'.repeat(10_000),
  randomBytes(7_500).toString('base64'), // 10,000 incompressible characters
  'ünïcødé 🧠',
];

function scopeName(scope: MemoryScope): string {
  const id = scope.user ?? scope.team ?? '';
  return `${scope.user !== undefined ? 'user' : 'team'}:${id.length > 40 ? `${id.slice(0, 20)}…(${id.length})` : id}`;
}

function sameScope(a: MemoryScope, b: MemoryScope): boolean {
  return a.user === b.user && a.team === b.team;
}

async function expectError(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

// ---- the model -------------------------------------------------------------------------------

interface ModelMemory {
  id: string;
  scopeIndex: number;
  kind: MemoryKind;
  text: string;
  hash: string;
  status: MemoryStatus;
  vector: number[];
}

const WORDS = ['india', 'delivered', 'wholesale', 'revenue', 'tpv', 'churn', 'vip', 'refund'];
const KINDS: MemoryKind[] = ['preference', 'term', 'metric'];

function textOf(textIndex: number): string {
  return `${WORDS[textIndex % WORDS.length]} ${Math.floor(textIndex / WORDS.length)}`;
}

function vectorOf(text: string): number[] {
  let seed = 0;
  for (const char of text) seed = (seed * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  return testVector(seed, DIMS);
}

function cosine(a: number[], b: number[]): number {
  return a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
}

type Action =
  | { type: 'add'; scope: number; text: number; kind: number }
  | { type: 'update' | 'supersede'; scope: number; pick: number; text: number; kind: number }
  | { type: 'delete' | 'restore' | 'get' | 'history'; scope: number; pick: number }
  | { type: 'search'; scope: number; text: number; topK: number }
  | { type: 'list' | 'export'; scope: number };

function actionArbitrary(scopes: number): fc.Arbitrary<Action> {
  const scope = fc.nat({ max: scopes - 1 });
  const text = fc.nat({ max: 39 });
  const kind = fc.nat({ max: KINDS.length - 1 });
  const pick = fc.nat({ max: 10_000 });
  return fc.oneof(
    { weight: 6, arbitrary: fc.record({ type: fc.constant('add' as const), scope, text, kind }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('update' as const), scope, pick, text, kind }) },
    { weight: 2, arbitrary: fc.record({ type: fc.constant('supersede' as const), scope, pick, text, kind }) },
    {
      weight: 2,
      arbitrary: fc.record({ type: fc.constantFrom('delete' as const, 'restore' as const), scope, pick }),
    },
    {
      weight: 2,
      arbitrary: fc.record({ type: fc.constantFrom('get' as const, 'history' as const), scope, pick }),
    },
    {
      weight: 3,
      arbitrary: fc.record({
        type: fc.constant('search' as const),
        scope,
        text,
        topK: fc.integer({ min: 1, max: 8 }),
      }),
    },
    { weight: 2, arbitrary: fc.record({ type: fc.constantFrom('list' as const, 'export' as const), scope }) },
  );
}

/** Runs `actions` against the store and the model, checking every answer. */
async function runAgainstModel(
  store: SqlMemoryStore,
  scopes: MemoryScope[],
  actions: Action[],
): Promise<void> {
  const memories: ModelMemory[] = [];
  const byId = new Map<string, ModelMemory>();
  const historyCount = new Map<string, number>();
  const ownIds = (scopeIndex: number) =>
    new Set(memories.filter((m) => m.scopeIndex === scopeIndex).map((m) => m.id));
  const activeWithHash = (scopeIndex: number, hash: string) =>
    memories.find((m) => m.scopeIndex === scopeIndex && m.status === 'active' && m.hash === hash);
  const pickId = (pick: number): string =>
    memories.length === 0 || pick % 7 === 0
      ? '11111111-2222-4333-8444-555555555555'
      : (memories[pick % memories.length]?.id as string);
  const assertOwn = (scopeIndex: number, found: Memory[], what: string) => {
    const own = ownIds(scopeIndex);
    for (const memory of found) {
      if (!sameScope(memory.scope, scopes[scopeIndex] as MemoryScope) || !own.has(memory.id)) {
        throw new Error(
          `${what} for ${scopeName(scopes[scopeIndex] as MemoryScope)} returned ${memory.id} of ${scopeName(memory.scope)}`,
        );
      }
    }
  };
  const bumpHistory = (scopeIndex: number, by = 1) =>
    historyCount.set(String(scopeIndex), (historyCount.get(String(scopeIndex)) ?? 0) + by);

  for (const [step, action] of actions.entries()) {
    const scope = scopes[action.scope] as MemoryScope;
    const where = `step ${step} ${action.type} on ${scopeName(scope)}`;
    const write = async (op: MemoryOp) => {
      try {
        return { result: (await store.write(scope, [op]))[0] };
      } catch (error) {
        if (error instanceof SqlrecallError && error.code === 'not_found') return { notFound: true as const };
        throw error;
      }
    };
    switch (action.type) {
      case 'add': {
        const text = textOf(action.text);
        const kind = KINDS[action.kind] as MemoryKind;
        const hash = contentHash(kind, text);
        const dup = activeWithHash(action.scope, hash);
        const { result } = await write({ op: 'add', memory: { kind, text }, embedding: vectorOf(text) });
        if (dup) expect(result?.memory?.id, where).toBe(dup.id);
        else {
          const memory = result?.memory as Memory;
          expect(result?.duplicate, where).toBeUndefined();
          const model: ModelMemory = {
            id: memory.id,
            scopeIndex: action.scope,
            kind,
            text,
            hash,
            status: 'active',
            vector: vectorOf(text),
          };
          memories.push(model);
          byId.set(model.id, model);
        }
        assertOwn(action.scope, result?.memory ? [result.memory] : [], where);
        bumpHistory(action.scope);
        break;
      }
      case 'update':
      case 'supersede': {
        const id = pickId(action.pick);
        const target = byId.get(id);
        const text = textOf(action.text);
        const kind = KINDS[action.kind] as MemoryKind;
        const hash = contentHash(kind, text);
        const memory = { kind, text };
        const outcome =
          action.type === 'update'
            ? await write({ op: 'update', id, memory, embedding: vectorOf(text) })
            : await write({ op: 'supersede', target: id, memory, embedding: vectorOf(text) });
        if (!target || target.scopeIndex !== action.scope || target.status !== 'active') {
          expect(outcome, where).toEqual({ notFound: true });
          break;
        }
        const result = outcome.result;
        const dup = activeWithHash(action.scope, hash);
        if (action.type === 'update') {
          bumpHistory(action.scope);
          if (dup && dup.id !== target.id) expect(result?.duplicate, where).toBe(true);
          else Object.assign(target, { text, kind, hash, vector: vectorOf(text) });
        } else if (hash === target.hash) {
          bumpHistory(action.scope);
          expect(result?.duplicate, where).toBe(true);
        } else {
          target.status = 'superseded';
          bumpHistory(action.scope);
          if (dup) expect(result?.memory?.id, where).toBe(dup.id);
          else {
            const created: ModelMemory = {
              id: result?.memory?.id as string,
              scopeIndex: action.scope,
              kind,
              text,
              hash,
              status: 'active',
              vector: vectorOf(text),
            };
            memories.push(created);
            byId.set(created.id, created);
            bumpHistory(action.scope);
          }
        }
        assertOwn(action.scope, result?.memory ? [result.memory] : [], where);
        break;
      }
      case 'delete':
      case 'restore': {
        const id = pickId(action.pick);
        const target = byId.get(id);
        const outcome = await write({ op: action.type, id });
        if (!target || target.scopeIndex !== action.scope) {
          expect(outcome, where).toEqual({ notFound: true });
          break;
        }
        bumpHistory(action.scope);
        if (action.type === 'delete') target.status = 'deleted';
        else if (target.status !== 'active' && !activeWithHash(action.scope, target.hash))
          target.status = 'active';
        assertOwn(action.scope, outcome.result?.memory ? [outcome.result.memory] : [], where);
        break;
      }
      case 'get': {
        const id = pickId(action.pick);
        const target = byId.get(id);
        const found = await store.get(scope, id);
        if (!target || target.scopeIndex !== action.scope) expect(found, where).toBeNull();
        else
          expect([found?.id, found?.text, found?.status], where).toEqual([
            target.id,
            target.text,
            target.status,
          ]);
        break;
      }
      case 'history': {
        const id = pickId(action.pick);
        const target = byId.get(id);
        const entries = await store.history(scope, id);
        if (!target || target.scopeIndex !== action.scope) expect(entries, where).toEqual([]);
        else
          expect(
            entries.every((e) => e.memoryId === id),
            where,
          ).toBe(true);
        const all = await store.history(scope);
        const own = ownIds(action.scope);
        expect(
          all.every((e) => own.has(e.memoryId)),
          where,
        ).toBe(true);
        expect(all.length, where).toBe(historyCount.get(String(action.scope)) ?? 0);
        break;
      }
      case 'search': {
        const query = vectorOf(textOf(action.text));
        const hits = await store.search(scope, { embedding: query, topK: action.topK });
        assertOwn(action.scope, hits, where);
        // Recall's merged read (one statement per scope) returns the same hits and only own rows.
        const reads = await store.recallReads(scope, {
          preferences: { tablesAny: [], limit: 1000 },
          search: { embedding: query, topK: action.topK },
        });
        expect(reads.similar, where).toEqual(hits);
        for (const part of [reads.preferences, reads.definitions, reads.pinned])
          assertOwn(action.scope, part, where);
        const expected = memories
          .filter((m) => m.scopeIndex === action.scope && m.status === 'active')
          .map((m) => cosine(m.vector, query))
          .sort((a, b) => b - a)
          .slice(0, action.topK);
        expect(hits.length, where).toBe(expected.length);
        for (const [i, hit] of hits.entries())
          expect(hit.similarity, where).toBeCloseTo(expected[i] as number, 5);
        break;
      }
      case 'list': {
        const listed = await store.list(scope, { statuses: ['active', 'superseded', 'deleted'] });
        assertOwn(action.scope, listed, where);
        const expected = memories.filter((m) => m.scopeIndex === action.scope);
        expect(
          listed.map((m) => [m.id, m.status, m.text]),
          where,
        ).toEqual(expected.map((m) => [m.id, m.status, m.text]));
        break;
      }
      case 'export': {
        const doc = await store.export(scope);
        assertOwn(action.scope, doc.memories, where);
        expect(doc.scope, where).toEqual(scope);
        const own = ownIds(action.scope);
        expect(doc.memories.length, where).toBe(own.size);
        expect(
          doc.history.every((e) => own.has(e.memoryId)),
          where,
        ).toBe(true);
        break;
      }
    }
  }
}

describe.each(STORE_ENGINES)('memory scope isolation on %s', (engine) => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
  });
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('2,000 random operations over 24 scopes never leak a memory across scopes', async () => {
    const scopes: MemoryScope[] = [
      ...Array.from({ length: 14 }, (_, i) => ({ user: `prop-user-${i}` })),
      { user: '*' },
      { team: '*' },
      { user: '%' },
      { user: "' OR '1'='1" },
      { user: ' prop-user-1 ' },
      { user: 'PROP-USER-1' },
      { team: 'prop-user-1' },
      { team: 'sales' },
      { user: 'x'.repeat(5000) },
      { user: '_' },
    ];
    // One run of 2,000 steps on a shared database (no shrinking: the state would carry over);
    // on failure, rethrow the step's own error with the seed instead of the 2,000-step counterexample.
    const details = await fc.check(
      fc.asyncProperty(
        fc.array(actionArbitrary(scopes.length), { minLength: 2000, maxLength: 2000 }),
        (actions) => runAgainstModel(store, scopes, actions),
      ),
      { numRuns: 1, endOnFailure: true },
    );
    if (details.failed) {
      const cause =
        details.errorInstance instanceof Error
          ? details.errorInstance.message
          : String(details.errorInstance);
      throw new Error(`isolation property failed (seed ${details.seed}): ${cause}`);
    }
    expect(details.numRuns).toBe(1);
  }, 240_000);

  it('stores and searches hostile scope ids literally; `*` is never a wildcard', async () => {
    const scopes: MemoryScope[] = [
      ...HOSTILE_IDS.map((id) => ({ user: id })),
      { team: 'alice' },
      { team: '*' },
    ];
    // Start from empty scopes (the property run above used some of the same ids): purge them.
    for (const scope of scopes) await store.deleteAll(scope, { purge: true });
    const ids = new Map<string, string>();
    for (const [i, scope] of scopes.entries()) {
      const [made] = await store.write(scope, [
        {
          op: 'add',
          memory: { kind: 'preference', text: `fact of hostile ${i}` },
          embedding: testVector(7, DIMS),
        },
      ]);
      ids.set(scopeName(scope), made?.memory?.id as string);
    }
    for (const [i, scope] of scopes.entries()) {
      const hits = await store.search(scope, { embedding: testVector(7, DIMS), topK: 50 });
      expect(
        hits.map((h) => h.text),
        scopeName(scope),
      ).toEqual([`fact of hostile ${i}`]);
      expect(hits[0]?.scope).toEqual(scope);
      const reads = await store.recallReads(scope, {
        preferences: { tablesAny: [], limit: 50 },
        search: { embedding: testVector(7, DIMS), topK: 50 },
      });
      expect(reads.similar).toEqual(hits);
      expect(reads.preferences.map((m) => m.text)).toEqual([`fact of hostile ${i}`]);
      expect((await store.list(scope)).map((m) => m.id)).toEqual([ids.get(scopeName(scope))]);
    }
    // Unused look-alikes see nothing.
    for (const scope of [
      { user: 'alice  ' },
      { user: '**' },
      { user: '' + '%%' },
      { team: 'ALICE' },
      { user: 'a'.repeat(9_999) },
    ]) {
      expect(await store.list(scope)).toEqual([]);
    }
    // deleteAll of one scope touches no other (soft delete, then purge).
    expect(await store.deleteAll({ user: '*' })).toBe(1);
    expect(await store.list({ user: '*' })).toEqual([]);
    expect(await store.deleteAll({ user: '%' }, { purge: true })).toBe(1);
    expect(await store.list({ user: '%' }, { statuses: ['active', 'superseded', 'deleted'] })).toEqual([]);
    expect(await store.history({ user: '%' })).toEqual([]);
    for (const scope of scopes) {
      if (sameScope(scope, { user: '*' }) || sameScope(scope, { user: '%' })) continue;
      expect(await store.list(scope), scopeName(scope)).toHaveLength(1);
    }
    expect((await store.history({ team: '*' })).map((h) => h.action)).toEqual(['ADD']);
    // Invalid scopes are refused, never widened.
    for (const bad of [{ user: '' }, {}, { user: 'a', team: 'b' }, { user: 'nul\u0000byte' }]) {
      const error = await expectError(store.list(bad as MemoryScope));
      expect(error.code).toBe('usage');
    }
  });

  it('another scope’s memory by id behaves exactly like an unknown id, and stays unchanged', async () => {
    const alice = { user: 'id-alice' };
    const mallory = { user: 'id-mallory' };
    const [made] = await store.write(alice, [
      { op: 'add', memory: { kind: 'term', text: 'secret metric' }, embedding: testVector(3, DIMS) },
    ]);
    const id = made?.memory?.id as string;
    const unknown = '9b2f0c1e-0000-4000-8000-000000000000';
    const before = [await store.get(alice, id), await store.history(alice)];
    expect(await store.get(mallory, id)).toBeNull();
    expect(await store.history(mallory, id)).toEqual([]);
    const embedding = testVector(4, DIMS);
    const attempts = (target: string): MemoryOp[] => [
      { op: 'update', id: target, memory: { kind: 'term', text: 'pwned' }, embedding },
      { op: 'supersede', target, memory: { kind: 'term', text: 'pwned' }, embedding },
      { op: 'delete', id: target },
      { op: 'restore', id: target },
    ];
    const foreign = attempts(id);
    const missing = attempts(unknown);
    for (const [i, op] of foreign.entries()) {
      const a = await expectError(store.write(mallory, [op]));
      const b = await expectError(store.write(mallory, [missing[i] as MemoryOp]));
      expect(a.code).toBe('not_found');
      expect(a.message.replace(id, 'ID')).toBe(b.message.replace(unknown, 'ID'));
    }
    const [noop] = await store.write(mallory, [{ op: 'noop', id, text: 'x', reason: 'probe' }]);
    expect(noop?.memory).toBeUndefined();
    expect(await store.get(mallory, 'not-a-uuid')).toBeNull();
    expect([await store.get(alice, id), await store.history(alice)]).toEqual(before);
    expect(await store.list(mallory, { statuses: ['active', 'superseded', 'deleted'] })).toEqual([]);
    expect((await store.history(mallory)).map((h) => [h.action, h.memoryId])).toEqual([['NOOP', '']]);
  });

  it('conversations with the same ids in many scopes never mix (store and in-process fallback)', async () => {
    const scopes: MemoryScope[] = [
      { user: 'conv-alice' },
      { user: 'conv-bob' },
      { user: 'CONV-ALICE' },
      { user: '*' },
      { user: "' OR '1'='1" },
      { team: 'conv-alice' },
      { team: 'sales' },
    ];
    const ids = ['shared', 'x', "' OR '1'='1", 'ünï 🧠'];
    const action = fc.record({
      type: fc.constantFrom('append' as const, 'append' as const, 'read' as const),
      scope: fc.nat({ max: scopes.length - 1 }),
      conv: fc.nat({ max: ids.length - 1 }),
    });
    const details = await fc.check(
      fc.asyncProperty(fc.array(action, { minLength: 300, maxLength: 300 }), async (actions) => {
        const model = new Map<string, string[]>();
        const local = new LocalConversations();
        const tiny = new LocalConversations(3);
        const run = randomBytes(4).toString('hex');
        for (const [step, a] of actions.entries()) {
          const scope = scopes[a.scope] as MemoryScope;
          const id = `${ids[a.conv]}-${run}`;
          const key = `${a.scope}|${a.conv}`;
          if (a.type === 'append') {
            const question = `q ${key} #${step}`;
            const turn = { question, sql: `SELECT '${key}'`, rowCount: 1, summary: null };
            await store.appendTurn(scope, id, turn);
            local.record(scope, id, turn);
            tiny.record(scope, id, turn);
            model.set(key, [...(model.get(key) ?? []), question]);
          }
          const expected = model.get(key) ?? [];
          const stored = await store.recentTurns(scope, id, 1000);
          expect(stored.map((t) => t.question)).toEqual(expected);
          expect((await store.getConversation(scope, id))?.turnCount ?? 0).toBe(expected.length);
          expect(local.turns(scope, id, 1000).map((t) => t.question)).toEqual(expected.slice(-KEPT_TURNS));
          // The bounded fallback may have dropped a conversation, but never shows another's turns.
          for (const t of tiny.turns(scope, id, 1000)) expect(t.question.startsWith(`q ${key} #`)).toBe(true);
          expect(tiny.size).toBeLessThanOrEqual(3);
          const listed = (await store.listConversations(scope, 200))
            .map((c) => c.id)
            .filter((c) => c.endsWith(`-${run}`));
          const mine = ids.flatMap((c, i) => (model.has(`${a.scope}|${i}`) ? [`${c}-${run}`] : []));
          expect(listed.sort()).toEqual(mine.sort());
        }
      }),
      { numRuns: 1, endOnFailure: true },
    );
    if (details.failed)
      throw new Error(
        `conversation isolation failed (seed ${details.seed}): ${String(details.errorInstance)}`,
      );
  }, 240_000);
});

describe.runIf(TEST_DATABASE_URL)('memory store on the real server PostgreSQL', () => {
  it('refuses clearly when the server lacks pgvector (or works when it has it)', async () => {
    const store = createMemoryStore({ url: TEST_DATABASE_URL });
    try {
      await store.init({ model: MODEL, dimensions: DIMS });
      // This server has pgvector: then the store must simply work.
      await store.write({ user: 'srv' }, [
        { op: 'add', memory: { kind: 'term', text: 'x' }, embedding: testVector(1, DIMS) },
      ]);
      await store.deleteAll({ user: 'srv' }, { purge: true });
    } catch (error) {
      expect(error).toBeInstanceOf(SqlrecallError);
      expect((error as SqlrecallError).code).toBe('memory_store');
      expect((error as SqlrecallError).message).toMatch(/lacks the pgvector extension/);
      expect((error as SqlrecallError).message).not.toMatch(/password|:\/\/[^@]*:[^@]*@/);
    } finally {
      await store.close();
    }
  });
});
