/**
 * Memory search benchmark: one user's top-k among many users' memories.
 *
 *   npx tsx bench/memory-search.ts [--users 2000] [--per-user 100] [--dims 384] [--k 5]
 *                                  [--sample 200] [--engine both|pglite|server-style] [--quick] [--json]
 *
 * Loads users × per-user clustered random vectors into the embedded store (multi-row inserts
 * through `unnest`, then one HNSW build), then for a sample of users measures side by side:
 *   (a) exact   — the store's `search` (scope materialised first, exact cosine ranking);
 *   (b) hnsw    — `WHERE scope = … ORDER BY embedding <=> q LIMIT k` forced onto the global HNSW
 *                 index (pgvector post-filters the index's ef_search=40 candidates: often short);
 *   (c) hnsw-it — the same with pgvector 0.8 iterative scans (`hnsw.iterative_scan = strict_order`).
 * Prints p50/p95 latency, recall@k against (a), and how many answers came back short.
 * `--quick`: 200 users × 50 (CI size). "server-style" = `pg` over TCP to the same data served by
 * pglite-socket (wire protocol + pool; there is no pgvector on the Debian server here).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import {
  createMemoryStore,
  createPgliteClient,
  createPostgresClient,
  HNSW_INDEX,
  migrate,
  type SqlClient,
} from '../src/memory/store/index.js';
import { setupEmbedding, writeEmbeddingMeta } from '../src/memory/store/migrations.js';
import { contentHash } from '../src/memory/store/rows.js';
import { scopeRef } from '../src/memory/store/scope.js';

const { values: args } = parseArgs({
  options: {
    users: { type: 'string' },
    'per-user': { type: 'string' },
    dims: { type: 'string', default: '384' },
    k: { type: 'string', default: '5' },
    sample: { type: 'string', default: '200' },
    engine: { type: 'string', default: 'both' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const USERS = Number(args.users ?? (args.quick ? 200 : 2000));
const PER_USER = Number(args['per-user'] ?? (args.quick ? 50 : 100));
const DIMS = Number(args.dims);
const K = Number(args.k);
const SAMPLE = Math.min(Number(args.sample), USERS);
const log = (line: string) => process.stderr.write(`${line}\n`);

// ---- deterministic clustered vectors ----------------------------------------------------------
let seed = 42;
function random(): number {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
}
function gaussian(): number {
  return Math.sqrt(-2 * Math.log(random() || 1e-12)) * Math.cos(2 * Math.PI * random());
}
function normalize(values: number[]): number[] {
  const norm = Math.hypot(...values) || 1;
  return values.map((value) => value / norm);
}
const TOPICS = Array.from({ length: 64 }, () => normalize(Array.from({ length: DIMS }, gaussian)));
/** A memory: one of 64 shared topics + the user's own direction + noise (users talk about the same things). */
function memoryVector(userDirection: number[]): number[] {
  const topic = TOPICS[Math.floor(random() * TOPICS.length)] as number[];
  return normalize(
    topic.map((t, i) => t + 0.6 * (userDirection[i] ?? 0) + ((0.5 * gaussian()) / Math.sqrt(DIMS)) * 4),
  );
}
const literal = (values: number[]): string => `[${values.map((v) => v.toFixed(5)).join(',')}]`;

