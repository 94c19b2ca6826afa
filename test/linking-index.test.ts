/**
 * Issue 5: the schema index (value hints, change detection, stores) and the planner on a real
 * database: "wholesale" finds `customers.segment`; adding a column re-indexes that one table only
 * and the next answer's prompt shows it; a dropped table leaves the index; a dead embedding model
 * degrades to lexical linking; the pgvector store is scoped by database fingerprint.
 */
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Assistant } from '../src/agent/assistant.js';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import { databaseFingerprint } from '../src/linking/documents.js';
import { PgSchemaIndexStore, type SchemaIndexSql } from '../src/linking/pg-store.js';
import type { LinkedContext } from '../src/linking/planner.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore, type SchemaIndexStore } from '../src/linking/store.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { generateDecoys } from './support/decoys.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { SHOP_SQL } from './support/fixtures.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const SEGMENTS = `ALTER TABLE customers ADD COLUMN segment text;
UPDATE customers SET segment = CASE WHEN id % 2 = 0 THEN 'wholesale' ELSE 'retail' END;`;
const DECOYS = generateDecoys(40, { seed: 11 })
  .map((d) => d.sql)
  .join('\n');

/** An in-process hash embedding that counts the texts it embedded. */
function countingEmbedding(): EmbeddingModel & { texts: string[] } {
  const texts: string[] = [];
  return {
    id: 'hash-384',
    texts,
    dimensions: async () => 384,
    embed: async (batch) => {
      texts.push(...batch);
      return batch.map((t) => hashEmbedding(t));
    },
  };
}

async function pgvectorStore(): Promise<{
  store: PgSchemaIndexStore;
  sql: SchemaIndexSql;
  close: () => Promise<void>;
}> {
  const db = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
  const sql: SchemaIndexSql = {
    query: async (text, params) => (await db.query(text, params)).rows as never[],
    transaction: (fn) =>
      db.transaction((tx) =>
        fn({ query: async (text, params) => (await tx.query(text, params)).rows as never[] }),
      ),
  };
  return { store: new PgSchemaIndexStore(sql), sql, close: () => db.close() };
}

function planner(index: SchemaIndex) {
  return createSchemaLinkingPlanner({ index, contextTokens: 4096 });
}

describe.each(ENGINES)('schema linking on %s', (engine) => {
  let db: TestDatabase;
  let vectors: Awaited<ReturnType<typeof pgvectorStore>>;

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'sqlrecall_linking');
    await db.exec(`${SHOP_SQL}\n${SEGMENTS}\n${DECOYS}\nANALYZE;`);
    vectors = await pgvectorStore();
  }, 60_000);
  afterAll(async () => {
    await db?.dispose();
    await vectors?.close();
  });

  const newIndex = (store: SchemaIndexStore, embedding?: EmbeddingModel, onWarning?: (m: string) => void) =>
    new SchemaIndex({
      store,
      fingerprint: `fp-${engine}`,
      embedding,
      sampler: createValueSampler(db.connector),
      onWarning,
    });

  it('finds customers.segment for "wholesale" and shows its values in the prompt', async () => {
    const schema = await db.connector.introspect();
    expect(schema.tables.length).toBeGreaterThan(30);
    const context = (await planner(newIndex(vectors.store, countingEmbedding()))(
      'how many wholesale buyers do we have?',
      schema,
    )) as LinkedContext;
    expect(context.mode).toBe('linked');
    expect(context.tables[0]).toBe('public.customers');
    const customers = context.choices.find((c) => c.table === 'public.customers')!;
    expect(customers.reasons).toContain("column segment has value 'wholesale'");
    expect(context.schemaText).toContain("segment text['retail','wholesale']");
    expect(context.estimatedTokens).toBeLessThan(context.wholeSchemaTokens);
  });

  it('re-indexes only the changed table, and the next answer sees the new column', async () => {
    const store = new InMemorySchemaIndexStore();
    const first = countingEmbedding();
    const schema = await db.connector.introspect();
    const built = await newIndex(store, first).sync(schema);
    expect(built.indexed).toHaveLength(schema.tables.length);

    // Same catalog, new process: nothing is sampled or embedded again.
    const again = countingEmbedding();
    const unchanged = await newIndex(store, again).sync(await db.connector.introspect());
    expect(unchanged.indexed).toEqual([]);
    expect(unchanged.unchanged).toBe(schema.tables.length);
    expect(again.texts).toEqual([]);

    await db.exec('ALTER TABLE orders ADD COLUMN coupon_code text');
    const writesBefore = store.writes;
    const later = countingEmbedding();
    const index = newIndex(store, later);
    const server: ScriptedOllama = await startScriptedOllama({
      chat: () => '```sql\nSELECT count(*) FROM orders\n```',
    });
    try {
      const assistant = new Assistant({
        chat: createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        db: db.connector,
        loadSchema: () => db.connector.introspect(),
        planContext: planner(index),
      });
      for await (const _step of assistant.ask({
        user: 'u',
        message: 'orders paid with a coupon code',
        skipAnswer: true,
      })) {
        // drain
      }
      const sqlPrompt = server.requests
        .map((r) => r.body as { messages?: { content: string }[] })
        .find((b) => b.messages?.[0]?.content.startsWith(SQL_PROMPT_MARKER));
      expect(sqlPrompt?.messages?.at(-1)?.content).toContain('coupon_code text');
    } finally {
      await server.close();
    }
    expect(store.writes - writesBefore).toBe(1);
    expect(later.texts.filter((t) => t.startsWith('table '))).toHaveLength(1);
    expect(later.texts[0]).toContain('coupon_code');
    await db.exec('ALTER TABLE orders DROP COLUMN coupon_code');
  }, 60_000);

  it('questions arriving together share one sync: each table sampled, embedded and written once', async () => {
    const store = new InMemorySchemaIndexStore();
    const embedding = countingEmbedding();
    const sampled: string[] = [];
    const sample = createValueSampler(db.connector);
    const index = new SchemaIndex({
      store,
      fingerprint: `fp-together-${engine}`,
      embedding,
      sampler: (table) => {
        sampled.push(`${table.schema}.${table.name}`);
        return sample(table);
      },
    });
    const schema = await db.connector.introspect();
    // Lexical syncs join an embedding one; an embedding sync does not join a lexical one.
    const reports = await Promise.all([
      index.sync(schema),
      index.sync(schema),
      index.sync(schema, { embed: false }),
      index.sync(schema),
    ]);
    expect(new Set(reports).size).toBe(1);
    expect(reports[0]!.indexed).toHaveLength(schema.tables.length);
    expect(sampled).toHaveLength(schema.tables.length);
    expect(new Set(sampled).size).toBe(schema.tables.length);
    expect(embedding.texts).toHaveLength(schema.tables.length);
    const lexical = new SchemaIndex({
      store: new InMemorySchemaIndexStore(),
      fingerprint: 'fp-lexical',
      embedding,
    });
    const before = embedding.texts.length;
    const [plain, embedded] = await Promise.all([
      lexical.sync(schema, { embed: false }),
      lexical.sync(schema),
    ]);
    expect(embedded).not.toBe(plain);
    expect(embedding.texts.length - before).toBe(schema.tables.length);
  });

  it('drops index entries of dropped tables', async () => {
    const store = new InMemorySchemaIndexStore();
    await db.exec('CREATE TABLE scratch_linking (id int)');
    await newIndex(store).sync(await db.connector.introspect());
    await db.exec('DROP TABLE scratch_linking');
    const report = await newIndex(store).sync(await db.connector.introspect());
    expect(report.removed).toEqual(['public.scratch_linking']);
    expect((await store.states(`fp-${engine}`)).has('public.scratch_linking')).toBe(false);
  });

  it('falls back to names and values when the embedding model is down', async () => {
    const warnings: string[] = [];
    const broken: EmbeddingModel = {
      id: 'down',
      dimensions: async () => 384,
      embed: async () => {
        throw new Error('connection refused');
      },
    };
    const store = new InMemorySchemaIndexStore();
    const context = (await planner(newIndex(store, broken, (m) => warnings.push(m)))(
      'wholesale customers',
      await db.connector.introspect(),
    )) as LinkedContext;
    expect(context.tables[0]).toBe('public.customers');
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/embedding model down is unavailable/);
    // Stored without embeddings, so a later run with a working model embeds them.
    const states = await store.states(`fp-${engine}`);
    expect([...states.values()].every((s) => s.embeddingModel === null)).toBe(true);
    const fixed = countingEmbedding();
    const report = await newIndex(store, fixed).sync(await db.connector.introspect());
    expect(report.indexed).toEqual([]);
    expect(report.reembedded.length).toBe(states.size);
  });
});

