/**
 * Import flood benchmark: while four users send maximal hostile imports
 * without pause, another user's `GET /api/me` must still answer quickly (goal: p95 ≤ 200 ms).
 * Real HTTP server (`@hono/node-server` on loopback, multi-user mode with tokens), scripted model,
 * small shop on PGlite, embedded memory store, in a CHILD process (`--serve`), so the RSS reported
 * is the server's alone (sampled every 10 ms in the child) and the load generator's CPU shows up
 * as load, not as server work on the same event loop.
 *
 *   npx tsx bench/import-flood.ts [--seconds 15] [--quick] [--json]
 *
 * The four hostile imports, each repeated until the time is up:
 * - `oversized`: the issue's 18 MiB nested document (refused at 4 MiB while streaming);
 * - `deep`: just under 4 MiB of `[` nesting (refused by the depth scan before parsing);
 * - `many`: just under 4 MiB holding 2,001 memories (refused by the count check after parsing);
 * - `long`: just under 4 MiB with one memory text of ~4 M characters (refused by the size check).
 * Every hostile request must be refused (413/400); the victim's requests must all be 200.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { serve } from '@hono/node-server';
import { Agent, fetch } from 'undici';
import { percentile } from '../src/eval/report.js';
import { MAX_IMPORT_BYTES } from '../src/server/import-limits.js';
import { startTestServer } from '../test/support/server-app.js';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    json: { type: 'boolean', default: false },
    /** CI size (`npm run bench -- --quick`): 4 seconds of flood. */
    quick: { type: 'boolean', default: false },
    /** Internal: run as the server child process. */
    serve: { type: 'boolean', default: false },
  },
});
const SECONDS = values.quick ? 4 : Number(values.seconds);

if (values.serve) {
  // Child: the server. Prints its address and tokens, samples its RSS, reports the peak on stdin end.
  const s = await startTestServer('users');
  const app = s.appFor({ mode: 'users', users: s.users });
  const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise((r) => server.once('listening', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const victim = await s.users.add('victim');
  const attackers = [];
  for (let i = 0; i < 4; i += 1) attackers.push(await s.users.add(`attacker${i}`));
  // A socket error the server does not handle is counted and reported (and fails the run), not hidden.
  let uncaught = 0;
  process.on('uncaughtException', (error) => {
    uncaught += 1;
    process.stderr.write(`[server] uncaught ${(error as NodeJS.ErrnoException).code ?? error.message}\n`);
  });
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 10);
  process.stdout.write(`${JSON.stringify({ base, victim, attackers })}\n`);
  process.stdin.resume();
  await new Promise((r) => process.stdin.once('end', r));
  clearInterval(sampler);
  process.stdout.write(`${JSON.stringify({ rssBefore: before, rssPeak: peak, uncaught })}\n`);
  server.close();
  (server as unknown as { closeAllConnections?: () => void }).closeAllConnections?.();
  await s.close();
  process.exit(0);
}

const child = spawn(process.execPath, ['--import', 'tsx', fileURLToPath(import.meta.url), '--serve'], {
  stdio: ['pipe', 'pipe', 'inherit'],
});
const lines = createInterface({ input: child.stdout });
const nextLine = () => new Promise<string>((resolve) => lines.once('line', resolve));
const { base, victim, attackers } = JSON.parse(await nextLine()) as {
  base: string;
  victim: string;
  attackers: string[];
};

const head = '{"format":"sqlrecall-memory","version":1,"memories":';
const under = MAX_IMPORT_BYTES - 1024;
const memory = (i: number) =>
  `{"id":"00000000-0000-4000-8000-${String(i).padStart(12, '0')}","kind":"preference","text":"${'m'.repeat(1900)}"}`;
const bodies: Record<string, string> = {
  oversized: `${head}[${'['.repeat(9 * 1024 * 1024)}${']'.repeat(9 * 1024 * 1024)}]}`,
  deep: `${head}${'['.repeat(under / 2)}${']'.repeat(under / 2)}}`,
  many: `${head}[${Array.from({ length: 2001 }, (_, i) => memory(i)).join(',')}]}`,
  long: `${head}[{"id":"x","kind":"preference","text":"${'t'.repeat(under - 200)}"}]}`,
};
for (const [name, body] of Object.entries(bodies))
  if (name !== 'oversized' && Buffer.byteLength(body) > MAX_IMPORT_BYTES)
    throw new Error(`${name} is too big`);

// Baseline: the same probe with no flood, for a comparison within this run (load varies).
// Different users are different clients: the victim and each attacker get their own connection pool,
// so a connection the server closes after refusing an oversized body is never reused for the victim.
const victimAgent = new Agent();
const attackerAgents = [0, 1, 2, 3].map(() => new Agent());
const victimErrorsBaseline: string[] = [];
const baseline: number[] = [];
{
  const until = performance.now() + Math.min(3, SECONDS / 2) * 1000;
  while (performance.now() < until) {
    const t0 = performance.now();
    const res = await fetch(`${base}/api/me`, {
      headers: { authorization: `Bearer ${victim}` },
      dispatcher: victimAgent,
    });
    await res.text();
    baseline.push(performance.now() - t0);
    if (res.status !== 200) victimErrorsBaseline.push(String(res.status));
    await new Promise((r) => setTimeout(r, 10));
  }
}

const deadline = performance.now() + SECONDS * 1000;
const hostile: Record<string, { sent: number; refused: number; other: string[]; ms: number[] }> = {};
// Encoded once: the load generator must not spend its own event loop re-encoding 18 MiB per send.
const encoded = Object.entries(bodies).map(
  ([name, body]) => [name, new Uint8Array(Buffer.from(body))] as const,
);
const flood = encoded.map(async ([name, body], i) => {
  const stats = { sent: 0, refused: 0, other: [] as string[], ms: [] as number[] };
  hostile[name] = stats;
  while (performance.now() < deadline) {
    const t0 = performance.now();
    stats.sent += 1;
    try {
      const res = await fetch(`${base}/api/memories/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${attackers[i]}`, 'content-type': 'application/json' },
        body,
        dispatcher: attackerAgents[i % attackerAgents.length],
      });
      await res.arrayBuffer();
      if (res.status === 413 || res.status === 400) stats.refused += 1;
      else stats.other.push(String(res.status));
    } catch (error) {
      // The server may answer 413 and close before the client finished sending: refused too.
      stats.refused += 1;
      if (!/fetch failed|EPIPE|ECONNRESET|other side closed/i.test(String((error as Error).cause ?? error)))
        stats.other.push(String(error));
    }
    stats.ms.push(performance.now() - t0);
  }
});

