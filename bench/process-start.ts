/**
 * Whole-process start benchmark: `sqlrecall ask` as a user runs it, on the demo shop,
 * with the scripted model server at zero delay standing in for Ollama.
 *
 *   npx tsx bench/process-start.ts [--runs 5] [--quick] [--json] [--bin PATH] [--cpu-prof DIR]
 *     [--fresh-runs 3] [--fresh-only] [--server-url postgres://…]
 *
 * First, the fresh-home cases (`freshHomeCases` below): the first `ask` (against a server database,
 * `--server-url` or TEST_DATABASE_URL) and `demo --no-chat` in a new SQLRECALL_HOME, with the
 * installation's initialized cluster off (initdb: the behaviour before) and on, alternated run by
 * run (`--fresh-runs`, 1 with `--quick`); `--fresh-only` stops after them. docs/perf/first-run.md.
 *
 * `--bin`: the CLI to start (default `bin/sqlrecall.js` of this checkout), e.g. an older build's, to
 * compare builds by running this script once per build back to back. `--cpu-prof DIR`: every `ask`
 * writes a V8 CPU profile into DIR (slows each run; for finding where start time goes, not for figures).
 *
 * Four cases, each run `--runs` times (after one warm-up run each), in turn:
 * - `off`: `ask --no-memory`, no other sqlrecall process: this process opens the shop's PGlite;
 * - `on (owner)`: memory on, no other sqlrecall process: this process opens the shop and the store;
 * - `off (socket)` / `on (socket)`: the same while a `chat` on the same shop runs: it owns the shop
 *   and the memory store, and `ask` reaches both through its Unix sockets (no PGlite in `ask`);
 * - `off (keep-warm)` / `on (keep-warm)`: alone, with `SQLRECALL_KEEP_WARM=120`: the warm-up run
 *   starts PGlite and leaves it to a background `sqlrecall hold`, which the measured runs reach
 *   through its sockets (stopped after the case).
 * Reported per case: median wall time (spawn → exit), median time from spawn to the first chat
 * request the model server receives, and the largest peak RSS (the child's `VmHWM` from
 * /proc/self/status, printed at exit by a `--require` preload; `maxRSS` of
 * `process.resourceUsage()` where /proc is absent). Not `maxRSS` on Linux: it survives fork and
 * exec, so a child spawned by this (large) process reported this process's RSS as its own peak. Ratio: median wall of
 * each memory-on case ÷ median wall of the memory-off case of the same setting (target ≤ 1.3×); targets: first request ≤ 1.0 s,
 * peak RSS ≤ 250 MB. `--quick`: 2 runs each.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { processAlive } from '../src/core/process.js';
import { LOCK_FILE_NAME } from '../src/databases/pglite/sharing.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';

const { values: args } = parseArgs({
  options: {
    runs: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
    bin: { type: 'string' },
    'cpu-prof': { type: 'string' },
    'fresh-only': { type: 'boolean', default: false },
    'fresh-runs': { type: 'string' },
    'server-url': { type: 'string' },
  },
});
const freshRuns = Number(args['fresh-runs'] ?? (args.quick ? 1 : 3));
const runs = Number(args.runs ?? (args.quick ? 2 : 5));
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = args.bin ? resolve(args.bin) : join(ROOT, 'bin', 'sqlrecall.js');
const log = (line: string) => process.stderr.write(`${line}\n`);

const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-start-'));
const preload = join(dir, 'rss.cjs');
writeFileSync(
  preload,
  [
    "process.on('exit', () => {",
    '  let kb = process.resourceUsage().maxRSS;',
    "  try { kb = Number(/VmHWM:\\s*(\\d+)/.exec(require('fs').readFileSync('/proc/self/status', 'utf8'))[1]); } catch {}",
    // biome-ignore lint/suspicious/noTemplateCurlyInString: this is the preload's source text
    '  process.stderr.write(`\\n@@maxrss ${kb}\\n`);',
    '});',
    '',
  ].join('\n'),
);
let firstRequestAt: number | undefined;
const model = await startScriptedOllama({
  models: ['qwen2.5-coder:7b', 'all-minilm'],
  chat: (request) => {
    firstRequestAt ??= Date.now();
    if (request.purpose === 'memory-extract') return JSON.stringify({ facts: [] });
    if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
      return '```sql\nSELECT count(*) AS n FROM orders\n```';
    return 'There are some orders.';
  },
});

interface Sample {
  wallMs: number;
  firstRequestMs: number | null;
  maxRssMb: number;
}

function run(extra: string[], env: Record<string, string>, command = ['ask', '--json']): Promise<Sample> {
  return new Promise((resolvePromise, reject) => {
    firstRequestAt = undefined;
    const started = Date.now();
    const child = spawn(
      process.execPath,
      [
        '--require',
        preload,
        ...(args['cpu-prof'] ? ['--cpu-prof', '--cpu-prof-dir', resolve(args['cpu-prof'])] : []),
        BIN,
        ...command,
        ...extra,
        ...(command[0] === 'ask' ? ['how many orders?'] : []),
      ],
      {
        env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stderr = '';
    child.stdout.resume();
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) => {
      const wallMs = Date.now() - started;
      if (code !== 0) return reject(new Error(`${command[0]} exited ${code}: ${stderr}`));
      const kb = Number(/@@maxrss (\d+)/.exec(stderr)?.[1] ?? Number.NaN);
      resolvePromise({
        wallMs,
        firstRequestMs: firstRequestAt === undefined ? null : firstRequestAt - started,
        maxRssMb: Math.round((kb / 1024) * 10) / 10,
      });
    });
  });
}

/** Stops the process named in each directory's lock file (a keep-warm holder) and waits for it to exit. */
async function stopHolders(dirs: string[]): Promise<void> {
  for (const d of dirs) {
    let pid: number;
    try {
      pid = Number.parseInt(readFileSync(join(d, LOCK_FILE_NAME), 'utf8'), 10);
    } catch {
      continue; // no lock: nobody holds it
    }
    if (!Number.isInteger(pid) || !processAlive(pid)) continue;
    process.kill(pid, 'SIGTERM');
    while (processAlive(pid)) await new Promise((ok) => setTimeout(ok, 50));
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] as number) : ((s[m - 1] as number) + (s[m] as number)) / 2;
};

