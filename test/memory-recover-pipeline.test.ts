/**
 * Recovery of the question pipeline's embeddings after the model server was down:
 * - the schema index goes lexical after an embedding failure and tries the model again once 30 s
 *   have passed (not before: no call within the back-off), then embeds the tables it stored
 *   without vectors and ranks by similarity again;
 * - the memory runtime opened while the model server refused connections hands out one embedder,
 *   the one the pipeline passes to few-shot examples and dense schema linking: it fails fast while
 *   the server is down, re-probes after the back-off and embeds once the server is back;
 * - hostile: a store recorded with another embedding model gives the pipeline no embedder (it
 *   could never come back without `memory reembed`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import type { Column, Schema, Table } from '../src/core/schema.js';
import { EMBEDDING_RETRY_AFTER_MS, SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore } from '../src/linking/store.js';
import { type MemoryRuntime, openMemory } from '../src/runtime/memory-runtime.js';
import { pipelineEmbedder } from '../src/runtime/runtime.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const column = (name: string, position: number): Column => ({
  name,
  position,
  type: 'text',
  domainBaseType: null,
  enumValues: null,
  nullable: true,
  default: null,
  comment: null,
});
const table = (name: string, columns: string[]): Table => ({
  schema: 'public',
  name,
  kind: 'table',
  comment: null,
  estimatedRows: null,
  columns: columns.map(column),
  primaryKey: [],
  foreignKeys: [],
  uniqueIndexes: [],
});
const SCHEMA: Schema = {
  dialect: 'postgres',
  database: 'shop',
  serverVersion: '16',
  schemas: ['public'],
  tables: [
    table('customers', ['name', 'country']),
    table('invoices', ['amount', 'due_date']),
    table('shipments', ['carrier', 'tracking_code']),
  ],
};

/** An embedder that fails while `down`, counting its calls. */
function flakyEmbedder() {
  const state = { down: true, calls: 0 };
  const model: EmbeddingModel = {
    id: 'flaky',
    dimensions: async () => 64,
    embed: async (texts) => {
      state.calls += 1;
      if (state.down) throw new Error('connection refused');
      return texts.map((t) => hashEmbedding(t, 64));
    },
  };
  return { state, model };
}

describe('schema index after an embedding failure', () => {
  it('stays lexical for the back-off, then tries the model again and fills the vectors in', async () => {
    let now = 1_000_000;
    const warnings: string[] = [];
    const flaky = flakyEmbedder();
    const store = new InMemorySchemaIndexStore();
    const index = new SchemaIndex({
      store,
      fingerprint: 'fp',
      embedding: flaky.model,
      onWarning: (m) => warnings.push(m),
      now: () => now,
    });
    expect(EMBEDDING_RETRY_AFTER_MS).toBe(30_000);

    await index.sync(SCHEMA);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/tries the model again in 30 s/);
    expect(index.embeddingModelId).toBeNull();
    expect([...(await store.states('fp')).values()].every((s) => s.embeddingModel === null)).toBe(true);
    const failedCalls = flaky.state.calls;

    // Within the back-off: no call to the model, whether it is back or not.
    flaky.state.down = false;
    now += 29_000;
    expect(await index.nearest('unpaid invoices', 2)).toEqual([]);
    await index.sync(SCHEMA);
    expect(flaky.state.calls).toBe(failedCalls);

    // After it: the same schema is synced again, its tables embedded, and similarity ranks.
    now += 2_000;
    expect(index.embeddingModelId).toBe('flaky');
    const report = await index.sync(SCHEMA);
    expect(report.reembedded.sort()).toEqual(['public.customers', 'public.invoices', 'public.shipments']);
    expect([...(await store.states('fp')).values()].every((s) => s.embeddingModel === 'flaky')).toBe(true);
    const nearest = await index.nearest('invoices amount due_date', 1);
    expect(nearest.map((n) => n.tableKey)).toEqual(['public.invoices']);
    expect(warnings).toHaveLength(1);

    // A second failure starts a new back-off (one more warning), not a permanent fallback.
    flaky.state.down = true;
    expect(await index.nearest('customers', 1)).toEqual([]);
    expect(warnings).toHaveLength(2);
    flaky.state.down = false;
    now += 31_000;
    expect((await index.nearest('customers name country', 1)).map((n) => n.tableKey)).toEqual([
      'public.customers',
    ]);
  });
});

describe('the pipeline embedder of a memory runtime opened with the model server down', () => {
  let home: string;
  let port: number;
  let model: ScriptedOllama | undefined;
  let memory: MemoryRuntime;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-recover-pipeline-'));
    const probe = await startScriptedOllama({});
    port = Number(new URL(probe.url).port);
    await probe.close(); // the port now refuses connections
    const config = loadConfig({
      env: {},
      cwd: home,
      flags: { ollamaHost: `http://127.0.0.1:${port}`, home, user: 'me', logLevel: 'silent' },
    });
    memory = await openMemory(config, {
      allowWithoutEmbeddings: true,
      queueWhenDown: true,
      reprobeAfterMs: 200,
    });
  }, 120_000);
  afterAll(async () => {
    await memory?.store.close();
    await model?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('is the runtime embedder: down at first, embedding once the server is back after the back-off', async () => {
    expect(memory.canEmbed).toBe(false);
    const embedder = pipelineEmbedder(memory);
    expect(embedder).toBe(memory.embedder);
    await expect(embedder!.embed(['unpaid invoices'])).rejects.toMatchObject({ code: 'model_unreachable' });

    model = await startScriptedOllama({ port });
    await new Promise((resolve) => setTimeout(resolve, 250));
    const [vector] = await embedder!.embed(['unpaid invoices']);
    expect(vector?.length).toBeGreaterThan(0);
    expect(memory.canEmbed).toBe(true);
    expect(model.requests.length).toBeGreaterThan(0);
  });

  it('hostile: no embedder for a store recorded with another model, nor without memory', () => {
    const other = { embeddingRecoverable: false, embedder: memory.embedder } as MemoryRuntime;
    expect(pipelineEmbedder(other)).toBeNull();
    expect(pipelineEmbedder(undefined)).toBeNull();
  });
});
