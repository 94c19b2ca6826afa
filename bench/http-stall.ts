/**
 * Can one user stall the others? The shipped server (`node bin/sqlrecall.js serve --users` as a
 * CHILD process; run `npm run build` first) gets eight maximal statements at once — each a
 * ~100,000-character `SELECT … WHERE 1 IN (0,1,2,…)`, just under the input limit of
 * `POST /api/sql` — while another user asks `GET /api/me` again and again. The figure: that other
 * user's `/api/me` latency (p50, p95, max) while the eight run, against its latency on an idle
 * server, before and after in one run:
 *
 * - "main thread": `SQLRECALL_CHECK_THREADS=0`, statements parsed and checked on the server's main
 *   thread (how every release before the worker pool did it);
 * - "worker pool": the default (`src/sql/check-pool.ts`: one thread per CPU but one);
 * - "one user sends all eight": the default again, but one user sends the eight: past
 *   `SQLRECALL_MAX_REQUESTS_PER_USER` (4) they are answered 429 at once.
 *
 * Rows 1 and 2 use eight different users, so the per-user bound takes no part: they measure the
 * parsing alone. Target (after): `/api/me` p95 ≤ 200 ms.
 *
 *   npx tsx bench/http-stall.ts [--rounds 3] [--quick] [--json]
 *
 * `--rounds`: each heavy user sends its statement this many times, one after another (the eight
 * users at once); `--quick`: 1 round. The questioned database is the PGlite demo shop (the
 * statement itself takes ~50 ms there); the scripted model is started only because `serve`
 * checks a model at start: no question is asked.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MAX_SQL_CHARS } from '../src/agent/run-sql.js';
import { UserDirectory } from '../src/app/users.js';
import { loadConfig } from '../src/config/config.js';
import { percentile } from '../src/eval/report.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { pgliteShop } from '../test/support/fixtures.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const ROUNDS = values.quick ? 1 : Number(values.rounds);
const HEAVY = 8;
const BIN = resolve('bin/sqlrecall.js');

/** The maximal statement: an IN list just under the input limit. */
const STATEMENT = (() => {
  let sql = 'SELECT 1 AS hit WHERE 1 IN (';
  for (let i = 0; sql.length < MAX_SQL_CHARS - 100; i += 1) sql += `${i === 0 ? '' : ','}${i}`;
  return `${sql})`;
})();

const model = await startScriptedOllama({ chat: () => 'unused' });
const shop = await pgliteShop();

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGTERM');
});

