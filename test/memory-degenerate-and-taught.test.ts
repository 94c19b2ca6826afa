/**
 * Two memory behaviours a user relies on:
 * - A question whose embedding is degenerate (all zeros: similarity cannot rank against it) still
 *   recalls the user's memories, found by their words, and says so in a note — on every store
 *   engine (embedded PGlite, a pooled connection, and the real server PostgreSQL when it has
 *   pgvector), through the real embedding client (which refuses the zero vector and marks it), in
 *   `memory search` and in the answer of `ask` (a note). Another user's memories never come back.
 * - A message that both teaches and asks: the memory it teaches is part of that turn's evidence
 *   (the answer's applied list and the stored conversation turn) and its "last applied" is set.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { searchMemories } from '../src/app/memory.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import { memoryProvenance } from '../src/memory/provenance.js';
import { embedQuery, WORD_SEARCH_NOTE } from '../src/memory/recall.js';
import { MemoryService } from '../src/memory/service.js';
import type { SqlMemoryStore } from '../src/memory/store/index.js';
import { createOllamaEmbeddingModel } from '../src/models/ollama/embedding-model.js';
import { type MemoryPipeline, startMemoryPipeline } from './support/memory-pipeline.js';
import {
  createStoreHarness,
  SERVER_STORE_SKIP,
  STORE_ENGINES,
  type StoreHarness,
  testVector,
} from './support/memory-store.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const DIMS = 8;
/** Not a defined term (term matching would recall it without any vector): found by words only. */
const LOYAL = 'Customers who came back after a complaint count as loyal';
const EUROS = 'Quarterly revenue is reported in euros';
const QUESTION = 'how many loyal customers do we have?';

/** Embeds every text with a distinct vector, except the question: all zeros. */
function zeroForQuestion(question: string): EmbeddingModel {
  const seeds = new Map<string, number>();
  return {
    id: 'zero-for-question',
    dimensions: async () => DIMS,
    embed: async (texts) =>
      texts.map((t) => {
        if (t === question) return new Array<number>(DIMS).fill(0);
        if (!seeds.has(t)) seeds.set(t, 11 + seeds.size);
        return testVector(seeds.get(t)!, DIMS);
      }),
  };
}

if (SERVER_STORE_SKIP)
  console.warn(`degenerate-embedding recall skips the real server: ${SERVER_STORE_SKIP}`);

describe.each(STORE_ENGINES)('a degenerate question embedding on %s', (engine) => {
  let harness: StoreHarness;
  let store: SqlMemoryStore;
  let service: MemoryService;
  const embedder = zeroForQuestion(QUESTION);

  beforeAll(async () => {
    harness = await createStoreHarness(engine);
    store = harness.open();
    await store.init({ model: embedder.id, dimensions: DIMS });
    service = new MemoryService({ store, embedder });
    await service.add({ user: 'ann' }, { kind: 'context', text: LOYAL });
    await service.add({ user: 'ann' }, { kind: 'context', text: EUROS });
    // Another user with the very same words: never recalled for ann.
    await service.add({ user: 'ben' }, { kind: 'context', text: `${LOYAL} (ben)` });
  });
  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('recall finds the memory by its words and says so', async () => {
    const notes: string[] = [];
    const recalled = await service.recall({
      user: 'ann',
      question: QUESTION,
      tablesInPlay: [],
      onNote: (note) => notes.push(note),
    });
    expect(recalled.map((r) => [r.memory.text, r.why])).toEqual([[LOYAL, 'words']]);
    expect(notes).toEqual([WORD_SEARCH_NOTE]);
    // A question with a usable vector goes on by similarity, without the note.
    const usual: string[] = [];
    await service.recall({
      user: 'ann',
      question: 'euros',
      tablesInPlay: [],
      onNote: (note) => usual.push(note),
    });
    expect(usual).toEqual([]);
  });

  it('memory search answers by words with the note instead of "No memories"', async () => {
    const { results, notes } = await searchMemories({ store, service, embedder }, { user: 'ann' }, QUESTION, {
      zone: 'UTC',
    });
    expect(results.map((m) => m.text)).toEqual([LOYAL]);
    expect(results[0]?.similarity).toBeUndefined();
    expect(notes).toEqual([WORD_SEARCH_NOTE]);
    const ben = await searchMemories({ store, service, embedder }, { user: 'ben' }, QUESTION, {
      zone: 'UTC',
    });
    expect(ben.results.map((m) => m.text)).toEqual([`${LOYAL} (ben)`]);
  });

  it('a word search treats %, _ and backslash literally', async () => {
    await service.add({ user: 'cat' }, { kind: 'context', text: 'Margin is 100% of cost' });
    const { results } = await searchMemories({ store, service, embedder }, { user: 'cat' }, QUESTION, {
      zone: 'UTC',
    });
    expect(results).toEqual([]);
  });
});