// ---- load --------------------------------------------------------------------------------------
async function load(client: SqlClient): Promise<Map<string, number[][]>> {
  await migrate(client);
  await client.transaction(async (tx) => {
    await tx.query(`ALTER TABLE sqlrecall_memories ALTER COLUMN embedding TYPE vector(${DIMS})`);
    await writeEmbeddingMeta(tx, 'bench-embed', DIMS);
  });
  const samples = new Map<string, number[][]>();
  const sampleEvery = Math.max(1, Math.floor(USERS / SAMPLE));
  const BATCH_USERS = Math.max(1, Math.floor(2000 / PER_USER));
  const started = Date.now();
  for (let u = 0; u < USERS; u += BATCH_USERS) {
    const cols: unknown[][] = [[], [], [], [], []];
    for (let user = u; user < Math.min(USERS, u + BATCH_USERS); user += 1) {
      const id = `user-${user}`;
      const ref = scopeRef({ user: id });
      const direction = normalize(Array.from({ length: DIMS }, gaussian));
      const vectors: number[][] = [];
      for (let m = 0; m < PER_USER; m += 1) {
        const v = memoryVector(direction);
        vectors.push(v);
        const text = `memory ${m} of ${id}`;
        cols[0]?.push(ref.key);
        cols[1]?.push(id);
        cols[2]?.push(text);
        cols[3]?.push(literal(v));
        cols[4]?.push(contentHash('term', text));
      }
      if (user % sampleEvery === 0 && samples.size < SAMPLE) samples.set(id, vectors);
    }
    await client.query(
      `INSERT INTO sqlrecall_memories (id, scope_key, scope_user, kind, text, embedding, embedding_model, content_hash)
       SELECT gen_random_uuid(), k, u, 'term', t, e::vector, 'bench-embed', h
       FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[]) AS r(k, u, t, e, h)`,
      cols,
    );
    if ((u / BATCH_USERS) % 50 === 0)
      log(
        `  inserted ${Math.min(USERS, u + BATCH_USERS) * PER_USER} rows (${((Date.now() - started) / 1000).toFixed(0)} s)`,
      );
  }
  log(`  insert: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const indexStarted = Date.now();
  await client.query("SET maintenance_work_mem = '512MB'").catch(() => undefined);
  await client.transaction((tx) => setupEmbedding(tx, DIMS));
  await client.query('ANALYZE sqlrecall_memories');
  log(`  HNSW build + analyze: ${((Date.now() - indexStarted) / 1000).toFixed(1)} s`);
  return samples;
}

// ---- measure -----------------------------------------------------------------------------------
interface Row {
  engine: string;
  method: string;
  p50Ms: number;
  p95Ms: number;
  recallAtK: number;
  shortAnswers: number;
  queries: number;
  plan: string;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? Number.NaN;
}

async function planOf(
  client: SqlClient,
  sql: string,
  params: unknown[],
  settings: string[],
): Promise<string> {
  return client.transaction(async (tx) => {
    for (const setting of settings) await tx.query(setting);
    const rows = await tx.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${sql}`, params);
    const plan = rows.map((row) => row['QUERY PLAN']).join(' ');
    return plan.includes(HNSW_INDEX)
      ? 'hnsw index scan'
      : plan.includes('Sort')
        ? 'scope index + exact sort'
        : plan.slice(0, 60);
  });
}

const HNSW_SQL = `SELECT id FROM sqlrecall_memories
  WHERE scope_key = $1 AND scope_user = $2 AND status = 'active'
  ORDER BY embedding <=> $3::vector LIMIT ${K}`;
// Push the planner onto the ordered HNSW scan (otherwise it prefers the selective scope index).
const FORCE_HNSW = [
  'SET LOCAL enable_seqscan = off',
  'SET LOCAL enable_bitmapscan = off',
  'SET LOCAL enable_sort = off',
];

