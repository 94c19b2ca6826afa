/**
 * The memory store (src/memory/store/) on embedded PGlite and on a server-style connection (`pg`
 * over TCP to PGlite + pgvector through pglite-socket): migrations, embedding-model refusal and
 * reembed, write semantics (dedup, supersede, delete/restore), concurrency, exact scoped top-k,
 * conversations, pending writes across a reopen, settings, export/import.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { MemoryScope } from '../src/core/memory.js';
import { LOCK_FILE_NAME, MIGRATIONS, type SqlMemoryStore } from '../src/memory/store/index.js';
import { migrate } from '../src/memory/store/migrations.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import { createPostgresClient } from '../src/memory/store/sql-client.js';
import { contentWords } from '../src/memory/text.js';
import { createStoreHarness, STORE_ENGINES, type StoreHarness, testVector } from './support/memory-store.js';

const DIMS = 8;
const MODEL = 'all-minilm';

async function expectError(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

function add(text: string, seed: number, kind: 'preference' | 'term' = 'preference') {
  return { op: 'add' as const, memory: { kind, text }, embedding: testVector(seed, DIMS) };
}

describe.each(STORE_ENGINES)('memory store on %s', (engine) => {
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

  it('applies migrations once and is idempotent, also when two migrators start at once', async () => {
    // The store above already migrated: a second migrator finds nothing to do.
    if (harness.url) {
      const clients = [createPostgresClient(harness.url), createPostgresClient(harness.url)];
      const results = await Promise.all(clients.map((client) => migrate(client)));
      expect(results).toEqual([[], []]);
      const rows = await clients[0]?.query<{ version: number }>('SELECT version FROM sqlrecall_migrations');
      expect(rows?.map((row) => Number(row.version))).toEqual(MIGRATIONS.map((m) => m.version));
      await Promise.all(clients.map((client) => client.close()));
    } else {
      const fresh = createPgliteClient(undefined);
      const [first, second] = [await migrate(fresh), await migrate(fresh)];
      expect(first).toEqual(MIGRATIONS.map((m) => m.version));
      expect(second).toEqual([]);
      await fresh.close();
    }
    // Reopening the real store keeps its data and migrates nothing twice.
    await store.write({ user: 'mig' }, [add('kept across reopen', 1)]);
    await store.close();
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
    expect((await store.list({ user: 'mig' })).map((m) => m.text)).toEqual(['kept across reopen']);
  });

  it('refuses another dimension or model with the clear message; `all-minilm:latest` is the same model', async () => {
    // The refusal leaves the store usable with its recorded model (embedded: one store per data dir).
    const other = store;
    {
      const byDims = await expectError(other.init({ model: 'nomic-embed-text', dimensions: 768 }));
      expect(byDims.code).toBe('memory_embedding_mismatch');
      expect(byDims.exitCode).toBe(2);
      expect(byDims.message).toBe(
        'The memory store was built with all-minilm (8 dimensions) but the configured embedding model is nomic-embed-text (768 dimensions). Run `sqlrecall memory reembed` to migrate your memories, or switch SQLRECALL_EMBED_MODEL back.',
      );
      const byModel = await expectError(other.init({ model: 'other-model', dimensions: DIMS }));
      expect(byModel.code).toBe('memory_embedding_mismatch');
      expect(byModel.message).toContain('configured embedding model is other-model (8 dimensions)');
      await expect(other.init({ model: 'all-minilm:latest', dimensions: DIMS })).resolves.toBeUndefined();
    }
    // A vector of the wrong length is refused before it reaches SQL.
    const wrong = await expectError(store.search({ user: 'x' }, { embedding: testVector(1, DIMS + 1) }));
    expect(wrong.code).toBe('memory_embedding_mismatch');
  });

  it('search finds exactly the scope’s nearest active memories with similarity = 1 − cosine distance', async () => {
    const scope = { user: 'searcher' };
    await store.write(scope, [add('near', 10), add('far', 11), add('term one', 12, 'term')]);
    const hits = await store.search(scope, { embedding: testVector(10, DIMS), topK: 3 });
    expect(hits[0]?.text).toBe('near');
    expect(hits[0]?.similarity).toBeCloseTo(1, 6);
    const a = testVector(10, DIMS);
    const b = testVector(11, DIMS);
    const cosine = a.reduce((sum, value, i) => sum + value * (b[i] ?? 0), 0);
    expect(hits.find((hit) => hit.text === 'far')?.similarity).toBeCloseTo(cosine, 5);
    const floor = await store.search(scope, { embedding: a, minSimilarity: 0.999 });
    expect(floor.map((hit) => hit.text)).toEqual(['near']);
    const terms = await store.search(scope, { embedding: a, kinds: ['term'] });
    expect(terms.map((hit) => hit.text)).toEqual(['term one']);
  });

  it('top-k is never short when other users have many more (nearer) memories', async () => {
    const crowd = Array.from({ length: 300 }, (_, i) => add(`crowd ${i}`, 5000 + i));
    await store.write({ user: 'crowd' }, crowd);
    const few = { user: 'few' };
    await store.write(few, [add('a', 1), add('b', 2), add('c', 3)]);
    const seven = { user: 'seven' };
    await store.write(
      seven,
      Array.from({ length: 7 }, (_, i) => add(`s${i}`, 9000 + i)),
    );
    // Query exactly at a crowd memory: hundreds of other-scope rows are nearer than ours.
    const query = testVector(5000, DIMS);
    expect((await store.search(few, { embedding: query, topK: 5 })).map((h) => h.text).sort()).toEqual([
      'a',
      'b',
      'c',
    ]);
    const top = await store.search(seven, { embedding: query, topK: 5 });
    expect(top).toHaveLength(5);
    const expected = Array.from({ length: 7 }, (_, i) => {
      const v = testVector(9000 + i, DIMS);
      return { text: `s${i}`, sim: v.reduce((sum, x, j) => sum + x * (query[j] ?? 0), 0) };
    })
      .sort((x, y) => y.sim - x.sim)
      .slice(0, 5)
      .map((x) => x.text);
    expect(top.map((hit) => hit.text)).toEqual(expected);
    expect(top.every((hit) => hit.scope.user === 'seven')).toBe(true);
  });

  it('the approximate (HNSW) path, forced, returns the exact top results and never another scope’s nearer memory', async () => {
    const paths: string[] = [];
    const forced = harness.open({
      search: { exactUpTo: 0, minShare: 0, efSearch: 20 },
      onSearchPath: (path) => paths.push(path),
    });
    try {
      await forced.init({ model: MODEL, dimensions: DIMS });
      const mine = { user: 'approx-mine' };
      await store.write(mine, [
        ...Array.from({ length: 60 }, (_, i) => add(`mine ${i}`, 7000 + i, 'term')),
        add('mine preference', 7100),
      ]);
      // Another user's memories sit right at the query: nearer than any of ours.
      const query = testVector(7003, DIMS);
      await store.write(
        { user: 'approx-other' },
        Array.from({ length: 40 }, (_, i) => ({
          op: 'add' as const,
          memory: { kind: 'term' as const, text: `other ${i}` },
          embedding: testVector(7003, DIMS, 0.01 * (i + 1)),
        })),
      );
      const exact = await store.search(mine, { embedding: query, topK: 5, kinds: ['term'] });
      const approximate = await forced.search(mine, { embedding: query, topK: 5, kinds: ['term'] });
      expect(paths).toEqual(['approximate']);
      expect(approximate.map((m) => m.id)).toEqual(exact.map((m) => m.id));
      expect(approximate[0]?.text).toBe('mine 3');
      expect(approximate.map((m) => m.similarity)).toEqual(exact.map((m) => m.similarity));
      expect(approximate.every((m) => m.scope.user === 'approx-mine')).toBe(true);
      // A filter that passes fewer rows than the walk's candidates: the exact path answers.
      const preferences = await forced.search(mine, { embedding: query, topK: 5, kinds: ['preference'] });
      expect(paths).toEqual(['approximate', 'exact']);
      expect(preferences.map((m) => m.text)).toEqual(['mine preference']);
    } finally {
      await forced.close();
    }
  });

  it('dedups by normalised text + kind and records NOOP', async () => {
    const scope = { user: 'dedup' };
    const [first, second, third] = await store.write(scope, [
      add('Only customers from India', 1),
      add('  only   CUSTOMERS from india ', 2),
      add('Only customers from India', 3, 'term'),
    ]);
    expect(second?.duplicate).toBe(true);
    expect(second?.memory?.id).toBe(first?.memory?.id);
    expect(third?.duplicate).toBeUndefined();
    expect(await store.list(scope)).toHaveLength(2);
    expect((await store.history(scope)).map((h) => h.action)).toEqual(['ADD', 'NOOP', 'ADD']);
  });

  it('a contradiction supersedes: exactly one active, history of both', async () => {
    const scope = { user: 'contra' };
    const [old] = await store.write(scope, [add('only delivered orders', 1)]);
    const oldId = old?.memory?.id as string;
    const [next] = await store.write(scope, [
      {
        op: 'supersede',
        target: oldId,
        memory: { kind: 'preference', text: 'show all statuses again' },
        embedding: testVector(2, DIMS),
        reason: 'model decided SUPERSEDE',
      },
    ]);
    expect(next?.memory?.supersedes).toBe(oldId);
    const active = await store.list(scope);
    expect(active.map((m) => m.text)).toEqual(['show all statuses again']);
    const all = await store.list(scope, { statuses: ['active', 'superseded', 'deleted'] });
    expect(all.map((m) => [m.text, m.status])).toEqual([
      ['only delivered orders', 'superseded'],
      ['show all statuses again', 'active'],
    ]);
    const history = await store.history(scope);
    expect(history.map((h) => [h.action, h.newText])).toEqual([
      ['ADD', 'only delivered orders'],
      ['SUPERSEDE', 'show all statuses again'],
      ['ADD', 'show all statuses again'],
    ]);
    expect((await store.history(scope, oldId)).map((h) => h.action)).toEqual(['ADD', 'SUPERSEDE']);
    // Superseding an already superseded memory is "not found" (only active memories can be).
    const again = await expectError(
      store.write(scope, [
        {
          op: 'supersede',
          target: oldId,
          memory: { kind: 'preference', text: 'x' },
          embedding: testVector(3, DIMS),
        },
      ]),
    );
    expect(again.code).toBe('not_found');
  });

  it('update keeps the old text in history; a failing op rolls back the whole batch', async () => {
    const scope = { user: 'updater' };
    const [made] = await store.write(scope, [add('revenue means sum of totals', 1, 'term')]);
    const id = made?.memory?.id as string;
    const [updated] = await store.write(scope, [
      {
        op: 'update',
        id,
        memory: { kind: 'term', text: 'revenue means sum of paid totals', sql: 'sum(x)' },
        embedding: testVector(2, DIMS),
      },
    ]);
    expect(updated?.memory?.text).toBe('revenue means sum of paid totals');
    expect(updated?.memory?.sql).toBe('sum(x)');
    const entry = (await store.history(scope, id)).at(-1);
    expect([entry?.action, entry?.oldText, entry?.newText]).toEqual([
      'UPDATE',
      'revenue means sum of totals',
      'revenue means sum of paid totals',
    ]);
    const failed = await expectError(
      store.write(scope, [
        add('should not stay', 3),
        { op: 'delete', id: '00000000-0000-4000-8000-000000000000' },
      ]),
    );
    expect(failed.code).toBe('not_found');
    expect((await store.list(scope)).map((m) => m.text)).toEqual(['revenue means sum of paid totals']);
  });

  it('delete hides a memory from search and list at once; restore brings it back', async () => {
    const scope = { user: 'deleter' };
    const [made] = await store.write(scope, [add('wholesale means segment = W', 42, 'term')]);
    const id = made?.memory?.id as string;
    await store.write(scope, [{ op: 'delete', id, reason: 'user deleted' }]);
    expect(await store.search(scope, { embedding: testVector(42, DIMS) })).toEqual([]);
    expect(await store.list(scope)).toEqual([]);
    expect((await store.get(scope, id))?.status).toBe('deleted');
    await store.write(scope, [{ op: 'restore', id }]);
    expect((await store.search(scope, { embedding: testVector(42, DIMS) })).map((m) => m.id)).toEqual([id]);
    expect((await store.history(scope, id)).map((h) => h.action)).toEqual(['ADD', 'DELETE', 'RESTORE']);
    // Restoring while an identical memory is active is a NOOP (never two identical active ones).
    await store.write(scope, [{ op: 'delete', id }]);
    const [again] = await store.write(scope, [add('Wholesale means segment = W', 43, 'term')]);
    const [restored] = await store.write(scope, [{ op: 'restore', id }]);
    expect(restored?.duplicate).toBe(true);
    expect(restored?.memory?.id).toBe(again?.memory?.id);
    expect(await store.list(scope)).toHaveLength(1);
  });

  it('20 concurrent identical writes for one user produce one memory', async () => {
    const scope = { user: 'racer' };
    const write = (s: SqlMemoryStore) => s.write(scope, [add('From now on only delivered orders', 7)]);
    const results = await Promise.all(Array.from({ length: 20 }, () => write(store)));
    const ids = new Set(results.map((r) => r[0]?.memory?.id));
    expect(ids.size).toBe(1);
    expect(results.filter((r) => !r[0]?.duplicate)).toHaveLength(1);
    expect(await store.list(scope)).toHaveLength(1);
    if (harness.url) {
      // Separate store instances = separate pools and connections, racing through the wire protocol.
      const scope2 = { user: 'racer2' };
      const stores = Array.from({ length: 20 }, () => harness.open({ maxConnections: 1 }));
      try {
        await Promise.all(stores.map((s) => s.init({ model: MODEL, dimensions: DIMS })));
        const raced = await Promise.all(stores.map((s) => s.write(scope2, [add('only paid orders', 8)])));
        expect(new Set(raced.map((r) => r[0]?.memory?.id)).size).toBe(1);
        expect(await store.list(scope2)).toHaveLength(1);
        expect((await store.history(scope2)).filter((h) => h.action === 'ADD')).toHaveLength(1);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    }
  });

  it('recall filters run in SQL: term words all in the question (filled in for older rows), preferences by table', async () => {
    const scope = { user: 'terms-u' };
    const high = 'By high value order I mean total amount over 10000';
    await store.write(scope, [
      add(high, 201, 'term'),
      add('By churned customer I mean no order in 90 days', 202, 'term'),
      add('Always show me customers from India', 203),
      {
        op: 'add',
        memory: { kind: 'preference', text: 'Only paid orders', tables: ['public.orders'] },
        embedding: testVector(204, DIMS),
      },
    ]);
    await store.write({ user: 'terms-other' }, [add(high, 201, 'term')]);
    const words = contentWords('customers who have a high order value');
    const terms = () => store.list(scope, { kinds: ['term', 'metric'], termWordsWithin: words });
    expect((await terms()).map((m) => m.text)).toEqual([high]);
    expect(await store.list(scope, { termWordsWithin: contentWords('churned') })).toEqual([]); // one word of two
    const prefs = (tables: string[]) =>
      store.list(scope, { kinds: ['preference'], tablesAny: tables }).then((l) => l.map((m) => m.text));
    expect(await prefs(['PUBLIC.Orders'])).toEqual([
      'Always show me customers from India',
      'Only paid orders',
    ]);
    expect(await prefs(['public.customers'])).toEqual(['Always show me customers from India']);

    // Rows written before migration 3 have no term words: the next open fills them in.
    const sql = await store.sql();
    await sql.query("UPDATE sqlrecall_memories SET term_words = NULL WHERE scope_user = 'terms-u'");
    expect(await terms()).toEqual([]);
    await store.close();
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
    expect((await terms()).map((m) => m.text)).toEqual([high]);
  });

  it('keeps conversations per scope with recent turns and a rolling summary', async () => {
    const priya = { user: 'conv-priya' };
    const rahul = { user: 'conv-rahul' };
    for (let i = 1; i <= 8; i += 1) {
      await store.appendTurn(priya, 'c1', {
        question: `q${i}`,
        sql: `SELECT ${i}`,
        rowCount: i,
        summary: `s${i}`,
      });
    }
    await store.appendTurn(rahul, 'c1', { question: 'rahul q' });
    await store.setSummary(priya, 'c1', 'talked about orders');
    const recent = await store.recentTurns(priya, 'c1', 3);
    expect(recent.map((t) => [t.question, t.sql, t.rowCount])).toEqual([
      ['q6', 'SELECT 6', 6],
      ['q7', 'SELECT 7', 7],
      ['q8', 'SELECT 8', 8],
    ]);
    expect((await store.recentTurns(rahul, 'c1')).map((t) => t.question)).toEqual(['rahul q']);
    expect(await store.recentTurns({ team: 'conv-priya' }, 'c1')).toEqual([]);
    await store.appendTurn(priya, 'c2', { question: 'newer' });
    expect((await store.lastConversation(priya))?.id).toBe('c2');
    const c1 = await store.getConversation(priya, 'c1');
    expect([c1?.summary, c1?.turnCount]).toEqual(['talked about orders', 8]);
    expect((await store.listConversations(priya)).map((c) => c.id)).toEqual(['c2', 'c1']);
    expect(await store.lastConversation({ user: 'nobody' })).toBeNull();
    const bad = await expectError(store.appendTurn(priya, 'x'.repeat(201), { question: 'q' }));
    expect(bad.code).toBe('usage');
  });

  it('memory can be switched off and on per scope', async () => {
    expect(await store.isEnabled({ user: 'switch' })).toBe(true);
    await store.setEnabled({ user: 'switch' }, false);
    expect(await store.isEnabled({ user: 'switch' })).toBe(false);
    expect(await store.isEnabled({ team: 'switch' })).toBe(true);
    expect(await store.isEnabled({ user: 'switch2' })).toBe(true);
    await store.setEnabled({ user: 'switch' }, true);
    expect(await store.isEnabled({ user: 'switch' })).toBe(true);
  });

  it('export → import into another scope keeps statuses and links, and dedups a second import', async () => {
    const from = { user: 'exporter' };
    const [a] = await store.write(from, [add('first fact', 1), add('second fact', 2, 'term')]);
    await store.write(from, [
      {
        op: 'supersede',
        target: a?.memory?.id as string,
        memory: { kind: 'preference', text: 'replacement' },
        embedding: testVector(3, DIMS),
      },
    ]);
    const doc = await store.export(from);
    expect(doc.memories.map((m) => [m.text, m.status])).toEqual([
      ['first fact', 'superseded'],
      ['second fact', 'active'],
      ['replacement', 'active'],
    ]);
    expect(JSON.stringify(doc)).not.toContain('embedding"');
    const to = { team: 'importers' };
    const embed = async (texts: string[]) => texts.map((_, i) => testVector(100 + i, DIMS));
    const result = await store.import(to, JSON.parse(JSON.stringify(doc)), embed);
    expect([result.imported, result.duplicates]).toEqual([3, 0]);
    const imported = await store.list(to, { statuses: ['active', 'superseded', 'deleted'] });
    expect(imported.map((m) => [m.text, m.status])).toEqual(doc.memories.map((m) => [m.text, m.status]));
    const replacement = imported.find((m) => m.text === 'replacement');
    expect(replacement?.supersedes).toBe(imported.find((m) => m.text === 'first fact')?.id);
    expect(imported.every((m) => m.scope.team === 'importers')).toBe(true);
    expect((await store.history(to)).length).toBeGreaterThanOrEqual(3);
    const again = await store.import(to, doc, embed);
    expect([again.imported, again.duplicates]).toEqual([0, 3]);
    expect(
      (await store.list(from, { statuses: ['active', 'superseded'] })).every(
        (m) => m.scope.user === 'exporter',
      ),
    ).toBe(true);
    const bad = await expectError(store.import(to, { format: 'something-else' }, embed));
    expect(bad.code).toBe('usage');
  });

  it('pending writes survive a close and reopen, and are claimed once', async () => {
    const scope = { user: 'pending' };
    const id = await store.enqueuePending(scope, { message: 'Always show me customers from India', at: 1 });
    const other = await store.enqueuePending({ user: 'pending-other' }, { message: 'x' });
    await store.close();
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
    const listed = await store.listPending(scope);
    expect(listed.map((p) => [p.id, p.status, p.payload])).toEqual([
      [id, 'pending', { message: 'Always show me customers from India', at: 1 }],
    ]);
    const taken = await store.takePending(scope);
    expect(taken.map((p) => p.id)).toEqual([id]);
    expect(await store.takePending(scope)).toEqual([]); // running, not stale
    expect(await store.failPending(scope, id, 'model down', { retry: true })).toBe(true);
    const retried = await store.takePending(scope);
    expect(retried.map((p) => [p.id, p.attempts])).toEqual([[id, 2]]);
    expect(await store.completePending(scope, id)).toBe(true);
    expect(await store.listPending(scope)).toEqual([]);
    const otherScope = { user: 'pending-other' };
    expect(await store.pendingScopes({ limit: 100 })).toContainEqual(otherScope);
    const all = await store.takePending(otherScope, { limit: 100 });
    expect(all.map((p) => p.id)).toEqual([other]);
    await store.failPending(otherScope, other, 'bad payload');
    expect((await store.listPending(otherScope))[0]?.status).toBe('failed');
    expect(await store.takePending(otherScope, { limit: 100, staleAfterMs: 0 })).toEqual([]);
    expect(await store.pendingScopes({ limit: 100, staleAfterMs: 0 })).not.toContainEqual(otherScope);
  });

  it('a write claimed by a process that died is taken again after a restart', async () => {
    const scope = { user: 'pending-crash' };
    const id = await store.enqueuePending(scope, { message: 'I prefer EUR' });
    expect((await store.takePending(scope)).map((p) => p.id)).toEqual([id]);
    await store.close(); // the worker "dies" with the row claimed
    store = harness.open();
    await store.init({ model: MODEL, dimensions: DIMS });
    if (engine === 'pglite') {
      // One process per data dir: every running row at open belongs to a dead process.
      expect((await store.takePending(scope)).map((p) => [p.id, p.attempts])).toEqual([[id, 2]]);
    } else {
      // Shared server: another live instance may own it until it is stale.
      expect(await store.takePending(scope)).toEqual([]);
      expect((await store.takePending(scope, { staleAfterMs: 0 })).map((p) => [p.id, p.attempts])).toEqual([
        [id, 2],
      ]);
    }
    await store.completePending(scope, id);
  });

  it('reembed migrates every scope and status atomically; a failing embedder changes nothing', async () => {
    const users: MemoryScope[] = [{ user: 're-a' }, { team: 're-b' }];
    for (const [i, scope] of users.entries()) {
      const [made] = await store.write(scope, [add(`re fact ${i}`, 70 + i), add(`re other ${i}`, 80 + i)]);
      await store.write(scope, [{ op: 'delete', id: made?.memory?.id as string }]);
    }
    const failing = async (texts: string[]) => {
      if (texts.length > 0) throw new Error('embedder crashed');
      return [];
    };
    await expect(store.reembed('nomic-embed-text', 16, failing)).rejects.toThrow('embedder crashed');
    expect(await store.embeddingInfo()).toEqual({ model: MODEL, dimensions: DIMS });
    expect((await store.search({ user: 're-a' }, { embedding: testVector(80, DIMS) }))[0]?.text).toBe(
      're other 0',
    );

    const seen: number[] = [];
    const total = (await store.embeddingInfo()) && (await store.export({ user: 're-a' })).memories.length;
    expect(total).toBe(2);
    const result = await store.reembed(
      'nomic-embed-text',
      16,
      async (texts) => texts.map((text) => testVector(text.length, 16)),
      (progress) => seen.push(progress.done),
    );
    expect(result.reembedded).toBeGreaterThanOrEqual(4);
    expect(seen.at(-1)).toBe(result.reembedded);
    expect(await store.embeddingInfo()).toEqual({ model: 'nomic-embed-text', dimensions: 16 });
    await store.close();
    store = harness.open();
    const refused = await expectError(store.init({ model: MODEL, dimensions: DIMS }));
    expect(refused.message).toContain('built with nomic-embed-text (16 dimensions)');
    await store.init({ model: 'nomic-embed-text', dimensions: 16 });
    const hits = await store.search(
      { user: 're-a' },
      { embedding: testVector('re other 0'.length, 16), topK: 10 },
    );
    expect(hits.map((h) => h.text)).toEqual(['re other 0']); // the deleted one stays deleted
    expect(hits[0]?.embeddingModel).toBe('nomic-embed-text');
    expect((await store.get({ user: 're-a' }, hits[0]?.id as string))?.embeddingModel).toBe(
      'nomic-embed-text',
    );
    const old = await expectError(store.write({ user: 're-a' }, [add('old dims', 1)]));
    expect(old.code).toBe('memory_embedding_mismatch');
    // Back to the suite's model for nothing else runs after; keep the store consistent anyway.
    await store.reembed(MODEL, DIMS, async (texts) => texts.map((_, i) => testVector(i, DIMS)));
  });
});

describe('embedded data directory ownership', () => {
  let harness: StoreHarness;
  beforeAll(async () => {
    harness = await createStoreHarness('pglite');
  });
  afterAll(async () => {
    await harness?.dispose();
  });

  it('shares an open data dir with a second store in the same process, and takes over a lock left by a dead process', async () => {
    // Issue 15: a second store on the same data dir no longer fails; it shares the one PGlite.
    const first = harness.open();
    await first.init({ model: MODEL, dimensions: DIMS });
    const second = harness.open();
    await second.init({ model: MODEL, dimensions: DIMS });
    await first.write({ user: 'u' }, [add('shared between stores', 1)]);
    expect((await second.list({ user: 'u' })).map((m) => m.text)).toEqual(['shared between stores']);
    await second.close();
    await first.close();
    // A crashed process (pid that cannot exist) left its lock behind: the next open takes it over.
    writeFileSync(join(harness.dataDir as string, LOCK_FILE_NAME), '2147483646 crashed');
    const third = harness.open();
    expect((await third.list({ user: 'u' })).map((m) => m.text)).toEqual(['shared between stores']);
    await third.close();
  });
});
