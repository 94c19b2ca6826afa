/**
 * Large-result benchmark: the 600 × 1 MB query
 * `SELECT id, repeat('x', 1000000) FROM generate_series(1, 600) g(id)` (under the 1,000-row cap)
 * through `sqlrecall sql --json` and through `POST /api/ask` (JSON) of `sqlrecall serve`, each in
 * its own process. Prints how each ended (rows kept, `truncatedReason`, or the error code) and the
 * peak RSS above the idle process, against the goal: under 2 × the result byte budget.
 *
 *   npx tsx bench/large-result.ts [--quick] [--db URL] [--budget BYTES] [--concurrent N] [--json]
 *
 * Method (explicit): each process runs the TypeScript CLI through tsx (`src/main.ts`). sql:
 * peak = the kernel's high-water mark `VmHWM` from /proc/PID/status (Linux), read every 10 ms until
 * the process exits; idle = the same for a second `sql --json "SELECT 1"` (the first one may
 * create the embedded database). serve: `VmRSS` sampled every 10 ms during the requests; idle =
 * `VmRSS` after one small warm-up question. Database: `--db`, else TEST_DATABASE_URL, else an
 * embedded PGlite folder (whose WASM heap then counts in every figure). Model: the scripted
 * zero-delay Ollama server answering the SQL prompt with the query. `--quick`: one request to the
 * server (CI size); default: also `--concurrent` (4) requests at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { startScriptedOllama } from '../test/support/scripted/server.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    db: { type: 'string' },
    budget: { type: 'string', default: String(64 * 1024 * 1024) },
    concurrent: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAIN = join(ROOT, 'src', 'main.ts');
const QUERY = "SELECT id, repeat('x', 1000000) FROM generate_series(1, 600) g(id)";
const budget = Number(args.budget);
const MiB = 1024 * 1024;
const mib = (bytes: number): string => `${(bytes / MiB).toFixed(0)} MiB`;

/** `VmHWM` (peak) or `VmRSS` (current resident set) of a live process in bytes, else undefined. */
function peakRss(pid: number, field: 'VmHWM' | 'VmRSS' = 'VmHWM'): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) * 1024;
  } catch {
    return undefined;
  }
}

/** Starts the CLI in its own process. */
function cli(argv: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', MAIN, ...argv], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Runs the CLI to the end: output sizes, exit code and its peak RSS. */
async function runMeasured(
  argv: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string; peak: number }> {
  const child = cli(argv, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (d) => {
    stdout += d;
  });
  child.stderr?.on('data', (d) => {
    stderr += d;
  });
  let peak = 0;
  const timer = setInterval(() => {
    peak = Math.max(peak, peakRss(child.pid!) ?? 0);
  }, 10);
  const code = await new Promise<number | null>((done) => child.on('close', done));
  clearInterval(timer);
  return { code, stdout, stderr, peak };
}

async function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      server.close(() => done(port));
    });
    server.on('error', fail);
  });
}

/** One JSON outcome of `/api/ask`: how it ended. */
async function ask(base: string, question = 'everything, wide'): Promise<string> {
  const res = await fetch(`${base}/api/ask`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ question }),
  });
  const doc = (await res.json()) as {
    rowCount?: number;
    truncatedReason?: string;
    error?: { code: string };
  };
  return doc.error
    ? `HTTP ${res.status} ${doc.error.code}`
    : `HTTP ${res.status}, ${doc.rowCount} rows, ${doc.truncatedReason ?? 'whole'}`;
}

