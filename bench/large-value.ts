/**
 * One value larger than the process could decode, end to end (the real-size check behind
 * docs/perf/large-values.md; too heavy for `npm run bench`): `serve` (the shipped binary, a child
 * process; `npm run build` first) answers `POST /api/sql` of `SELECT repeat('x', N)` — default
 * 600,000,000 — with 422 `result_too_large`, then `GET /api/health` with 200; prints the times and
 * the server's peak RSS (VmHWM). The scripted model only answers the health check.
 *
 *   npx tsx bench/large-value.ts [--bytes 600000000] [--db postgres://…|pglite:DIR] [--timeout-ms 300000]
 *
 * Default database: TEST_DATABASE_URL, else the PGlite demo shop.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { pgliteShop } from '../test/support/fixtures.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';

const { values } = parseArgs({
  options: {
    bytes: { type: 'string', default: '600000000' },
    db: { type: 'string' },
    'timeout-ms': { type: 'string', default: '300000' },
  },
});
const model = await startScriptedOllama({ chat: () => 'unused' });
const shop = values.db || process.env.TEST_DATABASE_URL ? undefined : await pgliteShop();
const db = values.db ?? process.env.TEST_DATABASE_URL ?? shop!.url;
const home = mkdtempSync(join(tmpdir(), 'sqlrecall-large-value-'));
const child = spawn(
  process.execPath,
  [
    resolve('bin/sqlrecall.js'),
    'serve',
    '--port',
    '0',
    '--db',
    db,
    '--ollama-host',
    model.url,
    '--home',
    home,
  ],
  {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', SQLRECALL_STATEMENT_TIMEOUT_MS: values['timeout-ms'] },
  },
);
let err = '';
child.stderr.on('data', (d: Buffer) => {
  err += d.toString();
});
const base = await new Promise<string>((ok, fail) => {
  let out = '';
  child.stdout.on('data', (d: Buffer) => {
    out += d.toString();
    const url = /Listening on (http:\/\/\S+)/.exec(out)?.[1];
    if (url) ok(url);
  });
  child.once('exit', (code) => fail(new Error(`serve exited (${code}):\n${err}`)));
});
const hwm = () =>
  Number(/^VmHWM:\s+(\d+) kB/m.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? 0);
const before = hwm();
const started = performance.now();
const res = await fetch(`${base}/api/sql`, {
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ sql: `SELECT repeat('x', ${Number(values.bytes)}) AS big` }),
});
const body = await res.text();
const sqlMs = performance.now() - started;
const health = await fetch(`${base}/api/health`);
const healthBody = await health.text();
const peak = hwm();
console.log(
  JSON.stringify(
    {
      database: db.startsWith('pglite:') ? 'pglite (in-process)' : 'PostgreSQL server',
      bytes: Number(values.bytes),
      sqlStatus: res.status,
      sqlBody: body.slice(0, 300),
      sqlSeconds: Math.round(sqlMs / 100) / 10,
      healthStatus: health.status,
      healthBody: healthBody.slice(0, 200),
      serverPeakRssMb: { beforeRequest: Math.round(before / 1024), peak: Math.round(peak / 1024) },
      loadAverage: loadavg()[0]!.toFixed(1),
    },
    null,
    2,
  ),
);
child.kill('SIGTERM');
await new Promise((resolve) => child.once('exit', resolve));
await model.close();
await shop?.close();
rmSync(home, { recursive: true, force: true });
process.exit(0);
