// Smoke run of the built CLI on another Node.js binary (CI: Node 24 while the suite runs on the
// installed Node): `--version`, one `ask` answered by the scripted model server, and `serve` with
// GET /api/health. The database is the test suite's tiny shop on embedded PGlite; the memory store is
// on (embedded PGlite with pgvector), so WebAssembly, the socket sharing and the HTTP stack all run
// on that binary. This script itself runs on the installed Node (`npx tsx`), which also hosts the
// scripted model server. Exit 0 when every step passed; otherwise 1 with the failing step's output.
//
//   npx tsx scripts/node-smoke.ts --node /path/to/node24/bin/node
import { type ChildProcess, spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { BIN, ROOT } from '../test/support/cli.js';
import { pgliteShop } from '../test/support/fixtures.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';
import { tempDir } from '../test/support/temp-dir.js';

const { values } = parseArgs({ options: { node: { type: 'string' } } });
const node = values.node;
if (!node) {
  process.stderr.write('usage: npx tsx scripts/node-smoke.ts --node PATH\n');
  process.exit(2);
}

/** Runs the CLI on `node` to completion. */
function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(node!, [BIN, ...args], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

function fail(step: string, detail: string): never {
  process.stderr.write(`node smoke: ${step} failed\n${detail}\n`);
  process.exit(1);
}

const started = Date.now();
const step = (name: string) =>
  process.stdout.write(`node smoke: ${name} ok (${((Date.now() - started) / 1000).toFixed(1)} s)\n`);

const version = await run(['--version'], {});
const expected = (await import('../package.json', { with: { type: 'json' } })).default.version;
if (version.code !== 0 || version.out.trim() !== expected)
  fail(
    '--version',
    `exit ${version.code}, printed ${JSON.stringify(version.out)}, expected ${expected}\n${version.err}`,
  );
const nodeVersion = await new Promise<string>((resolve) => {
  const child = spawn(node, ['--version']);
  let text = '';
  child.stdout.on('data', (d) => (text += d));
  child.on('close', () => resolve(text.trim()));
});
step(`--version on node ${nodeVersion}`);

const home = tempDir('sqlrecall-node-smoke-');
const shop = await pgliteShop();
const model = await startScriptedOllama({
  chat: (req) =>
    (req.messages[0]?.content ?? '').startsWith(SQL_PROMPT_MARKER)
      ? '```sql\nSELECT count(*) AS n FROM orders\n```'
      : 'There are 4 orders.',
});
const env = {
  HOME: home,
  SQLRECALL_HOME: join(home, 'data'),
  OLLAMA_HOST: model.url,
  DATABASE_URL: shop.url,
};
let serve: ChildProcess | undefined;
try {
  const ask = await run(['ask', '--json', 'how many orders are there?'], env);
  let doc: { rows?: unknown[][]; answer?: string } = {};
  try {
    doc = JSON.parse(ask.out);
  } catch {
    // reported below
  }
  if (ask.code !== 0 || (JSON.stringify(doc.rows) !== '[["4"]]' && JSON.stringify(doc.rows) !== '[[4]]'))
    fail('ask', `exit ${ask.code}\nstdout: ${ask.out}\nstderr: ${ask.err}`);
  step('ask with the scripted model');

  const server = spawn(node, [BIN, 'serve', '--port', '0'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', ...env },
  });
  serve = server;
  let err = '';
  server.stderr.on('data', (d) => (err += d));
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('no "Listening on" within 60 s')), 60_000);
    server.stdout.on('data', (d) => {
      out += d;
      const match = /Listening on (http:\/\/\S+)/.exec(out);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    server.on('exit', (code) => reject(new Error(`serve exited with ${code}`)));
  }).catch((error: Error) => fail('serve', `${error.message}\n${err}`));
  const health = await fetch(`${url}/api/health`);
  const body = await health.text();
  if (health.status !== 200) fail('GET /api/health', `HTTP ${health.status}: ${body}\n${err}`);
  server.kill('SIGTERM');
  const code = await new Promise<number | null>((resolve) => server.on('exit', (c) => resolve(c)));
  serve = undefined;
  if (code !== 0) fail('serve stop', `exit ${code}\n${err}`);
  step('serve and GET /api/health');
} finally {
  serve?.kill('SIGKILL');
  await model.close();
  await shop.close();
  rmSync(home, { recursive: true, force: true });
}