/**
 * Fresh-home cases: every run in a new SQLRECALL_HOME (the memory store, or the demo shop, made by
 * that run), with the installation's initialized cluster (`src/databases/pglite/template.ts`) off
 * and on, alternated run by run. `ask` questions a server database (`--server-url`, else
 * TEST_DATABASE_URL; a throw-away database with an `orders` table), as a user's first question
 * against their own PostgreSQL does; `demo --no-chat` builds the demo shop.
 */
async function freshHomeCases(): Promise<{
  results: Record<string, Sample[]>;
  failures: Record<string, string>;
}> {
  const results: Record<string, Sample[]> = {};
  const failures: Record<string, string> = {};
  const serverUrl = args['server-url'] ?? process.env.TEST_DATABASE_URL;
  let database: string | undefined;
  let admin: import('pg').Client | undefined;
  if (serverUrl) {
    const { default: pg } = await import('pg');
    admin = new pg.Client({ connectionString: serverUrl });
    await admin.connect();
    const name = `sqlrecall_start_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    database = url.toString();
    const db = new pg.Client({ connectionString: database });
    await db.connect();
    await db.query(
      'CREATE TABLE orders (id int PRIMARY KEY, total numeric); INSERT INTO orders SELECT g, g FROM generate_series(1, 1000) g',
    );
    await db.end();
  } else log('fresh-home ask: no --server-url or TEST_DATABASE_URL, skipped');
  const cases: { name: string; command: string[]; env: Record<string, string> }[] = [
    ...(database ? [{ name: 'ask', command: ['ask', '--json'], env: { DATABASE_URL: database } }] : []),
    { name: 'demo --no-chat', command: ['demo', '--no-chat', '--yes'], env: {} },
  ];
  try {
    for (const c of cases) {
      for (let i = 0; i < freshRuns; i += 1) {
        for (const template of ['off', 'on']) {
          const name = `${c.name} fresh home (template ${template})`;
          const home = mkdtempSync(join(dir, 'fresh-'));
          log(`${name}: run ${i + 1}/${freshRuns}…`);
          try {
            const sample = await run(
              [],
              {
                SQLRECALL_HOME: home,
                OLLAMA_HOST: model.url,
                SQLRECALL_PGLITE_TEMPLATE: template,
                ...c.env,
              },
              c.command,
            );
            results[name] = [...(results[name] ?? []), sample];
            if (template === 'on' && c.name === 'ask') {
              // The same question again in the home the first run made: the floor a first run approaches.
              const second = await run(
                [],
                { SQLRECALL_HOME: home, OLLAMA_HOST: model.url, ...c.env },
                c.command,
              );
              results['ask second run (same home)'] = [
                ...(results['ask second run (same home)'] ?? []),
                second,
              ];
            }
          } catch (error) {
            failures[name] = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
          } finally {
            rmSync(home, { recursive: true, force: true });
          }
        }
      }
    }
  } finally {
    if (admin) {
      await admin.query(`DROP DATABASE IF EXISTS sqlrecall_start_${process.pid}`).catch(() => undefined);
      await admin.end();
    }
  }
  return { results, failures };
}

const fresh = await freshHomeCases();
const freshSummary = Object.fromEntries(
  Object.entries(fresh.results).map(([name, samples]) => [
    name,
    {
      wallMsMedian: median(samples.map((s) => s.wallMs)),
      maxRssMb: Math.max(...samples.map((s) => s.maxRssMb)),
    },
  ]),
);
/** The fresh-home table (targets: first ask ≤ 2.5 s and ≤ 300 MB; demo --no-chat ≤ 6 s and ≤ 400 MB). */
function printFresh(): void {
  process.stdout.write(
    `First run in a fresh SQLRECALL_HOME, scripted model at 0 delay, ${freshRuns} runs per case (template off = initdb, before)\n`,
  );
  process.stdout.write('case                                      wall p50   peak RSS\n');
  for (const [name, s] of Object.entries(freshSummary))
    process.stdout.write(`${name.padEnd(41)} ${String(s.wallMsMedian).padStart(6)} ms   ${s.maxRssMb} MB\n`);
  for (const [name, message] of Object.entries(fresh.failures))
    process.stdout.write(`${name}: failed: ${message}\n`);
}
if (args['fresh-only']) {
  if (args.json)
    process.stdout.write(
      `${JSON.stringify({ freshRuns, summary: freshSummary, failures: fresh.failures }, null, 2)}\n`,
    );
  else printFresh();
  await model.close();
  rmSync(dir, { recursive: true, force: true });
  process.exit(0);
}

try {
  await createDemoDatabase(join(dir, 'shop'));
  const env = {
    SQLRECALL_HOME: join(dir, 'home'),
    OLLAMA_HOST: model.url,
    DATABASE_URL: `pglite:${join(dir, 'shop')}`,
  };
  // The memory store exists already (a user's second question, not their first ever).
  await run([], env);
  const cases: { name: string; extra: string[]; owner: boolean; keepWarm?: boolean }[] = [
    { name: 'off', extra: ['--no-memory'], owner: false },
    { name: 'on (owner)', extra: [], owner: false },
    { name: 'off (socket)', extra: ['--no-memory'], owner: true },
    { name: 'on (socket)', extra: [], owner: true },
    { name: 'off (keep-warm)', extra: ['--no-memory'], owner: false, keepWarm: true },
    { name: 'on (keep-warm)', extra: [], owner: false, keepWarm: true },
  ];
  const results: Record<string, Sample[]> = {};
  const failures: Record<string, string> = {};
  for (const c of cases) {
    let chat: ReturnType<typeof spawn> | undefined;
    if (c.owner) {
      // Another process owns the shop and the store: a chat waiting at its prompt.
      chat = spawn(process.execPath, [BIN, 'chat', '--user', 'owner'], {
        env: { PATH: process.env.PATH ?? '', HOME: dir, ...env },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const proc = chat;
      await new Promise<void>((ok, fail) => {
        let out = '';
        proc.stdout?.on('data', (d) => {
          out += d;
          if (out.includes('sqlrecall> ')) ok();
        });
        proc.on('close', () => fail(new Error('chat exited before its prompt')));
      });
    }
    // Keep-warm: the warm-up run starts PGlite and hands it to a background `hold` as it exits;
    // the measured runs find that holder (a build without keep-warm ignores the variable).
    const caseEnv = c.keepWarm ? { ...env, SQLRECALL_KEEP_WARM: '120' } : env;
    try {
      log(`${c.name}: warm-up + ${runs} runs…`);
      await run(c.extra, caseEnv);
      if (c.keepWarm) await new Promise((ok) => setTimeout(ok, 3_000)); // the holder takes over
      results[c.name] = [];
      for (let i = 0; i < runs; i += 1) results[c.name]?.push(await run(c.extra, caseEnv));
    } catch (error) {
      // e.g. a build without a shared store: `ask` cannot open the store while `chat` holds it.
      failures[c.name] = error instanceof Error ? (error.message.split('\n')[0] ?? '') : String(error);
      delete results[c.name];
    } finally {
      chat?.kill('SIGTERM');
      if (chat) await new Promise((ok) => chat?.on('close', ok));
      if (c.keepWarm) await stopHolders([join(env.SQLRECALL_HOME, 'memory'), join(dir, 'shop')]);
    }
  }
  const summary = Object.fromEntries(
    Object.entries(results).map(([name, samples]) => [
      name,
      {
        wallMsMedian: median(samples.map((s) => s.wallMs)),
        firstRequestMsMedian: median(samples.map((s) => s.firstRequestMs ?? Number.NaN)),
        maxRssMb: Math.max(...samples.map((s) => s.maxRssMb)),
      },
    ]),
  );
  const ratio = (name: string, base: string) =>
    Math.round(
      ((summary[name]?.wallMsMedian ?? Number.NaN) / (summary[base]?.wallMsMedian ?? Number.NaN)) * 100,
    ) / 100;
  if (args.json) {
    process.stdout.write(
      `${JSON.stringify({ runs, summary, failures, ratioOwner: ratio('on (owner)', 'off'), ratioSocket: ratio('on (socket)', 'off (socket)'), ratioKeepWarm: ratio('on (keep-warm)', 'off (keep-warm)'), fresh: { runs: freshRuns, summary: freshSummary, failures: fresh.failures } }, null, 2)}\n`,
    );
  } else {
    process.stdout.write(
      `Whole-process \`ask\` on the demo shop, scripted model at 0 delay, ${runs} runs per case\n`,
    );
    process.stdout.write('case              wall p50   first model request p50   peak RSS\n');
    for (const [name, s] of Object.entries(summary)) {
      process.stdout.write(
        `${name.padEnd(17)} ${String(s.wallMsMedian).padStart(6)} ms   ${String(s.firstRequestMsMedian).padStart(8)} ms               ${s.maxRssMb} MB\n`,
      );
    }
    for (const [name, message] of Object.entries(failures))
      process.stdout.write(`${name}: failed: ${message}\n`);
    process.stdout.write(
      `memory on ÷ off (wall): alone ${ratio('on (owner)', 'off')}×, beside a chat ${ratio('on (socket)', 'off (socket)')}×, with keep-warm ${ratio('on (keep-warm)', 'off (keep-warm)')}× (target ≤ 1.3×)\n`,
    );
    printFresh();
  }
} finally {
  await model.close();
  rmSync(dir, { recursive: true, force: true });
}