async function measure(engine: string, client: SqlClient, samples: Map<string, number[][]>): Promise<Row[]> {
  const store = createMemoryStore({ client });
  await store.init({ model: 'bench-embed', dimensions: DIMS });
  const queries = [...samples.entries()].map(([user, vectors]) => {
    const base = vectors[Math.floor(random() * vectors.length)] as number[];
    return { user, embedding: normalize(base.map((x) => x + (0.3 * gaussian()) / Math.sqrt(DIMS))) };
  });
  const methods = [
    { method: 'exact scoped (store.search)', settings: [] as string[] },
    { method: 'global HNSW + user filter', settings: FORCE_HNSW },
    {
      method: 'HNSW iterative strict_order',
      settings: [...FORCE_HNSW, 'SET LOCAL hnsw.iterative_scan = strict_order'],
    },
  ];
  const times: number[][] = methods.map(() => []);
  const found: string[][][] = methods.map(() => []);
  // Warm-up, then interleave methods per query so caches and noise hit all alike.
  for (const q of queries.slice(0, 5))
    await store.search({ user: q.user }, { embedding: q.embedding, topK: K });
  for (const q of queries) {
    const ref = scopeRef({ user: q.user });
    for (const [m, method] of methods.entries()) {
      let ids: string[];
      let elapsed: number;
      if (m === 0) {
        const start = performance.now();
        const hits = await store.search({ user: q.user }, { embedding: q.embedding, topK: K });
        elapsed = performance.now() - start;
        ids = hits.map((hit) => hit.id);
      } else {
        const result = await client.transaction(async (tx) => {
          for (const setting of method.settings) await tx.query(setting);
          const start = performance.now();
          const rows = await tx.query<{ id: string }>(HNSW_SQL, [ref.key, ref.id, literal(q.embedding)]);
          return { rows, elapsed: performance.now() - start };
        });
        elapsed = result.elapsed;
        ids = result.rows.map((row) => String(row.id));
      }
      times[m]?.push(elapsed);
      found[m]?.push(ids);
    }
  }
  const q0 = queries[0] as { user: string; embedding: number[] };
  const ref0 = scopeRef({ user: q0.user });
  const rows: Row[] = [];
  for (const [m, method] of methods.entries()) {
    const sorted = [...(times[m] ?? [])].sort((a, b) => a - b);
    let recall = 0;
    let short = 0;
    for (const [i, ids] of (found[m] ?? []).entries()) {
      const truth = new Set(found[0]?.[i] ?? []);
      recall += truth.size === 0 ? 1 : ids.filter((id) => truth.has(id)).length / truth.size;
      if (ids.length < Math.min(K, PER_USER)) short += 1;
    }
    const plan =
      m === 0
        ? 'materialised scope + exact sort'
        : await planOf(client, HNSW_SQL, [ref0.key, ref0.id, literal(q0.embedding)], method.settings);
    rows.push({
      engine,
      method: method.method,
      p50Ms: percentile(sorted, 50),
      p95Ms: percentile(sorted, 95),
      recallAtK: recall / queries.length,
      shortAnswers: short,
      queries: queries.length,
      plan,
    });
  }
  return rows;
}

function table(rows: Row[]): string {
  const header = ['engine', 'method', 'p50 ms', 'p95 ms', `recall@${K}`, `short (<${K})`, 'plan'];
  const body = rows.map((r) => [
    r.engine,
    r.method,
    r.p50Ms.toFixed(2),
    r.p95Ms.toFixed(2),
    r.recallAtK.toFixed(3),
    `${r.shortAnswers}/${r.queries}`,
    r.plan,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [line(header), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...body.map(line)].join('\n');
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-bench-mem-'));
  const rows: Row[] = [];
  const total = USERS * PER_USER;
  log(
    `memory search benchmark: ${USERS} users × ${PER_USER} = ${total} memories, ${DIMS} dims, top-${K}, ${SAMPLE} sampled users`,
  );
  const started = Date.now();
  try {
    const embedded = createPgliteClient(dir);
    const samples = await load(embedded);
    if (args.engine !== 'server-style') rows.push(...(await measure('pglite', embedded, samples)));
    await embedded.close();
    if (args.engine !== 'pglite') {
      // The same data dir, served over the wire protocol.
      const db = new PGlite(dir, { extensions: { vector } });
      await db.waitReady;
      const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 8 });
      await server.start();
      const client = createPostgresClient(`postgres://postgres@${server.getServerConn()}/postgres`, {
        maxConnections: 2,
      });
      try {
        rows.push(...(await measure('server-style', client, samples)));
      } finally {
        await client.close();
        await server.stop();
        await db.close();
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const result = {
    users: USERS,
    perUser: PER_USER,
    rows: total,
    dims: DIMS,
    k: K,
    sampledUsers: SAMPLE,
    totalSeconds: (Date.now() - started) / 1000,
    results: rows,
  };
  if (args.json) process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  else {
    process.stdout.write(
      `${USERS} users × ${PER_USER} memories = ${total} rows, ${DIMS} dims, top-${K}, ${SAMPLE} users sampled\n`,
    );
    process.stdout.write(`${table(rows)}\n`);
    process.stdout.write(`total ${result.totalSeconds.toFixed(0)} s\n`);
  }
}

await main();
