#!/usr/bin/env node
// `npm run bench [-- --quick] [-- --only name,name] [-- --out FILE]`: runs every benchmark script
// of bench/ that exists (registry below: each script's quick and full arguments) and writes
// BENCHMARKS.md (full mode; quick mode writes $TMPDIR/sqlrecall-BENCHMARKS.quick.md unless --out),
// stamped with the machine (CPUs, memory, Node, PostgreSQL), one section per script with the run
// that produced it, the exact command and its output verbatim. BENCHMARKS.md is generated only:
// a full run with --only replaces its own sections and carries the others over by their markers
// (scripts/bench-report.mjs); nothing else in the file survives, so investigations go to docs/perf/.
// Full mode is the default (the sizes quoted in the README); --quick uses CI sizes (minutes).
// Comparative figures come from the scripts themselves, each a ratio measured within one run.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parseSections, renderReport, renderSection } from './bench-report.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    only: { type: 'string' },
    out: { type: 'string' },
  },
});
const SERVER_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/postgres';

/**
 * The benchmarks, in report order: title, script, quick and full arguments, what it needs, and
 * what its figures rest on (`restsOn`: the scripted model, the hash test embedding, or real
 * components), printed under each heading so no figure is read as a real model's.
 * A script that does not exist (yet) is skipped with a line saying so.
 */
const REGISTRY = [
  {
    name: 'introspection',
    restsOn:
      'real components: the PostgreSQL 15 server and its catalog, then embedded PGlite, MariaDB 10.11, SQLite (better-sqlite3) and DuckDB files (per-engine table); no model',
    title: 'Schema introspection: fixed catalog queries vs. per-table information_schema walking',
    script: 'bench/introspection.ts',
    quick: ['--tables', '200', '--repeat', '1'],
    full: ['--tables', '1000', '--repeat', '3'],
    needsServer: true,
  },
  {
    name: 'schema-linking',
    restsOn:
      'no model; lexical and value rows on real catalogs; "hash dense" rows use the deterministic test embedding, not a real embedding model',
    title: 'Schema linking: recall of the gold tables and prompt tokens vs. the whole schema',
    script: 'bench/schema-linking.ts',
    quick: ['--decoys', '100', '--dbs', 'academic,broker,car_dealership,restaurants'],
    full: [],
  },
  {
    name: 'schema-index-reuse',
    restsOn: 'the hash test embedding (counts of texts embedded, not embedding quality); PGlite + pgvector',
    title: 'Schema index reuse: second run on 1,000 tables vs 10 tables (embeddings, time, peak memory)',
    script: 'bench/schema-index-reuse.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'memory-search',
    restsOn: 'synthetic test vectors in real pgvector (PGlite and the server); no model',
    title: "Memory search: one user's top-k among many users' memories",
    script: 'bench/memory-search.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'pipeline-overhead',
    restsOn: 'the scripted zero-delay model and the hash test embedding: overhead outside the model only',
    title: 'Pipeline overhead outside the model (100-table schema, memories for the user)',
    script: 'bench/pipeline-overhead.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'search-recall',
    restsOn:
      'the hash test embedding in real pgvector (PGlite): agreement of the approximate search with the exact one, not embedding quality',
    title: 'Memory search: approximate (HNSW walk) against exact, recall@5 and time per search',
    script: 'bench/search-recall.ts',
    // Quick: just above the 2,000-memory cut-off, so the approximate path is taken.
    quick: ['--memories', '2500', '--queries', '20', '--floor', '0.3'],
    full: ['--floor', '0.3'],
  },
  {
    name: 'process-start',
    restsOn: 'the scripted zero-delay model; PGlite demo shop: process and memory cost only',
    title: 'Whole-process `ask`: memory on vs off, time to first model request, peak RSS',
    script: 'bench/process-start.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'http-load',
    restsOn:
      'the scripted model (zero delay and a 1 s delay per chat call); the shipped `serve` binary as a child process (npm run build first), real database: no model-speed figure',
    title: 'HTTP API under load',
    script: 'bench/http-load.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'http-stall',
    restsOn:
      'the shipped `serve` binary as a child process (npm run build first), PGlite demo shop; no model call (the scripted model only answers the start-up check)',
    title:
      "One user's eight maximal statements vs. another user's GET /api/me (parsing on the main thread vs. the worker pool)",
    script: 'bench/http-stall.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'large-result',
    restsOn: 'the real PostgreSQL server and HTTP server; the scripted model only names the query',
    title:
      'Large results: the 600 × 1 MB query through sql --json and POST /api/ask (peak RSS vs. the byte budget)',
    script: 'bench/large-result.ts',
    quick: ['--quick'],
    full: [],
    needsServer: true,
  },
  {
    name: 'import-flood',
    restsOn: 'real HTTP server, real memory store; no model call is timed',
    title: "Import flood: another user's latency and peak memory while four hostile imports run",
    script: 'bench/import-flood.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'dialect-repair',
    restsOn:
      'the scripted model replaying rule-broken gold SQL (no model-quality claim); real PostgreSQL runs every statement',
    title: 'Dialect repair: broken variants of the defog gold queries that end with the gold rows',
    script: 'bench/dialect-repair.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'guard-latency',
    restsOn: 'the real parser (libpg-query); no model, no database',
    title:
      'SQL guard latency: one statement parsed and checked, parser loaded (mean, p50, p95, p99; CPU time p50, p95)',
    script: 'bench/guard-latency.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'function-policy-latency',
    restsOn: 'real components: PGlite and (when TEST_DATABASE_URL is set) the PostgreSQL 15 server; no model',
    title: "Function policy cost per statement: the server's analysis vs. names only vs. the bare connector",
    script: 'bench/function-policy-latency.ts',
    quick: ['--quick'],
    full: [],
  },
  {
    name: 'examples-fallback',
    restsOn: 'no model at all (that is the point); real PostgreSQL runs every answer',
    title: 'Answers without the model: saved examples and rules on held-out defog questions',
    script: 'bench/examples-fallback.ts',
    quick: ['--quick'],
    full: [],
  },
];

