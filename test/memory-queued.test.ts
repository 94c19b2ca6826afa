/**
 * Queued memories (facts taught while the embedding model was unreachable), at the service and
 * store level, on embedded PGlite and on the real PostgreSQL server when it offers pgvector:
 * - they are found by queue id or prefix by their owner only: another user's queue id is "not
 *   found" and withdrawing it leaves it queued;
 * - a withdrawal during a flush never resurrects the fact: the flush consumes the queue row in
 *   the same transaction as the memory's write, so whichever commits first wins, and the other
 *   writes nothing (the flush) or says it was applied just now (the withdrawal);
 * - a memory text over 2,000 characters is refused with a 120-character preview (masked), and is
 *   neither stored nor queued.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPendingMemory, forgetPendingMemory, pendingMemories } from '../src/app/memory.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { MemoryScope } from '../src/core/memory.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import { MAX_MEMORY_TEXT_CHARS } from '../src/memory/limits.js';
import { MemoryService } from '../src/memory/service.js';
import type { SqlMemoryStore } from '../src/memory/store/index.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';

/** An embedder that is down until `up`, and whose calls can be held at a gate. */
function switchableEmbedder() {
  let up = false;
  let gate: Promise<void> | undefined;
  let entered: (() => void) | undefined;
  const model: EmbeddingModel = {
    id: 'test-embed',
    dimensions: async () => 8,
    embed: async (texts) => {
      if (!up) throw new SqlrecallError('model_unreachable', 'The model server is not reachable.');
      entered?.();
      if (gate) await gate;
      return texts.map((t) => testVector(t.length + t.charCodeAt(0)));
    },
  };
  return {
    model,
    setUp: (value: boolean) => {
      up = value;
    },
    /** Holds the next embeddings until the returned release is called; `reached` resolves on entry. */
    hold() {
      let release!: () => void;
      gate = new Promise((resolve) => {
        release = resolve;
      });
      const reached = new Promise<void>((resolve) => {
        entered = resolve;
      });
      return {
        reached,
        release: () => {
          gate = undefined;
          entered = undefined;
          release();
        },
      };
    },
  };
}

const engines = STORE_ENGINES.filter((e) => e !== 'server-style');

