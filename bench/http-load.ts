/**
 * HTTP load benchmark (issues 6 and 15): concurrent users asking questions through the shipped
 * server — `node bin/sqlrecall.js serve --users` as a CHILD process (run `npm run build` first: the
 * binary runs `dist/`), multi-user mode with tokens, on the small shop (PGlite) and the embedded
 * memory store in a fresh temp home. The scripted model (`test/support/scripted/server.ts`) and the
 * load clients run in this (the bench) process, so the server process is measured alone.
 *
 *   npx tsx bench/http-load.ts [--users 50] [--questions 20] [--model-delay-ms 0,1000]
 *     [--memory-db URL] [--bin [LABEL=]PATH]… [--cpu-prof DIR] [--quick] [--no-warm-up] [--json] [--out FILE]
 *
 * - `--model-delay-ms`: comma-separated delays; one row per delay (and per `--bin`), each on a
 *   fresh server process, home and set of users. The scripted model waits that long before it
 *   answers each chat request (embedding requests are not delayed). 0 measures saturation: every
 *   user's question queues on the one server process (on a 2-core machine that also runs the
 *   clients and the model); a local 7B model's pace (e.g. 1000 ms) measures the overhead users see.
 * - `--bin`: the CLI to serve with (default `bin/sqlrecall.js`); repeat it to compare builds side by
 *   side in one run, e.g. `--bin base=/tmp/base/bin/sqlrecall.js --bin bin/sqlrecall.js`.
 * - `--cpu-prof DIR`: runs each server with `node --cpu-prof --cpu-prof-dir=DIR` (a V8 profile
 *   per row, written when the server stops).
 * - `--memory-db`: a server PostgreSQL + pgvector memory database (as MEMORY_DATABASE_URL) instead
 *   of the embedded store. Use a scratch database: the run adds users `r<row>u<n>` and memories.
 * - `--quick` (CI, `npm run bench -- --quick`): 10 users × 5 questions, and no warm-up row.
 * - Before the reported rows, a warm-up row (≤ 20 users × 3 questions on the first `--bin`, not
 *   reported) lets V8 compile this process's clients and model server first: without it the first
 *   row alone came out 2–3× slower at p95. `--no-warm-up` skips it.
 * - `--json`: one JSON document `{ rows, loadAverage }` instead of the text; `--out FILE`: also
 *   write it to FILE.
 *
 * The scripted model keeps connections open as Ollama does (`keepAliveTimeoutMs: 0`); with the
 * test default (a 1 s idle timeout that Node announces, so undici drops each connection at once)
 * every model call of the server would open a new TCP connection, which production does not.
 *
 * Users and tokens: created before the server starts, with the same `UserDirectory.addUser` that
 * `sqlrecall users add` runs, on the same home (one process instead of one CLI start per user).
 *
 * Each user first teaches their own preference ("Always show me customers from Land<xy>"), then
 * asks `--questions` questions one after another; all users run at once. Checks: every response is
 * 200, and every answer carries only its own user's memory (applied chip id and SQL filter) — no
 * cross-talk.
 *
 * Model time per question: the time the scripted model spent on that question's requests — for
 * every chat and embedding request whose prompt or input holds the question's key (`LOADQ-…`),
 * from the request's arrival at the model to its response end (measured by the model server in
 * this process), clipped to the question's client request window, overlapping requests counted
 * once. Server overhead = client latency − model time: HTTP, auth, the memory store, the schema
 * context, the SQL guard, the query on the shop, the JSON answer, and the loopback hops.
 *
 * The overhead is also split into each user's first question and the others: every user sends
 * the first at the same moment (after the teach), so those queue as one wave behind each other;
 * with 20 questions per user that wave is 5 % of the sample, i.e. exactly where p95 sits.
 *
 * Server CPU: user + system time of the server process from `/proc/<pid>/stat` over the load, per
 * answered question: steadier than the p95, which moves with how the 50 users' waves line up.
 *
 * Server RSS: `/proc/<server pid>/status` VmRSS sampled every 100 ms while the users ask (the
 * largest is "under load"), and VmHWM at the end (the peak, including start-up: opening the shop,
 * initdb of the memory store, loading the models' metadata). Linux only.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { UserDirectory } from '../src/app/users.js';
import { loadConfig } from '../src/config/config.js';
import { percentile } from '../src/eval/report.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { pgliteShop } from '../test/support/fixtures.js';
import { messageOf } from '../test/support/memory-fixtures.js';
import { extractionFor } from '../test/support/memory-pipeline.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';

const { values } = parseArgs({
  options: {
    users: { type: 'string', default: '50' },
    questions: { type: 'string', default: '20' },
    'model-delay-ms': { type: 'string', default: '0,1000' },
    bin: { type: 'string', multiple: true },
    'cpu-prof': { type: 'string' },
    json: { type: 'boolean', default: false },
    /** Also write the JSON document to this file (with the text output on stdout). */
    out: { type: 'string' },
    /** CI size (`npm run bench -- --quick`): 10 users × 5 questions. */
    quick: { type: 'boolean', default: false },
    /** Skip the warm-up row (see below). */
    'no-warm-up': { type: 'boolean', default: false },
    'memory-db': { type: 'string' },
  },
});
const USERS = values.quick ? 10 : Number(values.users);
const QUESTIONS = values.quick ? 5 : Number(values.questions);
const DELAYS = values['model-delay-ms'].split(',').map((d) => Number(d.trim()));
if (DELAYS.some((d) => !Number.isFinite(d) || d < 0)) throw new Error('--model-delay-ms: numbers ≥ 0');
const BINS = (values.bin ?? ['bin/sqlrecall.js']).map((spec) => {
  const eq = spec.indexOf('=');
  return eq > 0
    ? { label: spec.slice(0, eq), path: resolve(spec.slice(eq + 1)) }
    : { label: spec, path: resolve(spec) };
});
/** A letters-only country name per user (the scripted extraction reads letters only). */
const land = (u: number) =>
  `Land${String.fromCharCode(97 + (u % 26))}${String.fromCharCode(97 + Math.floor(u / 26))}`;

