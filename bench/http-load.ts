/**
 * HTTP load benchmark (issue 6): concurrent users asking questions through the real HTTP server
 * (`@hono/node-server` on loopback, multi-user mode with tokens), the scripted zero-delay model,
 * the small shop on PGlite and the embedded memory store.
 *
 *   npx tsx bench/http-load.ts [--users 50] [--questions 20] [--memory-db URL] [--quick] [--json]
 *
 * `--memory-db`: a server PostgreSQL + pgvector memory database (as MEMORY_DATABASE_URL; pool size
 * from SQLRECALL_MEMORY_POOL_SIZE, default 4) instead of the embedded store. Use a scratch database:
 * the run adds users `user0…` and their memories.
 *
 * Each user first teaches their own preference ("Always show me customers from Land<xy>"), then
 * asks `--questions` questions one after another; all users run at once. Checks: every response is
 * 200, and every answer carries only its own user's memory (applied chip id and SQL filter) — no
 * cross-talk. Overhead per question = request wall time (client side) − time inside the chat
 * model's `generate` calls for that question (a client-side wrapper keyed by the question text;
 * the loopback round trip to the model counts as model time). Query embeddings are part of the
 * overhead, as in `bench/pipeline-overhead.ts`.
 *
 * RSS is this process's: the server, the shop and memory PGlite instances, and also the load
 * clients and the scripted model, which run in the same process, so it is an upper bound of a
 * `sqlrecall serve` process under this load. Two figures: the largest RSS sampled every 100 ms
 * while the users ask (the server under load), and the process's peak (`maxRSS`), which also
 * counts the set-up: creating the shop fixture and initdb of the fresh memory store.
 */
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import type { ChatModel } from '../src/core/ports.js';
import { percentile } from '../src/eval/report.js';
import { startTestServer } from '../test/support/server-app.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '50' },
    questions: { type: 'string', default: '20' },
    json: { type: 'boolean', default: false },
    /** CI size (`npm run bench -- --quick`): 10 users × 5 questions. */
    quick: { type: 'boolean', default: false },
    'memory-db': { type: 'string' },
  },
});
const USERS = values.quick ? 10 : Number(values.users);
/** A letters-only country name per user (the scripted extraction reads letters only). */
const land = (u: number) =>
  `Land${String.fromCharCode(97 + (u % 26))}${String.fromCharCode(97 + Math.floor(u / 26))}`;
const QUESTIONS = values.quick ? 5 : Number(values.questions);

const s = await startTestServer('users', values['memory-db']);
// Meter model time per question: the question text is in every prompt of its pipeline.
const modelMs = new Map<string, number>();
const inner = s.runtime.chat();
const metered: ChatModel = {
  ...inner,
  id: inner.id,
  async generate(request, options) {
    const started = performance.now();
    try {
      return await inner.generate(request, options);
    } finally {
      const key = /LOADQ-\d+-\d+/.exec(request.messages.map((m) => m.content).join('\n'))?.[0];
      if (key) modelMs.set(key, (modelMs.get(key) ?? 0) + performance.now() - started);
    }
  },
};
s.runtime.chat = () => metered;
s.sqlReply = (prompt) => {
  const country = /customers from (Land[a-z]{2})/.exec(prompt)?.[1];
  return `SELECT c.name, sum(o.total_amount) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id${country ? ` WHERE c.country = '${country}'` : ''} GROUP BY c.name`;
};
// A fresh app so the Assistant is built on the metered model.
const app = s.appFor({ mode: 'users', users: s.users });
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
await new Promise((r) => server.once('listening', r));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const tokens: string[] = [];
for (let u = 0; u < USERS; u += 1) tokens.push(await s.users.add(`user${u}`));

async function post(token: string, body: unknown): Promise<{ status: number; doc: Record<string, unknown> }> {
  const res = await fetch(`${base}/api/ask`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json',
    },
    body: JSON.stringify(body),
  });
  return { status: res.status, doc: (await res.json()) as Record<string, unknown> };
}