const victimErrors: string[] = [];
/** The victim's `GET /api/me` latencies until `until` (one request every 10 ms after the last answer). */
async function probeUntil(until: number, startDelayMs = 0): Promise<number[]> {
  const out: number[] = [];
  await new Promise((r) => setTimeout(r, startDelayMs));
  while (performance.now() < until) {
    const t0 = performance.now();
    try {
      const res = await fetch(`${base}/api/me`, {
        headers: { authorization: `Bearer ${victim}` },
        dispatcher: victimAgent,
      });
      await res.text();
      out.push(performance.now() - t0);
      if (res.status !== 200) victimErrors.push(String(res.status));
    } catch (error) {
      victimErrors.push(String((error as Error).cause ?? error));
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  return out;
}
const probe = probeUntil(deadline, 200); // let the flood start
const [latencies] = await Promise.all([probe, ...flood]);
child.stdin.end();
const { rssBefore, rssPeak, uncaught } = JSON.parse(await nextLine()) as {
  rssBefore: number;
  rssPeak: number;
  uncaught: number;
};

const round = (n: number) => Math.round(n * 10) / 10;
const mb = (n: number) => Math.round(n / 1024 / 1024);
const report = {
  seconds: SECONDS,
  victimRequests: latencies.length,
  victimErrors: victimErrors.length,
  baselineLatencyMs: { p50: round(percentile(baseline, 50)), p95: round(percentile(baseline, 95)) },
  victimLatencyMs: {
    p50: round(percentile(latencies, 50)),
    p95: round(percentile(latencies, 95)),
    max: round(Math.max(...latencies)),
  },
  hostile: Object.fromEntries(
    Object.entries(hostile).map(([k, v]) => [
      k,
      { sent: v.sent, refused: v.refused, unexpected: v.other.length, p50Ms: round(percentile(v.ms, 50)) },
    ]),
  ),
  rssMb: { before: mb(rssBefore), peak: mb(rssPeak) },
};
const failed =
  victimErrors.length + victimErrorsBaseline.length > 0 ||
  Object.values(hostile).some((h) => h.other.length > 0);
if (values.json) process.stdout.write(`${JSON.stringify(report)}\n`);
else {
  process.stdout.write(
    `4 hostile importers for ${SECONDS} s: ${Object.entries(report.hostile)
      .map(([k, v]) => `${k} ${v.refused}/${v.sent} refused (p50 ${v.p50Ms} ms)`)
      .join(', ')}\n` +
      `other user's GET /api/me with no flood: ${baseline.length} requests, p50 ${report.baselineLatencyMs.p50} ms, p95 ${report.baselineLatencyMs.p95} ms\n` +
      `other user's GET /api/me meanwhile: ${report.victimRequests} requests, ${report.victimErrors} errors, p50 ${report.victimLatencyMs.p50} ms, p95 ${report.victimLatencyMs.p95} ms, max ${report.victimLatencyMs.max} ms (goal p95 ≤ 200 ms)\n` +
      `server process RSS: ${report.rssMb.before} MB before the flood, ${report.rssMb.peak} MB peak; ${uncaught} uncaught server errors\n`,
  );
  for (const e of victimErrors.slice(0, 3)) process.stdout.write(`  victim: ${e.slice(0, 200)}\n`);
  for (const [k, h] of Object.entries(hostile))
    for (const o of h.other.slice(0, 3)) process.stdout.write(`  ${k}: ${o}\n`);
}
await new Promise((r) => child.once('exit', r));
process.exit(failed ? 1 : 0);