// The scripted model: replies by purpose; every request's [arrival, response end] kept by key.
let chatDelayMs = 0;
const modelSpans = new Map<string, [number, number][]>();
/** Model requests per question key, by kind. */
const modelCalls = new Map<string, { chat: number; embed: number }>();
const KEY = /LOADQ-\d+-\d+-\d+/;
const model = await startScriptedOllama({
  // As Ollama: no idle timeout announced, so the server reuses its connections to the model.
  keepAliveTimeoutMs: 0,
  chat: (request) => {
    const delay = chatDelayMs > 0 ? { delayMs: chatDelayMs } : {};
    if (request.purpose === 'memory-extract')
      return { text: extractionFor(messageOf(request.lastUserMessage)), ...delay };
    if (request.purpose === 'memory-reconcile') return { text: JSON.stringify({ action: 'ADD' }), ...delay };
    const prompt = request.messages.map((m) => m.content).join('\n');
    if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
      const country = /customers from (Land[a-z]{2})/.exec(prompt)?.[1];
      const sql = `SELECT c.name, sum(o.total_amount) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id${country ? ` WHERE c.country = '${country}'` : ''} GROUP BY c.name`;
      return { text: `\`\`\`sql\n${sql}\n\`\`\``, ...delay };
    }
    return { text: 'Here is the revenue per customer.', ...delay };
  },
  onResponseEnd: (record, arrivedAt, endedAt) => {
    const text = record.chat
      ? record.chat.messages.map((m) => m.content).join('\n')
      : record.endpoint === 'embed' || record.endpoint === 'v1-embeddings'
        ? JSON.stringify((record.body as { input?: unknown } | undefined)?.input ?? '')
        : '';
    const key = KEY.exec(text)?.[0];
    if (!key) return;
    const calls = modelCalls.get(key) ?? { chat: 0, embed: 0 };
    if (record.chat) calls.chat += 1;
    else calls.embed += 1;
    modelCalls.set(key, calls);
    const spans = modelSpans.get(key) ?? [];
    spans.push([arrivedAt, endedAt]);
    modelSpans.set(key, spans);
  },
});

/** Length of the union of `spans` clipped to [from, to], in ms. */
function coveredMs(spans: [number, number][], from: number, to: number): number {
  const clipped = spans
    .map(([a, b]): [number, number] => [Math.max(a, from), Math.min(b, to)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let total = 0;
  let end = -Infinity;
  for (const [a, b] of clipped) {
    if (b <= end) continue;
    total += b - Math.max(a, end);
    end = b;
  }
  return total;
}

const shop = await pgliteShop();

/** kB of a `/proc/<pid>/status` field (VmRSS, VmHWM); 0 when unreadable. */
function procKb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/**
 * CPU time (user + system) the process has used so far, in ms, from `/proc/<pid>/stat` (fields 14
 * and 15, in clock ticks of 100 Hz, the Linux default `USER_HZ`); NaN when unreadable.
 */
function procCpuMs(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** Servers still running: stopped if the bench ends early (a failed request, an exception). */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

/** Starts `node <bin> serve --users --port 0` and resolves with its URL once it listens. */
async function startServer(
  bin: string,
  home: string,
): Promise<{ child: ChildProcess; base: string; stderr: () => string; startMs: number }> {
  const t0 = performance.now();
  const nodeArgs = values['cpu-prof'] ? ['--cpu-prof', `--cpu-prof-dir=${resolve(values['cpu-prof'])}`] : [];
  const child = spawn(
    process.execPath,
    [
      ...nodeArgs,
      bin,
      'serve',
      '--users',
      '--port',
      '0',
      '--db',
      shop.url,
      '--ollama-host',
      model.url,
      '--home',
      home,
      ...(values['memory-db'] ? ['--memory-db', values['memory-db']] : []),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } },
  );
  running.add(child);
  child.once('exit', () => running.delete(child));
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => {
    err += d.toString();
  });
  const base = await new Promise<string>((ok, fail) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const url = /Listening on (http:\/\/\S+)/.exec(out)?.[1];
      if (url) ok(url);
    });
    child.once('exit', (code) => fail(new Error(`serve exited (${code}) before listening:\n${err}`)));
  });
  return { child, base, stderr: () => err, startMs: performance.now() - t0 };
}