describe.each(engines)('queued memories (%s)', (engine) => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;
  let embedder: ReturnType<typeof switchableEmbedder>;
  let service: MemoryService;
  const ann: MemoryScope = { user: 'ann' };
  const bob: MemoryScope = { user: 'bob' };
  const app = () => ({ store });
  const everything = (scope: MemoryScope) =>
    store.list(scope, { statuses: ['active', 'superseded', 'deleted'], limit: 1000 });

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    store = harness.open();
    await store.init({ model: 'test-embed', dimensions: 8 });
    embedder = switchableEmbedder();
    service = new MemoryService({ store, embedder: embedder.model });
  }, 120_000);
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  const queue = async (scope: MemoryScope, text: string) => {
    embedder.setUp(false);
    const taught = await service.teach(scope, { kind: 'context', text });
    expect(taught.pending?.id).toMatch(/^[0-9a-f-]{36}$/);
    return taught.pending!.id;
  };

  it('finds a queued fact by queue id or prefix for its owner only; another user gets not found', async () => {
    const id = await queue(ann, 'Fiscal years start in April');
    const listed = await pendingMemories(app(), ann);
    expect(listed).toEqual([expect.objectContaining({ pendingId: id, text: 'Fiscal years start in April' })]);
    expect((await findPendingMemory(app(), ann, id.slice(0, 8)))?.pendingId).toBe(id);
    expect((await findPendingMemory(app(), ann, id.toUpperCase()))?.pendingId).toBe(id);
    expect(await findPendingMemory(app(), ann, id.slice(0, 3))).toBeNull();

    // Hostile: bob names ann's queue id, in full and as a prefix.
    expect(await pendingMemories(app(), bob)).toEqual([]);
    expect(await findPendingMemory(app(), bob, id)).toBeNull();
    const refused = await forgetPendingMemory(app(), bob, id.slice(0, 8)).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(SqlrecallError);
    expect((refused as SqlrecallError).code).toBe('not_found');
    expect((refused as SqlrecallError).message).not.toContain('April');
    expect(await store.withdrawPending(bob, id)).toBeNull();
    expect((await pendingMemories(app(), ann)).map((p) => p.pendingId)).toEqual([id]);

    // The owner withdraws it: gone from the queue, and a later flush writes nothing.
    const withdrawn = await forgetPendingMemory(app(), ann, id.slice(0, 8));
    expect(withdrawn.text).toBe('Fiscal years start in April');
    expect(await pendingMemories(app(), ann)).toEqual([]);
    embedder.setUp(true);
    await service.recoverPending({ scope: ann });
    expect(await everything(ann)).toEqual([]);
  });

  it('a withdrawal while the flush is embedding wins: the flush writes nothing', async () => {
    const id = await queue(ann, 'Weeks start on Monday');
    embedder.setUp(true);
    const held = embedder.hold();
    const flush = service.recoverPending({ scope: ann });
    await held.reached; // the flush has claimed the row and is embedding it
    expect((await store.listPending(ann))[0]?.status).toBe('running');
    const withdrawn = await forgetPendingMemory(app(), ann, id);
    expect(withdrawn.pendingId).toBe(id);
    held.release();
    const total = await flush;
    expect(total).toEqual({ applied: 0, failed: 0 });
    expect(await everything(ann)).toEqual([]);
    expect(await store.listPending(ann)).toEqual([]);
  });

  it('a flush that committed first wins: the withdrawal says it was applied, and it is one memory', async () => {
    const id = await queue(ann, 'Amounts are in euros');
    embedder.setUp(true);
    expect(await service.recoverPending({ scope: ann })).toEqual({ applied: 1, failed: 0 });
    const late = await forgetPendingMemory(app(), ann, id).catch((e: unknown) => e);
    expect((late as SqlrecallError).code).toBe('not_found');
    expect(await everything(ann)).toEqual([expect.objectContaining({ text: 'Amounts are in euros' })]);
  });

  it('the memory write and the queue row go together: a write naming a withdrawn row writes nothing', async () => {
    const id = await queue(bob, 'Regions are EMEA, APAC and AMER');
    // Applying bob's row in ann's scope is refused as withdrawn (never another scope's row).
    const op = {
      op: 'add' as const,
      memory: { kind: 'context' as const, text: 'Regions are EMEA, APAC and AMER' },
      embedding: testVector(3),
    };
    await expect(store.write(ann, [op], { pendingId: id })).rejects.toMatchObject({ code: 'not_found' });
    expect((await everything(ann)).filter((m) => m.text.startsWith('Regions'))).toEqual([]);
    expect((await store.listPending(bob)).map((p) => p.id)).toEqual([id]);
    // In its own scope it is consumed with the write, in one transaction.
    const [written] = await store.write(bob, [op], { pendingId: id });
    expect(written?.memory?.text).toBe('Regions are EMEA, APAC and AMER');
    expect(await store.listPending(bob)).toEqual([]);
  });

  it('refuses a text over the limit with a masked 120-character preview; nothing stored or queued', async () => {
    const long = `postgres://report:S3cretPw@db.internal/prod ${'word '.repeat(500)}`;
    expect(long.trim().length).toBeGreaterThan(MAX_MEMORY_TEXT_CHARS);
    for (const up of [true, false]) {
      embedder.setUp(up);
      const error = await service.teach(ann, { kind: 'context', text: long }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(SqlrecallError);
      const err = error as SqlrecallError;
      expect(err.code).toBe('usage');
      expect(err.exitCode).toBe(2);
      expect(err.httpStatus).toBe(400);
      expect(err.message).toContain('2,000');
      expect(err.message).not.toContain('S3cretPw');
      const preview = /It begins: "(.*)"$/.exec(err.message)?.[1] ?? '';
      expect([...preview.replace(/…$/, '')].length).toBe(120);
    }
    expect((await store.listPending(ann)).length).toBe(0);
    expect(
      (await everything(ann)).filter((m) => m.text.startsWith('postgres') || m.text.length > 2000),
    ).toEqual([]);
    // Exactly at the limit it is stored.
    embedder.setUp(true);
    const atLimit = `A${'b'.repeat(MAX_MEMORY_TEXT_CHARS - 1)}`;
    const ok = await service.teach(ann, { kind: 'context', text: atLimit });
    expect(ok.changes).toMatchObject([{ action: 'ADD' }]);
    await expect(
      service.add(ann, { kind: 'context', text: `${atLimit}c` }).catch((e: SqlrecallError) => e.code),
    ).resolves.toBe('usage');
  });
});