async function startServer(home: string, env: Record<string, string>) {
  const child = spawn(
    process.execPath,
    [BIN, 'serve', '--users', '--port', '0', '--db', shop.url, '--ollama-host', model.url, '--home', home],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1', ...env } },
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
  return { child, base };
}

interface Row {
  label: string;
  idleMeP50: number;
  idleMeP95: number;
  meP50: number;
  meP95: number;
  meMax: number;
  meCount: number;
  statements: number;
  refused429: number;
  statementMeanMs: number;
  wallMs: number;
}

async function runRow(label: string, env: Record<string, string>, oneUser: boolean): Promise<Row> {
  const home = mkdtempSync(join(tmpdir(), 'sqlrecall-http-stall-'));
  const config = loadConfig({
    env: {},
    cwd: home,
    flags: { home, databaseUrl: shop.url, ollamaHost: model.url, logLevel: 'silent' },
  });
  const client = memoryClient(config);
  const tokens: string[] = [];
  try {
    const directory = new UserDirectory(client);
    for (let u = 0; u <= HEAVY; u += 1) tokens.push((await directory.addUser(`u${u}`)).token);
  } finally {
    await client.close();
  }
  const light = tokens[HEAVY]!;
  const server = await startServer(home, env);
  try {
    const call = (token: string, path: string, body?: unknown) =>
      fetch(`${server.base}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    const timeMe = async (): Promise<number> => {
      const t = performance.now();
      const res = await call(light, '/api/me');
      await res.text();
      if (res.status !== 200) throw new Error(`/api/me answered ${res.status}`);
      return performance.now() - t;
    };
    // Warm-up: the first statement loads the schema and compiles the server's paths.
    for (const sql of ['SELECT 1', STATEMENT]) {
      const res = await call(tokens[0]!, '/api/sql', { sql });
      if (res.status !== 200) throw new Error(`warm-up answered ${res.status}: ${await res.text()}`);
      await res.text();
    }
    const idle: number[] = [];
    for (let i = 0; i < 40; i += 1) idle.push(await timeMe());

    const during: number[] = [];
    const statementMs: number[] = [];
    let refused = 0;
    let done = false;
    const started = performance.now();
    const heavy = Promise.all(
      Array.from({ length: HEAVY }, async (_, u) => {
        const token = oneUser ? tokens[0]! : tokens[u]!;
        for (let r = 0; r < ROUNDS; r += 1) {
          const t = performance.now();
          const res = await call(token, '/api/sql', { sql: STATEMENT });
          await res.text();
          if (res.status === 429) {
            refused += 1;
            continue;
          }
          if (res.status !== 200) throw new Error(`a statement answered ${res.status}`);
          statementMs.push(performance.now() - t);
        }
      }),
    ).finally(() => {
      done = true;
    });
    const probe = (async () => {
      while (!done) {
        during.push(await timeMe());
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await Promise.all([heavy, probe]);
    const wallMs = performance.now() - started;
    const round = (n: number) => Math.round(n);
    return {
      label,
      idleMeP50: round(percentile(idle, 50)),
      idleMeP95: round(percentile(idle, 95)),
      meP50: round(percentile(during, 50)),
      meP95: round(percentile(during, 95)),
      meMax: round(Math.max(...during)),
      meCount: during.length,
      statements: statementMs.length,
      refused429: refused,
      statementMeanMs: round(statementMs.reduce((a, b) => a + b, 0) / Math.max(1, statementMs.length)),
      wallMs: round(wallMs),
    };
  } finally {
    server.child.kill('SIGTERM');
    await new Promise((resolve) => server.child.once('exit', resolve));
    rmSync(home, { recursive: true, force: true });
  }
}

const load = loadavg()[0]!.toFixed(1);
const rows: Row[] = [];
rows.push(
  await runRow('main thread (SQLRECALL_CHECK_THREADS=0), 8 users', { SQLRECALL_CHECK_THREADS: '0' }, false),
);
rows.push(await runRow('worker pool (default), 8 users', {}, false));
rows.push(await runRow('worker pool of 2, 8 users', { SQLRECALL_CHECK_THREADS: '2' }, false));
rows.push(await runRow('worker pool, one user sends all eight', {}, true));
await model.close();
await shop.close();

if (values.json) {
  process.stdout.write(`${JSON.stringify({ rows, loadAverage: load, rounds: ROUNDS }, null, 2)}\n`);
} else {
  const lines = [
    `Eight parallel POST /api/sql of a ${STATEMENT.length.toLocaleString('en')}-character statement (${ROUNDS} round${ROUNDS === 1 ? '' : 's'} each); another user's GET /api/me meanwhile. Load average at start: ${load}.`,
    '',
    '| server | /api/me idle p50 / p95 | /api/me during p50 / p95 / max (n) | statements ok / 429 | statement mean | wall |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map(
      (r) =>
        `| ${r.label} | ${r.idleMeP50} / ${r.idleMeP95} ms | ${r.meP50} / **${r.meP95}** / ${r.meMax} ms (${r.meCount}) | ${r.statements} / ${r.refused429} | ${r.statementMeanMs} ms | ${r.wallMs} ms |`,
    ),
    '',
    'Target: /api/me p95 during the load ≤ 200 ms with the worker pool.',
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
process.exit(0);
