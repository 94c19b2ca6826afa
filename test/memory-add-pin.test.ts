/**
 * Adding a memory pinned (`memory add --pin`, `POST /api/memories` with `pinned`) is one write to
 * the store, so the memory and its pin land in one transaction: never a stored memory left
 * unpinned because the pin failed after it. A fact already remembered is pinned in the same way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addMemory } from '../src/app/memory.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import { MemoryService } from '../src/memory/service.js';
import type { SqlMemoryStore } from '../src/memory/store/index.js';
import { createStoreHarness, type StoreHarness, testVector } from './support/memory-store.js';

const DIMS = 8;
const embedder: EmbeddingModel = {
  id: 'test-embedder',
  dimensions: async () => DIMS,
  embed: async (texts) => texts.map((t) => testVector(t.length, DIMS)),
};

describe('add with pin', () => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;
  let service: MemoryService;
  const writes: string[][] = [];

  beforeAll(async () => {
    harness = await createStoreHarness('pglite');
    store = harness.open();
    await store.init({ model: embedder.id, dimensions: DIMS });
    // Every call to the store's write is one transaction: record the ops of each call.
    const write = store.write.bind(store);
    const counted: SqlMemoryStore = Object.assign(Object.create(store), {
      write: async (...args: Parameters<SqlMemoryStore['write']>) => {
        writes.push(args[1].map((op) => op.op));
        return write(...args);
      },
    });
    service = new MemoryService({ store: counted, embedder });
  });
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('stores the memory and its pin in one write; the history records both', async () => {
    const scope = { user: 'pia' };
    const result = await addMemory(
      { store, service, embedder },
      scope,
      { kind: 'context', text: 'Ledger amounts are in euros' },
      { pinned: true },
    );
    expect(result.changes).toEqual([expect.objectContaining({ action: 'ADD', pinned: true })]);
    expect(writes).toEqual([['add']]);
    const id = result.changes[0]!.id!;
    expect((await store.get(scope, id))?.pinned).toBe(true);
    expect((await store.history(scope, id)).map((h) => [h.action, h.pinned ?? null])).toEqual([
      ['ADD', null],
      ['UPDATE', true],
    ]);
  });

  it('pins a fact already remembered in the same write as its NOOP', async () => {
    const scope = { user: 'pia' };
    await service.add(scope, { kind: 'context', text: 'Fiscal year starts in April' });
    writes.length = 0;
    const again = await addMemory(
      { store, service, embedder },
      scope,
      { kind: 'context', text: 'Fiscal year starts in April' },
      { pinned: true },
    );
    expect(again.changes).toEqual([expect.objectContaining({ action: 'NOOP', pinned: true })]);
    expect(writes).toEqual([['noop', 'pin']]);
    expect((await store.get(scope, again.changes[0]!.id!))?.pinned).toBe(true);
  });
});