const latencies: number[] = [];
const overheads: number[] = [];
const errors: string[] = [];
const crossTalk: string[] = [];
let loadRssBytes = process.memoryUsage().rss;
const sampler = setInterval(() => {
  loadRssBytes = Math.max(loadRssBytes, process.memoryUsage().rss);
}, 100);
const started = performance.now();
await Promise.all(
  tokens.map(async (token, u) => {
    const taught = await post(token, { question: `Always show me customers from ${land(u)}` });
    const memoryId = (taught.doc.remembered as { id: string }[] | undefined)?.[0]?.id;
    if (taught.status !== 200 || !memoryId) {
      errors.push(`user${u} teach: ${taught.status} ${JSON.stringify(taught.doc).slice(0, 200)}`);
      return;
    }
    for (let q = 0; q < QUESTIONS; q += 1) {
      const key = `LOADQ-${u}-${q}`;
      const t0 = performance.now();
      const r = await post(token, { question: `revenue per customer ${key}` });
      const ms = performance.now() - t0;
      if (r.status !== 200) {
        errors.push(`${key}: ${r.status} ${JSON.stringify(r.doc).slice(0, 200)}`);
        continue;
      }
      latencies.push(ms);
      overheads.push(ms - (modelMs.get(key) ?? 0));
      const applied = (r.doc.appliedMemories as { id: string }[]).map((m) => m.id);
      const sql = String(r.doc.sql);
      const others = [...sql.matchAll(/Land[a-z]{2}/g)].map((m) => m[0]).filter((n) => n !== land(u));
      if (
        applied.length !== 1 ||
        applied[0] !== memoryId ||
        !sql.includes(`'${land(u)}'`) ||
        others.length > 0
      )
        crossTalk.push(`${key}: applied ${applied.join(',')} sql ${sql}`);
    }
  }),
);
const wallS = (performance.now() - started) / 1000;
clearInterval(sampler);
loadRssBytes = Math.max(loadRssBytes, process.memoryUsage().rss);
const round = (n: number) => Math.round(n * 10) / 10;
const report = {
  memoryStore: values['memory-db'] ? 'server' : 'embedded',
  users: USERS,
  questionsPerUser: QUESTIONS,
  requests: latencies.length,
  errors: errors.length,
  crossTalk: crossTalk.length,
  wallSeconds: round(wallS),
  questionsPerSecond: round(latencies.length / wallS),
  latencyMs: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)) },
  overheadMs: { p50: round(percentile(overheads, 50)), p95: round(percentile(overheads, 95)) },
  modelMsPerQuestion: round([...modelMs.values()].reduce((a, b) => a + b, 0) / Math.max(1, modelMs.size)),
  /** Largest RSS sampled during the load (module comment), in MB. */
  loadRssMb: Math.round(loadRssBytes / 2 ** 20),
  /** Peak RSS of the whole run including set-up (module comment), in MB. */
  peakRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
};
if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  process.stdout.write(
    `${USERS} users × ${QUESTIONS} questions over HTTP (${report.memoryStore} memory store): ${report.requests} answered, ${report.errors} errors, ${report.crossTalk} cross-talk\n` +
      `wall ${report.wallSeconds} s (${report.questionsPerSecond} questions/s on one process)\n` +
      `latency p50 ${report.latencyMs.p50} ms, p95 ${report.latencyMs.p95} ms (zero-delay scripted model)\n` +
      `server overhead (latency − model time) p50 ${report.overheadMs.p50} ms, p95 ${report.overheadMs.p95} ms; model time ${report.modelMsPerQuestion} ms/question\n` +
      `RSS under load ${report.loadRssMb} MB max (server + load clients + scripted model in one process: an upper bound of the server's); process peak incl. set-up ${report.peakRssMb} MB\n`,
  );
  for (const e of [...errors, ...crossTalk].slice(0, 5)) process.stdout.write(`  ${e}\n`);
}
server.close();
await s.close();
process.exit(errors.length + crossTalk.length > 0 ? 1 : 0);