const home = mkdtempSync(join(tmpdir(), 'sqlrecall-bench-large-'));
const model = await startScriptedOllama({
  chat: (request) =>
    request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)
      ? `\`\`\`sql\n${request.messages.at(-1)?.content.includes('small') ? 'SELECT 1' : QUERY}\n\`\`\``
      : 'ok',
});
const env: Record<string, string> = {
  SQLRECALL_HOME: home,
  DATABASE_URL: args.db ?? process.env.TEST_DATABASE_URL ?? `pglite:${join(home, 'db')}`,
  OLLAMA_HOST: model.url,
  SQLRECALL_MEMORY: 'off',
  SQLRECALL_MAX_RESULT_BYTES: String(budget),
  SQLRECALL_LOG_LEVEL: 'silent',
};
const lines: string[] = [];
const figures: Record<string, unknown> = { budgetBytes: budget };
try {
  // --- sql --json --------------------------------------------------------------------------
  await runMeasured(['sql', '--json', 'SELECT 1'], env); // first run: creates an embedded database
  const idle = await runMeasured(['sql', '--json', 'SELECT 1'], env);
  const large = await runMeasured(['sql', '--json', QUERY], env);
  let ended: string;
  try {
    const doc = JSON.parse(large.stdout) as {
      rowCount?: number;
      truncatedReason?: string;
      error?: { code: string };
    };
    ended = doc.error
      ? `exit ${large.code}, ${doc.error.code}`
      : `exit ${large.code}, ${doc.rowCount} rows, ${doc.truncatedReason ?? 'whole'}`;
  } catch {
    ended = `exit ${large.code}, output not JSON: ${large.stderr.trim().split('\n').pop()}`;
  }
  const sqlAbove = large.peak - idle.peak;
  lines.push(
    `sql --json: ${ended}; peak RSS ${mib(large.peak)} (idle ${mib(idle.peak)}), above idle ${mib(sqlAbove)} = ${(sqlAbove / budget).toFixed(2)} × budget (goal < 2)`,
  );
  figures.sql = { ended, peak: large.peak, idle: idle.peak, aboveIdle: sqlAbove, ratio: sqlAbove / budget };

  // --- POST /api/ask ----------------------------------------------------------------------
  const port = await freePort();
  const server = cli(['serve', '--port', String(port)], env);
  let serverErr = '';
  server.stderr?.on('data', (d) => {
    serverErr += d;
  });
  try {
    const base = `http://127.0.0.1:${port}`;
    const started = Date.now();
    for (;;) {
      const up = await fetch(`${base}/api/health`).then(
        (r) => r.ok,
        () => false,
      );
      if (up) break;
      if (Date.now() - started > 60_000) throw new Error(`serve did not start: ${serverErr}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    await ask(base, 'something small'); // warm-up: the whole pipeline once, one tiny row
    const serverIdle = peakRss(server.pid!, 'VmRSS') ?? 0;
    /** Highest VmRSS of the server while `work` runs (sampled every 10 ms). */
    const sampled = async <T>(work: Promise<T>): Promise<[T, number]> => {
      let peak = 0;
      const timer = setInterval(() => {
        peak = Math.max(peak, peakRss(server.pid!, 'VmRSS') ?? 0);
      }, 10);
      const value = await work;
      clearInterval(timer);
      return [value, Math.max(peak, peakRss(server.pid!, 'VmRSS') ?? 0)];
    };
    const [single, afterOne] = await sampled(ask(base));
    lines.push(
      `POST /api/ask: ${single}; server peak RSS ${mib(afterOne)} (idle after warm-up ${mib(serverIdle)}), above ${mib(afterOne - serverIdle)} = ${((afterOne - serverIdle) / budget).toFixed(2)} × budget (goal < 2)`,
    );
    figures.http = {
      ended: single,
      peak: afterOne,
      idle: serverIdle,
      ratio: (afterOne - serverIdle) / budget,
    };
    if (!args.quick) {
      const n = Number(args.concurrent);
      const [outcomes, afterMany] = await sampled(Promise.all(Array.from({ length: n }, () => ask(base))));
      lines.push(
        `POST /api/ask × ${n} at once: ${[...new Set(outcomes)].join(' | ')}; server peak RSS ${mib(afterMany)}, above warm-up ${mib(afterMany - serverIdle)} = ${((afterMany - serverIdle) / budget).toFixed(2)} × budget`,
      );
      figures.concurrent = { n, outcomes, peak: afterMany, ratio: (afterMany - serverIdle) / budget };
    }
  } finally {
    server.kill('SIGTERM');
    await new Promise((r) => server.on('close', r));
  }
} finally {
  await model.close();
  rmSync(home, { recursive: true, force: true });
}
if (args.json) process.stdout.write(`${JSON.stringify(figures, null, 2)}\n`);
else {
  process.stdout.write(`budget ${mib(budget)} (--max-result-bytes); query: ${QUERY}\n`);
  for (const line of lines) process.stdout.write(`${line}\n`);
}