describe('the real embedding client: an all-zero vector for a question', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama({
      embed: (text: string) => (text === QUESTION ? new Array<number>(384).fill(0) : hashEmbedding(text)),
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('is refused for storing, and marked so recall falls back to words', async () => {
    const embedder = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
    await expect(embedder.embed([QUESTION])).rejects.toMatchObject({
      code: 'model_output',
      details: { degenerate: true },
    });
    expect(await embedQuery(embedder, QUESTION)).toEqual([]);
    expect(await embedQuery(embedder, 'euros')).toHaveLength(384);
  });
});

describe('through ask (in process, PGlite)', () => {
  let p: MemoryPipeline;
  beforeAll(async () => {
    p = await startMemoryPipeline();
  });
  afterAll(async () => {
    await p?.close();
  });

  it('a message that teaches and asks: the taught memory is in the turn’s evidence and was applied now', async () => {
    p.sqlReply = (prompt) =>
      prompt.includes('From now on only delivered orders')
        ? "```sql\nSELECT count(*) AS n FROM orders WHERE status = 'delivered'\n```"
        : 'SELECT broken';
    const { outcome } = await p.ask(
      'hana',
      'From now on only delivered orders — how many orders are there?',
      {
        conversationId: 'conv-both',
      },
    );
    expect(outcome.kind).toBe('both');
    const taught = outcome.remembered?.[0];
    expect(taught).toMatchObject({ action: 'ADD', kind: 'preference' });
    const taughtId = taught?.id ?? '';
    expect(taughtId).toMatch(/^[0-9a-f-]{36}$/);
    expect(outcome.appliedMemories.map((m) => m.id)).toEqual([taughtId]);

    const [turn] = await p.store.recentTurns({ user: 'hana' }, 'conv-both');
    expect(turn?.appliedMemories).toEqual([
      { id: taughtId, kind: 'preference', text: 'From now on only delivered orders' },
    ]);
    expect(turn?.recalledMemories).toEqual([]);

    const provenance = await memoryProvenance(p.store, { user: 'hana' }, taughtId);
    expect(provenance?.lastAppliedAt).toEqual(expect.any(String));
    expect(Date.now() - Date.parse(provenance!.lastAppliedAt!)).toBeLessThan(60_000);
  });
});

describe('ask with a question whose embedding is all zeros (in process, PGlite)', () => {
  let p: MemoryPipeline;
  beforeAll(async () => {
    p = await startMemoryPipeline({
      embed: (text) => (text === QUESTION ? new Array<number>(384).fill(0) : hashEmbedding(text)),
    });
  });
  afterAll(async () => {
    await p?.close();
  });

  it('answers with the memory found by its words, and says so', async () => {
    await p.service.add({ user: 'ann' }, { kind: 'context', text: LOYAL });
    await p.service.add({ user: 'ben' }, { kind: 'context', text: `${LOYAL} (ben)` });
    const { outcome } = await p.ask('ann', QUESTION);
    expect(outcome.sql).not.toBeNull();
    expect(outcome.recalledMemories.map((m) => m.text)).toEqual([LOYAL]);
    expect(outcome.memoryProblems).toEqual([WORD_SEARCH_NOTE]);
    const prompt = p.sqlPrompts.at(-1) ?? '';
    expect(prompt).toContain(LOYAL);
    expect(prompt).not.toContain('(ben)');
  });
});