function run(cmd, argv, env = {}) {
  const started = Date.now();
  const result = spawnSync(cmd, argv, {
    cwd: ROOT,
    env: { ...process.env, ...env },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return { ...result, seconds: (Date.now() - started) / 1000 };
}

/** `SELECT version()` through pg on the server, or a reason it is unavailable. */
function serverVersion() {
  const probe = run(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `import pg from 'pg'; const c = new pg.Client({ connectionString: process.env.URL });
     await c.connect(); const r = await c.query("SELECT current_setting('server_version') AS v");
     console.log(r.rows[0].v); await c.end();`,
    ],
    { URL: SERVER_URL },
  );
  return probe.status === 0
    ? { ok: true, version: probe.stdout.trim() }
    : { ok: false, why: probe.stderr.trim().split('\n').pop() };
}

function pgliteVersion() {
  const probe = run(process.execPath, [
    '--input-type=module',
    '-e',
    `import { PGlite } from '@electric-sql/pglite'; const db = new PGlite();
     const r = await db.query("SELECT current_setting('server_version') AS v"); console.log(r.rows[0].v); await db.close();`,
  ]);
  const pkg = JSON.parse(
    readFileSync(join(ROOT, 'node_modules', '@electric-sql', 'pglite', 'package.json'), 'utf8'),
  );
  return `${probe.stdout.trim() || '?'} (PGlite ${pkg.version})`;
}

const mask = (url) => url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@');
const mode = args.quick ? 'quick' : 'full';
// Full mode regenerates the committed BENCHMARKS.md; quick mode (CI sizes) never overwrites it.
const outPath =
  args.out ?? (args.quick ? join(tmpdir(), 'sqlrecall-BENCHMARKS.quick.md') : join(ROOT, 'BENCHMARKS.md'));
const only = args.only ? new Set(args.only.split(',')) : undefined;
const server = serverVersion();
const cpuList = cpus();
const startedAt = new Date().toISOString();
const loadAtStart = loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ');
const header = [
  '# Benchmarks',
  '',
  `Generated by \`npm run bench\` (scripts/bench.mjs); do not edit by hand. Last run: ${mode} mode${only ? ` (--only ${args.only})` : ''} on ${startedAt}.`,
  'Each section names the run that produced it: a run with `--only` keeps the other sections of the',
  'previous file as they were. Dated investigations are in docs/perf/.',
  '',
  '| machine (last run) | |',
  '|---|---|',
  `| CPU | ${cpuList.length} × ${cpuList[0]?.model.trim() ?? 'unknown'} |`,
  `| memory | ${(totalmem() / 2 ** 30).toFixed(1)} GiB |`,
  `| Node | ${process.version} (${process.platform} ${process.arch}) |`,
  `| PostgreSQL server | ${server.ok ? `${server.version} at ${mask(SERVER_URL)}` : `unavailable (${server.why})`} |`,
  `| embedded PostgreSQL | ${pgliteVersion()} |`,
  `| load average at start (1/5/15 min) | ${loadAtStart} |`,
  '',
  'Every figure below was printed by the command above it, in the run its section names. Figures',
  'that compare two approaches are ratios of measurements taken in the same run on the same data.',
  'Models are played by the scripted zero-delay server: no figure here is a model-quality or',
  "model-speed figure. Quick mode uses CI sizes; full mode (`npm run bench`) the sizes in each script's header.",
  '',
];
const stamp = `Run: ${mode} mode, ${startedAt}, Node ${process.version}, load at start ${loadAtStart}.`;

const fresh = new Map();
const skipped = new Map();
let failures = 0;
for (const bench of REGISTRY) {
  if (only && !only.has(bench.name)) continue;
  const argv = ['tsx', bench.script, ...(args.quick ? bench.quick : bench.full)];
  const command = `npx ${argv.join(' ')}`;
  if (!existsSync(join(ROOT, bench.script))) {
    process.stderr.write(`skip ${bench.name}: ${bench.script} does not exist\n`);
    continue;
  }
  if (bench.needsServer && !server.ok) {
    skipped.set(
      bench.name,
      renderSection(bench, {
        stamp,
        body: `Skipped: no PostgreSQL server at ${mask(SERVER_URL)} (set TEST_DATABASE_URL).`,
      }),
    );
    continue;
  }
  process.stderr.write(`> ${command}\n`);
  const result = run('npx', argv, bench.needsServer ? { TEST_DATABASE_URL: SERVER_URL } : {});
  process.stderr.write(result.stderr ?? '');
  const ok = result.status === 0;
  if (!ok) failures += 1;
  fresh.set(
    bench.name,
    renderSection(bench, {
      stamp,
      command,
      body: ok
        ? (result.stdout ?? '')
        : `FAILED (exit ${result.status}):\n\n\`\`\`\n${(result.stderr ?? '').trim().split('\n').slice(-15).join('\n')}\n\`\`\``,
      seconds: result.seconds,
    }),
  );
  process.stderr.write(`${ok ? 'done' : 'FAILED'}: ${bench.name} in ${result.seconds.toFixed(0)} s\n`);
}

// Only a full run carries sections over: a quick run's file is all from this one run.
const previous =
  !args.quick && existsSync(outPath) ? parseSections(readFileSync(outPath, 'utf8')) : new Map();
const footer = `_Load average at the end of the last run (1/5/15 min): ${loadavg()
  .map((l) => l.toFixed(1))
  .join(' / ')}. A load above the CPU count means other work shared the machine and the times are inflated._`;
const missing = args.quick && only ? `Not part of this run (--only ${args.only}).` : undefined;
writeFileSync(
  outPath,
  renderReport({ header, registry: REGISTRY, fresh, previous, skipped, missing, footer }),
);
process.stderr.write(`wrote ${outPath}${failures ? ` (${failures} benchmark(s) failed)` : ''}\n`);
process.exit(failures ? 1 : 0);