/** One row: a fresh home and users, a server child, the load at `delayMs`. */
async function runRow(
  row: number,
  bin: { label: string; path: string },
  delayMs: number,
  size: { users: number; questions: number } = { users: USERS, questions: QUESTIONS },
) {
  chatDelayMs = delayMs;
  const home = mkdtempSync(join(tmpdir(), 'sqlrecall-http-load-'));
  const config = loadConfig({
    env: {},
    cwd: home,
    flags: {
      home,
      databaseUrl: shop.url,
      ollamaHost: model.url,
      logLevel: 'silent',
      ...(values['memory-db'] ? { memoryDatabaseUrl: values['memory-db'] } : {}),
    },
  });
  const tokens: string[] = [];
  const client = memoryClient(config);
  try {
    const directory = new UserDirectory(client);
    for (let u = 0; u < size.users; u += 1) tokens.push((await directory.addUser(`r${row}u${u}`)).token);
  } finally {
    await client.close();
  }

  const server = await startServer(bin.path, home);
  const pid = server.child.pid!;
  async function post(token: string, body: unknown) {
    const res = await fetch(`${server.base}/api/ask`, {
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
  /** Overheads of each user's first question (all users send it at once: one wave) and of the rest. */
  const firstOverheads: number[] = [];
  const laterOverheads: number[] = [];
  const modelTimes: number[] = [];
  const calls = { chat: 0, embed: 0 };
  const errors: string[] = [];
  const crossTalk: string[] = [];
  let loadRssKb = procKb(pid, 'VmRSS');
  const sampler = setInterval(() => {
    loadRssKb = Math.max(loadRssKb, procKb(pid, 'VmRSS'));
  }, 100);
  const started = performance.now();
  const cpuAtStart = procCpuMs(pid);
  await Promise.all(
    tokens.map(async (token, u) => {
      const taught = await post(token, { question: `Always show me customers from ${land(u)}` });
      const memoryId = (taught.doc.remembered as { id: string }[] | undefined)?.[0]?.id;
      if (taught.status !== 200 || !memoryId) {
        errors.push(`user${u} teach: ${taught.status} ${JSON.stringify(taught.doc).slice(0, 200)}`);
        return;
      }
      for (let q = 0; q < size.questions; q += 1) {
        const key = `LOADQ-${row}-${u}-${q}`;
        const t0 = performance.now();
        const r = await post(token, { question: `revenue per customer ${key}` });
        const t1 = performance.now();
        if (r.status !== 200) {
          errors.push(`${key}: ${r.status} ${JSON.stringify(r.doc).slice(0, 200)}`);
          continue;
        }
        // Responses of the model may close a moment after the server has read them: wait a tick.
        await new Promise((ok) => setImmediate(ok));
        const modelMs = coveredMs(modelSpans.get(key) ?? [], t0, t1);
        calls.chat += modelCalls.get(key)?.chat ?? 0;
        calls.embed += modelCalls.get(key)?.embed ?? 0;
        latencies.push(t1 - t0);
        modelTimes.push(modelMs);
        overheads.push(t1 - t0 - modelMs);
        (q === 0 ? firstOverheads : laterOverheads).push(t1 - t0 - modelMs);
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
  const cpuMs = procCpuMs(pid) - cpuAtStart;
  clearInterval(sampler);
  loadRssKb = Math.max(loadRssKb, procKb(pid, 'VmRSS'));
  const peakKb = procKb(pid, 'VmHWM');
  const exited = new Promise((ok) => server.child.once('exit', ok));
  server.child.kill('SIGTERM');
  await exited;
  rmSync(home, { recursive: true, force: true });
  const round = (n: number) => Math.round(n * 10) / 10;
  return {
    bin: bin.label,
    modelDelayMs: delayMs,
    memoryStore: values['memory-db'] ? 'server' : 'embedded',
    users: size.users,
    questionsPerUser: size.questions,
    requests: latencies.length,
    errors: errors.length,
    crossTalk: crossTalk.length,
    serverStartMs: Math.round(server.startMs),
    wallSeconds: round(wallS),
    questionsPerSecond: round(latencies.length / wallS),
    latencyMs: { p50: round(percentile(latencies, 50)), p95: round(percentile(latencies, 95)) },
    overheadMs: { p50: round(percentile(overheads, 50)), p95: round(percentile(overheads, 95)) },
    /** The same split: each user's first question (one wave of `users` at once) and the others. */
    firstQuestionOverheadMs: {
      p50: round(percentile(firstOverheads, 50)),
      p95: round(percentile(firstOverheads, 95)),
    },
    laterQuestionsOverheadMs: {
      p50: round(percentile(laterOverheads, 50)),
      p95: round(percentile(laterOverheads, 95)),
    },
    modelMsPerQuestion: round(modelTimes.reduce((a, b) => a + b, 0) / Math.max(1, modelTimes.length)),
    /** Model requests per answered question: chat and embedding calls (the question's key in the text). */
    modelCallsPerQuestion: {
      chat: round(calls.chat / Math.max(1, latencies.length)),
      embed: round(calls.embed / Math.max(1, latencies.length)),
    },
    /**
     * CPU time of the server process (all its threads) during the load, per answered question
     * (the teach requests included in the time, not in the count), in ms.
     */
    serverCpuMsPerQuestion: round(cpuMs / Math.max(1, latencies.length)),
    /** Largest VmRSS of the server process sampled during the load (module comment), in MB. */
    serverLoadRssMb: Math.round(loadRssKb / 1024),
    /** VmHWM of the server process: its peak RSS including start-up, in MB. */
    serverPeakRssMb: Math.round(peakKb / 1024),
    samples: [...errors, ...crossTalk].slice(0, 5),
  };
}

const rows: Awaited<ReturnType<typeof runRow>>[] = [];
let row = 0;
// Warm-up (not reported): the first row used to run while this process's own code (50 clients,
// the scripted model) was still being compiled by V8, and came out slower whatever the build —
// 874 ms overhead p95 against 276–341 ms for the same build in later rows of one run
// (docs/perf/2026-12-01-pglite-worker-thread.md). A short row on the first build first; skipped with --quick (CI).
if (!values.quick && !values['no-warm-up'] && BINS[0]) {
  process.stderr.write('warm-up row (not reported)…\n');
  await runRow(row, BINS[0], DELAYS.includes(0) ? 0 : (DELAYS[0] ?? 0), {
    users: Math.min(USERS, 20),
    questions: 3,
  });
  row += 1;
}
for (const delay of DELAYS)
  for (const bin of BINS) {
    const r = await runRow(row, bin, delay);
    row += 1;
    rows.push(r);
    if (!values.json) {
      process.stdout.write(
        `[${r.bin}, model delay ${r.modelDelayMs} ms] ${r.users} users × ${r.questionsPerUser} questions over HTTP to a \`serve\` child (${r.memoryStore} memory store; started in ${r.serverStartMs} ms): ${r.requests} answered, ${r.errors} errors, ${r.crossTalk} cross-talk\n` +
          `  wall ${r.wallSeconds} s, ${r.questionsPerSecond} questions/s\n` +
          `  latency p50 ${r.latencyMs.p50} ms, p95 ${r.latencyMs.p95} ms; model time ${r.modelMsPerQuestion} ms/question (${r.modelCallsPerQuestion.chat} chat + ${r.modelCallsPerQuestion.embed} embedding calls)\n` +
          `  server overhead (latency − model time) p50 ${r.overheadMs.p50} ms, p95 ${r.overheadMs.p95} ms\n` +
          `    each user's first question (${r.users} at once): p50 ${r.firstQuestionOverheadMs.p50} ms, p95 ${r.firstQuestionOverheadMs.p95} ms; later questions: p50 ${r.laterQuestionsOverheadMs.p50} ms, p95 ${r.laterQuestionsOverheadMs.p95} ms\n` +
          `  server CPU ${r.serverCpuMsPerQuestion} ms per question (user + system, all threads)\n` +
          `  server RSS under load ${r.serverLoadRssMb} MB max, peak incl. start ${r.serverPeakRssMb} MB (VmHWM)\n`,
      );
      for (const e of r.samples) process.stdout.write(`    ${e}\n`);
    }
  }
const document = { rows, loadAverage: loadavg().map((l) => Math.round(l * 100) / 100) };
if (values.json) process.stdout.write(`${JSON.stringify(document)}\n`);
else process.stdout.write(`load average at the end ${document.loadAverage.join(', ')}\n`);
if (values.out) writeFileSync(values.out, `${JSON.stringify(document, null, 2)}\n`);
await model.close();
rmSync(shop.url.slice('pglite:'.length), { recursive: true, force: true });
process.exit(rows.some((r) => r.errors + r.crossTalk > 0) ? 1 : 0);