describe('schema index store on pgvector', () => {
  it('keeps databases apart and ranks by cosine similarity', async () => {
    const { store, close } = await pgvectorStore();
    try {
      const entry = (key: string, text: string) => ({
        tableKey: key,
        catalogHash: 'h',
        document: text,
        embedding: hashEmbedding(text),
        embeddingModel: 'hash-384',
        valueHints: [{ column: 'c', values: ["it's"], source: 'sample' as const, sampledRows: 3 }],
      });
      await store.upsert('db-a', [
        entry('public.orders', 'orders status total'),
        entry('public.users', 'users email'),
      ]);
      await store.upsert('db-b', [entry('public.orders', 'orders status total')]);
      const near = await store.nearest('db-a', hashEmbedding('order totals'), 'hash-384', 5);
      expect(near.map((n) => n.tableKey)).toEqual(['public.orders', 'public.users']);
      expect(near[0]!.similarity).toBeGreaterThan(near[1]!.similarity);
      expect(await store.nearest('db-a', hashEmbedding('x'), 'other-model', 5)).toEqual([]);
      await store.remove('db-a', ['public.orders']);
      expect([...(await store.states('db-a')).keys()]).toEqual(['public.users']);
      expect([...(await store.states('db-b')).keys()]).toEqual(['public.orders']);
      const [loaded] = await store.load('db-b', { withEmbeddings: true });
      expect(loaded!.valueHints[0]!.values).toEqual(["it's"]);
      expect(loaded!.embedding).toHaveLength(384);
    } finally {
      await close();
    }
  });

  it('sends a small schema whole, with value hints', async () => {
    const db = await createTestDatabase('pglite', 'sqlrecall_small');
    try {
      await db.exec(SHOP_SQL);
      const schema = await db.connector.introspect();
      const index = new SchemaIndex({
        store: new InMemorySchemaIndexStore(),
        fingerprint: databaseFingerprint({
          displayName: 'x',
          database: schema.database,
          schemas: schema.schemas,
        }),
        sampler: createValueSampler(db.connector),
      });
      const context = (await planner(index)('anything at all', schema)) as LinkedContext;
      expect(context.mode).toBe('whole');
      expect(context.tables).toHaveLength(schema.tables.length);
      expect(context.schemaText).toContain("status text['delivered','pending']");
    } finally {
      await db.dispose();
    }
  });
});
