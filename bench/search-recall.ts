/**
 * Approximate (HNSW) against exact memory search on the pipeline-overhead data: one user with
 * `--memories` memories (the same texts and lexical-hash 384-dimension embeddings as
 * `bench/pipeline-overhead.ts`), written through the memory store.
 *
 *   npx tsx bench/search-recall.ts [--memories 10000] [--queries 100] [--data-dir DIR] [--ef N] [--json]
 *
 * Queries: `--queries` bench questions ("How many rows are in table N?") and as many paraphrases
 * of stored memories ("what does a <word> of type <i> mean"), embedded like the memories. Each is
 * searched by the store's exact path (`search: { exactUpTo: Infinity }`) and by its default
 * policy (which takes the HNSW path for this scope), top-5 of the recalled kinds.
 * recall@5 = |approximate ∩ exact| / |exact| (ids); "with ties" also counts an approximate hit
 * whose distance equals the exact 5th distance (hash embeddings give many equal distances).
 * `--floor S`: least similarity, as recall passes it (DEFAULT_RECALL_MIN_SIMILARITY is 0.3); default none.
 * `--ef N`: the approximate path's `hnsw.ef_search` (default: the store's, 100).
 * `--data-dir DIR`: keep the store there and reuse it on the next run (writing 10,000 memories
 * takes 100–200 s on this machine).
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { MemoryKind, MemoryOp, ScoredMemory } from '../src/core/memory.js';
import { percentile } from '../src/eval/report.js';
import { createMemoryStore, createPgliteClient } from '../src/memory/store/index.js';
import type { SearchPath } from '../src/memory/store/search.js';
import { hashEmbedding } from '../test/support/scripted/embedding.js';
import { memoryText, WORDS } from './support/memory-data.js';

const { values: args } = parseArgs({
  options: {
    memories: { type: 'string', default: '10000' },
    queries: { type: 'string', default: '100' },
    'data-dir': { type: 'string' },
    floor: { type: 'string' },
    ef: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});
const memoryCount = Number(args.memories);
const minSimilarity = args.floor === undefined ? undefined : Number(args.floor);
const queryCount = Number(args.queries);
const USER = 'bench-user';
const TOP_K = 5;
const KINDS: MemoryKind[] = ['term', 'metric', 'entity', 'example', 'context'];
async function main(): Promise<void> {
  const dataDir = args['data-dir'] ?? mkdtempSync(join(tmpdir(), 'sqlrecall-bench-recall-'));
  const fresh = !existsSync(join(dataDir, 'PG_VERSION'));
  const client = createPgliteClient(dataDir);
  const exact = createMemoryStore({ client, search: { exactUpTo: Number.POSITIVE_INFINITY } });
  let path: SearchPath | undefined;
  const approximate = createMemoryStore({
    client,
    onSearchPath: (p) => (path = p),
    ...(args.ef ? { search: { efSearch: Number(args.ef) } } : {}),
  });
  try {
    const scope = { user: USER };
    if (fresh) {
      await exact.init({ model: 'all-minilm', dimensions: 384 });
      const started = performance.now();
      for (let from = 0; from < memoryCount; from += 500) {
        const ops: MemoryOp[] = [];
        for (let i = from; i < Math.min(memoryCount, from + 500); i += 1) {
          const m = memoryText(i, 100);
          ops.push({ op: 'add', memory: { kind: m.kind, text: m.text }, embedding: hashEmbedding(m.text) });
        }
        await exact.write(scope, ops);
      }
      process.stderr.write(
        `${memoryCount} memories written in ${((performance.now() - started) / 1000).toFixed(1)} s\n`,
      );
    }
    const info = await exact.embeddingInfo();
    if (!info) throw new Error('the store has no embedding model recorded');
    await exact.init(info);
    await approximate.init(info);
    const stored = (await exact.list(scope, { limit: memoryCount + 10 })).length;
    const queries: { set: string; text: string }[] = [];
    for (let q = 0; q < queryCount; q += 1) {
      queries.push({ set: 'questions', text: `How many rows are in table ${q * 7}?` });
      queries.push({
        set: 'paraphrases',
        text: `what does a ${WORDS[q % WORDS.length]} of type ${(q * 97) % stored} mean`,
      });
    }
    const rows: Record<
      string,
      { ids: number[]; ties: number[]; exactMs: number[]; approxMs: number[]; paths: Record<string, number> }
    > = {};
    const overlap = (a: ScoredMemory[], b: ScoredMemory[]) => {
      const ids = new Set(b.map((m) => m.id));
      const kth = b[b.length - 1]?.similarity ?? 1;
      return {
        ids: b.length === 0 ? (a.length === 0 ? 1 : 0) : a.filter((m) => ids.has(m.id)).length / b.length,
        ties:
          b.length === 0
            ? 1
            : Math.min(b.length, a.filter((m) => ids.has(m.id) || m.similarity >= kth - 1e-9).length) /
              b.length,
      };
    };
    // Warm both paths (first reads of the pages).
    for (const q of queries.slice(0, 4)) {
      const embedding = hashEmbedding(q.text);
      await exact.search(scope, { embedding, topK: TOP_K, kinds: KINDS });
      await approximate.search(scope, { embedding, topK: TOP_K, kinds: KINDS });
    }
    for (const q of queries) {
      const embedding = hashEmbedding(q.text);
      let t = performance.now();
      const e = await exact.search(scope, { embedding, topK: TOP_K, kinds: KINDS, minSimilarity });
      const exactMs = performance.now() - t;
      path = undefined;
      t = performance.now();
      const a = await approximate.search(scope, { embedding, topK: TOP_K, kinds: KINDS, minSimilarity });
      const approxMs = performance.now() - t;
      rows[q.set] ??= { ids: [], ties: [], exactMs: [], approxMs: [], paths: {} };
      const r = rows[q.set]!;
      const o = overlap(a, e);
      r.ids.push(o.ids);
      r.ties.push(o.ties);
      r.exactMs.push(exactMs);
      r.approxMs.push(approxMs);
      r.paths[path ?? 'none'] = (r.paths[path ?? 'none'] ?? 0) + 1;
    }
    const mean = (v: number[]) => v.reduce((x, y) => x + y, 0) / v.length;
    const report = Object.entries(rows).map(([set, r]) => ({
      set,
      queries: r.ids.length,
      recallAt5: Number(mean(r.ids).toFixed(3)),
      recallAt5WithTies: Number(mean(r.ties).toFixed(3)),
      exactMs: {
        p50: Number(percentile(r.exactMs, 50).toFixed(2)),
        p95: Number(percentile(r.exactMs, 95).toFixed(2)),
      },
      approximateMs: {
        p50: Number(percentile(r.approxMs, 50).toFixed(2)),
        p95: Number(percentile(r.approxMs, 95).toFixed(2)),
      },
      paths: r.paths,
    }));
    const load = loadavg()
      .map((x) => x.toFixed(2))
      .join(' / ');
    if (args.json) {
      process.stdout.write(
        `${JSON.stringify({ memories: stored, topK: TOP_K, report, loadAverage: load }, null, 2)}\n`,
      );
      return;
    }
    console.log(
      `HNSW path vs exact: ${stored} memories of one user, 384 dims (lexical hash), top-${TOP_K}, floor ${minSimilarity ?? 'none'}, ef_search ${args.ef ?? 'default'}`,
    );
    console.log(
      '| queries | n | recall@5 | recall@5 (ties) | exact p50 / p95 ms | approximate p50 / p95 ms | paths taken |',
    );
    console.log('|---|---:|---:|---:|---:|---:|---|');
    for (const r of report)
      console.log(
        `| ${r.set} | ${r.queries} | ${r.recallAt5} | ${r.recallAt5WithTies} | ${r.exactMs.p50} / ${r.exactMs.p95} | ${r.approximateMs.p50} / ${r.approximateMs.p95} | ${JSON.stringify(r.paths)} |`,
      );
    console.log(`load average (1/5/15 min): ${load}`);
  } finally {
    await client.close();
    if (!args['data-dir']) rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`benchmark failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
