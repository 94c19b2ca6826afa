/**
 * Issue 12, lifecycle and one reconciliation path, at the store level on embedded PGlite and on a
 * server-style connection: migration 2 (pinned), pin/unpin with history, pinned memories always
 * recalled, supersession keeps the pin, export/import carry `pinned`, and an imported preference
 * that conflicts on the same column supersedes the active one (history kept, restorable).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MemoryOp } from '../src/core/memory.js';
import { recallMemories } from '../src/memory/recall.js';
import { MIGRATIONS, type SqlMemoryStore } from '../src/memory/store/index.js';
import { migrate } from '../src/memory/store/migrations.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';

const DIMS = 8;
const MODEL = 'all-minilm';

function add(text: string, seed: number, extra: Partial<{ kind: 'preference' | 'term'; sql: string }> = {}) {
  const columns = extra.sql ? ['public.customers.country'] : [];
  return {
    op: 'add' as const,
    memory: {
      kind: extra.kind ?? 'preference',
      text,
      sql: extra.sql ?? null,
      tables: extra.sql ? ['public.customers'] : [],
      columns,
    },
    embedding: testVector(seed, DIMS),
  } satisfies MemoryOp;
}

describe('migration 2 (pinned)', () => {
  it('is applied to a store that already has versions 1 and 4, and adds the pinned columns', async () => {
    const client = createPgliteClient(undefined);
    try {
      // A store migrated before version 2 existed: only 1, 3 and 4 recorded (version 5 indexes
      // the pinned column, so it and every later version are applied after 2, by migrate below).
      await client.query(`CREATE TABLE sqlrecall_migrations (
        version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`);
      for (const m of MIGRATIONS.filter((x) => x.version !== 2 && x.version < 5)) {
        for (const statement of m.statements) await client.query(statement);
        await client.query('INSERT INTO sqlrecall_migrations (version) VALUES ($1)', [m.version]);
      }
      expect(await migrate(client)).toEqual([
        2,
        ...MIGRATIONS.filter((x) => x.version >= 5).map((x) => x.version),
      ]);
      const columns = await client.query<{ table_name: string; column_name: string; is_nullable: string }>(
        `SELECT table_name, column_name, is_nullable FROM information_schema.columns
         WHERE column_name = 'pinned' ORDER BY table_name`,
      );
      expect(columns.map((c) => [c.table_name, c.is_nullable])).toEqual([
        ['sqlrecall_memories', 'NO'],
        ['sqlrecall_memory_history', 'YES'],
      ]);
      expect(await migrate(client)).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe.each(STORE_ENGINES)('pinning and import reconciliation on %s', (engine) => {
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

  it('pins and unpins with history; another scope cannot pin it; a supersession keeps the pin', async () => {
    const scope = { user: 'pinner' };
    const [written] = await store.write(scope, [add('fiscal year starts in April', 1, { kind: 'term' })]);
    const id = written?.memory?.id as string;
    expect(written?.memory?.pinned).toBe(false);
    const [pinned] = await store.write(scope, [{ op: 'pin', id, pinned: true }]);
    expect(pinned?.memory?.pinned).toBe(true);
    expect((await store.get(scope, id))?.pinned).toBe(true);
    await expect(store.write({ user: 'intruder' }, [{ op: 'pin', id, pinned: false }])).rejects.toMatchObject(
      {
        code: 'not_found',
      },
    );
    expect((await store.get(scope, id))?.pinned).toBe(true);
    const history = await store.history(scope, id);
    expect(history.map((h) => [h.action, h.reason, h.pinned])).toEqual([
      ['ADD', null, null],
      ['UPDATE', 'pinned', true],
    ]);
    const [superseding] = await store.write(scope, [
      {
        op: 'supersede',
        target: id,
        memory: { kind: 'term', text: 'fiscal year starts in July' },
        embedding: testVector(2, DIMS),
      },
    ]);
    expect(superseding?.memory?.pinned).toBe(true);
    const [unpinned] = await store.write(scope, [
      { op: 'pin', id: superseding?.memory?.id as string, pinned: false },
    ]);
    expect(unpinned?.memory?.pinned).toBe(false);
  });

  it('a pinned memory is recalled for any question, however dissimilar; unpinned it is not', async () => {
    const scope = { user: 'recaller' };
    const [written] = await store.write(scope, [add('answers in euros', 10, { kind: 'term' })]);
    const id = written?.memory?.id as string;
    // The question's embedding is the opposite of the memory's: similarity −1, below any floor.
    const embedding = testVector(10, DIMS).map((x) => -x);
    const recall = () =>
      recallMemories({ store, user: 'recaller', question: 'how many orders', embedding, tablesInPlay: [] });
    expect((await recall()).map((r) => r.memory.id)).not.toContain(id);
    await store.write(scope, [{ op: 'pin', id, pinned: true }]);
    expect((await recall()).map((r) => [r.memory.id, r.why])).toEqual([[id, 'pinned']]);
    await store.write(scope, [{ op: 'pin', id, pinned: false }]);
    expect((await recall()).map((r) => r.memory.id)).not.toContain(id);
  });

  it('the pinned read returns only pinned, unexpired rows: unpinned memories are never read for it', async () => {
    const scope = { user: 'pin-reader' };
    const far = testVector(30, DIMS);
    // 40 unpinned memories and 2 pinned ones (one expired), all far from the question, defining no
    // term of it: only the live pinned one applies, and it is the only memory row read.
    const ops: MemoryOp[] = Array.from({ length: 40 }, (_, i) => ({
      op: 'add' as const,
      memory: { kind: 'context' as const, text: `unpinned note ${i}` },
      embedding: far,
    }));
    ops.push(
      { op: 'add', memory: { kind: 'context', text: 'pinned note' }, embedding: far },
      {
        op: 'add',
        memory: { kind: 'context', text: 'pinned but expired', expiresAt: '2020-01-01T00:00:00Z' },
        embedding: far,
      },
    );
    const written = await store.write(scope, ops);
    const live = written[40]?.memory?.id as string;
    const expired = written[41]?.memory?.id as string;
    await store.write(scope, [
      { op: 'pin', id: live, pinned: true },
      { op: 'pin', id: expired, pinned: true },
    ]);
    const client = await store.sql();
    const query = client.query;
    const rowsRead: Record<string, unknown>[] = [];
    client.query = (async (text: string, params?: unknown[]) => {
      const rows = await query.call(client, text, params);
      // Memory rows (a count of the scope, which picks the search path, reads no memory row).
      if (/FROM sqlrecall_memories/.test(text))
        rowsRead.push(...(rows as Record<string, unknown>[]).filter((row) => 'id' in row));
      return rows;
    }) as typeof client.query;
    try {
      const recalled = await recallMemories({
        store,
        user: 'pin-reader',
        question: 'how many orders',
        embedding: far.map((x) => -x),
        tablesInPlay: [],
      });
      expect(recalled.map((r) => [r.memory.id, r.why])).toEqual([[live, 'pinned']]);
    } finally {
      client.query = query;
    }
    expect(rowsRead.map((row) => row.id)).toEqual([live]);
  });

  it('export and import carry pinned (and the pin history)', async () => {
    const from = { user: 'pin-exporter' };
    const [a] = await store.write(from, [add('always in EUR', 20, { kind: 'term' }), add('plain fact', 21)]);
    await store.write(from, [{ op: 'pin', id: a?.memory?.id as string, pinned: true }]);
    const doc = await store.export(from);
    expect(doc.memories.map((m) => [m.text, m.pinned])).toEqual([
      ['always in EUR', true],
      ['plain fact', false],
    ]);
    const to = { user: 'pin-importer' };
    const embed = async (texts: string[]) => texts.map((_, i) => testVector(200 + i, DIMS));
    const result = await store.import(to, JSON.parse(JSON.stringify(doc)), embed);
    expect(result.imported).toBe(2);
    expect((await store.list(to)).map((m) => [m.text, m.pinned])).toEqual([
      ['always in EUR', true],
      ['plain fact', false],
    ]);
    expect((await store.history(to)).some((h) => h.reason === 'pinned' && h.pinned === true)).toBe(true);
  });

  it('an imported preference on the same column with another value supersedes the active one', async () => {
    const scope = { user: 'importer-reconcile' };
    const [chile] = await store.write(scope, [
      add('Only show customers from Chile', 30, { sql: "customers.country = 'Chile'" }),
      add('revenue means total_amount', 31, { kind: 'term' }),
    ]);
    const source = { user: 'importer-source' };
    await store.write(source, [
      add('Only show customers from Peru', 32, { sql: "customers.country = 'Peru'" }),
      add('Only show customers from Chile', 33, { sql: "customers.country = 'Chile'" }),
    ]);
    // The document carries only the Peru preference.
    const doc = await store.export(source);
    doc.memories = doc.memories.filter((m) => m.text.includes('Peru'));
    doc.history = [];
    const embed = async (texts: string[]) => texts.map((_, i) => testVector(300 + i, DIMS));
    const result = await store.import(scope, JSON.parse(JSON.stringify(doc)), embed);
    const peru = result.idMap[doc.memories[0]!.id] as string;
    expect(result.superseded).toEqual([
      { id: chile?.memory?.id, text: 'Only show customers from Chile', by: peru },
    ]);
    const active = await store.list(scope);
    expect(active.map((m) => m.text).sort()).toEqual([
      'Only show customers from Peru',
      'revenue means total_amount',
    ]);
    expect(active.find((m) => m.id === peru)?.supersedes).toBe(chile?.memory?.id);
    expect((await store.get(scope, chile?.memory?.id as string))?.status).toBe('superseded');
    const history = await store.history(scope, chile?.memory?.id as string);
    expect(history.at(-1)).toMatchObject({
      action: 'SUPERSEDE',
      oldText: 'Only show customers from Chile',
      newText: 'Only show customers from Peru',
    });
    // Importing the same preference again is a duplicate, and supersedes nothing.
    const again = await store.import(scope, JSON.parse(JSON.stringify(doc)), embed);
    expect([again.imported, again.duplicates, again.superseded]).toEqual([0, 1, []]);
  });
});
