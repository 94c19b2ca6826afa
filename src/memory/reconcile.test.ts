import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { testVector } from '../../test/support/memory-store.js';
import { type ScriptedOllama, startScriptedOllama } from '../../test/support/scripted/server.js';
import type { MemoryScope } from '../core/memory.js';
import { createOllamaChatModel } from '../models/ollama/chat-model.js';
import type { ExtractedFact } from './extract.js';
import { RECONCILE_PROMPT_MARKER } from './prompts.js';
import { reconcileFact } from './reconcile.js';
import { createMemoryStore, type SqlMemoryStore } from './store/index.js';
import { DEFAULT_THRESHOLDS, parseThresholdTable, thresholdsFor } from './thresholds.js';

const DIMS = 8;

/** A unit vector whose cosine similarity with `base` is exactly `similarity`. */
function vectorAt(base: number[], similarity: number): number[] {
  const other = testVector(999, DIMS);
  const dot = other.reduce((s, x, i) => s + x * base[i]!, 0);
  const orthogonal = other.map((x, i) => x - dot * base[i]!);
  const norm = Math.hypot(...orthogonal);
  const unit = orthogonal.map((x) => x / norm);
  const sine = Math.sqrt(1 - similarity * similarity);
  return base.map((x, i) => similarity * x + sine * unit[i]!);
}

const fact = (text: string, extra: Partial<ExtractedFact> = {}): ExtractedFact => ({
  kind: 'preference',
  text,
  sql: null,
  tables: [],
  columns: [],
  ...extra,
});

describe('reconcileFact', () => {
  let server: ScriptedOllama;
  let store: SqlMemoryStore;
  let scope: MemoryScope;
  let n = 0;
  const base = testVector(1, DIMS);

  beforeAll(async () => {
    server = await startScriptedOllama();
    store = createMemoryStore();
    await store.init({ model: 'test-embed', dimensions: DIMS });
  });
  afterAll(async () => {
    await store.close();
    await server.close();
  });
  beforeEach(async () => {
    server.reset();
    n += 1;
    scope = { user: `user-${n}` };
    await store.write(scope, [
      {
        op: 'add',
        memory: {
          kind: 'preference',
          text: 'only delivered orders',
          sql: "orders.status = 'delivered'",
          tables: ['public.orders'],
          columns: ['public.orders.status'],
        },
        embedding: base,
      },
    ]);
  });

  const decide = (f: ExtractedFact, embedding: number[], withModel = true) =>
    reconcileFact({
      scope,
      fact: f,
      embedding,
      store,
      thresholds: DEFAULT_THRESHOLDS,
      chat: withModel ? createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' }) : undefined,
    });

  it('an exact duplicate (case and spacing aside) is a NOOP without a model call', async () => {
    const d = await decide(fact('Only  Delivered orders!'), vectorAt(base, 0.2));
    expect(d.op.op).toBe('noop');
    expect(d.reason).toBe('exact duplicate');
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('similarity ≥ 0.95 is a NOOP, below 0.70 an ADD, both without a model call', async () => {
    expect((await decide(fact('only the delivered orders'), vectorAt(base, 0.97))).op.op).toBe('noop');
    const added = await decide(fact('amounts in thousands'), vectorAt(base, 0.5));
    expect(added.op.op).toBe('add');
    expect(added.reason).toMatch(/0\.500 < 0\.7/);
    expect(server.chatRequests()).toHaveLength(0);
  });

  it('between 0.70 and 0.95 the model decides, seeing candidates as small integer ids', async () => {
    server.enqueue(JSON.stringify({ action: 'UPDATE', id: 1 }));
    const d = await decide(fact('only delivered and shipped orders'), vectorAt(base, 0.85));
    expect(d.op).toMatchObject({ op: 'update', memory: { text: 'only delivered and shipped orders' } });
    expect(d.target?.text).toBe('only delivered orders');
    const [request] = server.chatRequests();
    expect(request?.messages[0]?.content.startsWith(RECONCILE_PROMPT_MARKER)).toBe(true);
    expect(request?.lastUserMessage).toContain(
      "1. [preference] only delivered orders (SQL: orders.status = 'delivered')",
    );
    expect(request?.lastUserMessage).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}/); // no UUIDs in the prompt
  });

  it('an unknown id from the model is ignored: the fact is added, never dropped', async () => {
    server.enqueue(JSON.stringify({ action: 'SUPERSEDE', id: 7 }));
    const d = await decide(fact('only delivered and shipped orders'), vectorAt(base, 0.85));
    expect(d.op.op).toBe('add');
    expect(d.reason).toMatch(/unknown id \(7\)/);
  });

  it('an unreadable decision (after one retry) adds the fact', async () => {
    server.enqueue('SUPERSEDE 1 please', 'I think SUPERSEDE');
    const d = await decide(fact('only delivered and shipped orders'), vectorAt(base, 0.85));
    expect(d.op.op).toBe('add');
    expect(server.chatRequests()).toHaveLength(2);
  });

  it('a contradiction that shares no words but the same column reaches the model and supersedes', async () => {
    server.enqueue(JSON.stringify({ action: 'SUPERSEDE', id: 1 }));
    const d = await decide(
      fact('show all statuses again', { columns: ['public.orders.status'], tables: ['public.orders'] }),
      vectorAt(base, 0.05),
    );
    expect(d.op).toMatchObject({ op: 'supersede', memory: { text: 'show all statuses again' } });
    expect(d.target?.text).toBe('only delivered orders');
  });

  it('a preference on the same column with another value supersedes by rule, with or without a model', async () => {
    const shipped = (text: string) =>
      fact(text, {
        sql: "orders.status = 'shipped'",
        columns: ['public.orders.status'],
        tables: ['public.orders'],
      });
    for (const withModel of [false, true]) {
      server.reset();
      const d = await decide(shipped('only shipped orders'), vectorAt(base, 0.3), withModel);
      expect(d.op).toMatchObject({ op: 'supersede', memory: { text: 'only shipped orders' } });
      expect(d.target?.text).toBe('only delivered orders');
      expect(d.reason).toMatch(/rule/);
      expect(server.chatRequests()).toHaveLength(0);
    }
    // the same value again is no conflict (a different column neither)
    const same = await decide(
      fact('delivered ones only', {
        sql: "orders.status = 'delivered'",
        columns: ['public.orders.status'],
        tables: ['public.orders'],
      }),
      vectorAt(base, 0.3),
      false,
    );
    expect(same.op.op).toBe('add');
  });

  it('without a model (memory add) the grey zone is an ADD', async () => {
    const d = await decide(fact('only delivered and shipped orders'), vectorAt(base, 0.85), false);
    expect(d.op.op).toBe('add');
    expect(server.chatRequests()).toHaveLength(0);
  });
});

describe('thresholds per embedding model', () => {
  it('parses a table and picks by model name, tag-insensitive, with * as the default', () => {
    const table = parseThresholdTable('all-minilm=0.70:0.95, nomic-embed-text=0.60:0.90, *=0.5:0.99')!;
    expect(thresholdsFor('nomic-embed-text:latest', table)).toEqual({ low: 0.6, high: 0.9 });
    expect(thresholdsFor('all-minilm', table)).toEqual({ low: 0.7, high: 0.95 });
    expect(thresholdsFor('mxbai-embed-large', table)).toEqual({ low: 0.5, high: 0.99 });
    expect(thresholdsFor('mxbai-embed-large', {})).toEqual(DEFAULT_THRESHOLDS);
    expect(parseThresholdTable('all-minilm=0.9:0.7')).toBeUndefined();
    expect(parseThresholdTable('nonsense')).toBeUndefined();
  });
});
