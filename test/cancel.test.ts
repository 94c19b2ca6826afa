/**
 * Issue 14, cancellation that reaches the database (server PostgreSQL only: PGlite runs in-process
 * and cannot interrupt a statement). A long cross join started through the CLI (Ctrl-C = SIGINT to
 * the real binary) and through HTTP (the client goes away: JSON and SSE) is gone from
 * `pg_stat_activity` within a second.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { BIN, ROOT } from './support/cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { createLocalApp, type LocalApp } from './support/server-app.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';

/** Runs for minutes: 10^12 row combinations. */
const CROSS_JOIN = 'SELECT count(*) FROM nums a, nums b, nums c';

describe.skipIf(!TEST_DATABASE_URL)('cancellation reaches the server', () => {
  let temp: TempDatabase;
  let probe: pg.Client;
  let home: string;
  let model: ScriptedOllama;

  /** Backends of our app running a statement in the temp database. */
  const running = async (): Promise<number> => {
    const result = await probe.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = $1 AND state = 'active' AND pid <> pg_backend_pid() AND application_name = 'sqlrecall'`,
      [temp.name],
    );
    return result.rows[0].n as number;
  };
  const waitFor = async (check: () => Promise<boolean>, timeoutMs: number): Promise<number> => {
    const started = Date.now();
    while (!(await check())) {
      if (Date.now() - started > timeoutMs) throw new Error(`not within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
    return Date.now() - started;
  };

  beforeAll(async () => {
    temp = await createTempDatabase('sqlrecall_cancel');
    probe = new pg.Client({ connectionString: temp.url });
    await probe.connect();
    await probe.query('CREATE TABLE nums AS SELECT g AS n FROM generate_series(1, 10000) g');
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-cancel-'));
    model = await startScriptedOllama({
      chat: (request) =>
        request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)
          ? `\`\`\`sql\n${CROSS_JOIN}\n\`\`\``
          : 'ok',
    });
  }, 60_000);

  afterAll(async () => {
    await probe?.end();
    await model?.close();
    await temp?.drop();
    if (home) rmSync(home, { recursive: true, force: true });
  });

  it('Ctrl-C on `sql`: the statement is gone within 1 s and the CLI exits 130', async () => {
    const child: ChildProcess = spawn(process.execPath, [BIN, 'sql', '--db', temp.url, CROSS_JOIN], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        SQLRECALL_HOME: home,
        SQLRECALL_STATEMENT_TIMEOUT_MS: '120000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await waitFor(async () => (await running()) === 1, 30_000);
      child.kill('SIGINT');
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
      expect(await exited).toBe(130);
      expect(stderr).toContain('cancelled');
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  it('Ctrl-C on `ask`: the statement is gone within 1 s and the CLI exits 130', async () => {
    const child: ChildProcess = spawn(process.execPath, [BIN, 'ask', '--db', temp.url, 'count everything'], {
      cwd: ROOT,
      env: {
        PATH: process.env.PATH ?? '',
        HOME: home,
        SQLRECALL_HOME: home,
        OLLAMA_HOST: model.url,
        SQLRECALL_MEMORY: 'off',
        SQLRECALL_STATEMENT_TIMEOUT_MS: '120000',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    try {
      await waitFor(async () => (await running()) === 1, 30_000);
      child.kill('SIGINT');
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
      expect(await exited).toBe(130);
    } finally {
      child.kill('SIGKILL');
    }
  }, 60_000);

  describe('HTTP', () => {
    let local: LocalApp;

    beforeAll(async () => {
      local = createLocalApp({
        databaseUrl: temp.url,
        ollamaHost: model.url,
        home,
        flags: { statementTimeoutMs: '120000' },
      });
    }, 60_000);
    afterAll(async () => {
      await local?.close();
    });

    const ask = (accept: string, signal?: AbortSignal) => local.ask('count everything', accept, signal);

    it('closing a JSON request cancels the statement within 1 s', async () => {
      const controller = new AbortController();
      const response = Promise.resolve(ask('application/json', controller.signal)).catch(() => null);
      await waitFor(async () => (await running()) === 1, 30_000);
      controller.abort();
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
      await response;
    }, 60_000);

    it('closing an SSE stream cancels the statement within 1 s', async () => {
      const res = await ask('text/event-stream');
      expect(res.headers.get('x-accel-buffering')).toBe('no');
      const reader = res.body!.getReader();
      await reader.read(); // the stream is open
      await waitFor(async () => (await running()) === 1, 30_000);
      await reader.cancel();
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
    }, 60_000);
  });
});
