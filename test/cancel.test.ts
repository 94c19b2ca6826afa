/**
 * Issue 14, cancellation that reaches the database (server PostgreSQL only: PGlite runs in-process
 * and cannot interrupt a statement). A long cross join started through the CLI (Ctrl-C = SIGINT to
 * the real binary), through HTTP (the client goes away: JSON and SSE) and through MCP (the SDK
 * client sends `notifications/cancelled`) is gone from `pg_stat_activity` within a second.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { BIN, ROOT } from './support/cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { createLocalApp, type LocalApp } from './support/server-app.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';

/** Runs for minutes: 10^12 row combinations. */
const CROSS_JOIN = 'SELECT count(*) FROM nums a, nums b, nums c';
/** A question whose model reply takes 30 s (a cancelled call must not wait for it). */
const SLOW_MODEL_QUESTION = 'think slowly about the numbers';

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
      chat: (request) => {
        if (!request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) return 'ok';
        if (request.lastUserMessage.includes(SLOW_MODEL_QUESTION))
          return { text: `\`\`\`sql\n${CROSS_JOIN}\n\`\`\``, delayMs: 30_000 };
        return `\`\`\`sql\n${CROSS_JOIN}\n\`\`\``;
      },
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

  describe('MCP (the SDK client sends notifications/cancelled)', () => {
    let client: Client;
    let stderr = '';

    beforeAll(async () => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'mcp', '--user', 'mcp-cancel', '--db', temp.url],
        env: {
          PATH: process.env.PATH ?? '',
          HOME: home,
          SQLRECALL_HOME: home,
          OLLAMA_HOST: model.url,
          SQLRECALL_MEMORY: 'off',
          SQLRECALL_STATEMENT_TIMEOUT_MS: '120000',
        },
        cwd: ROOT,
        stderr: 'pipe',
      });
      transport.stderr?.on('data', (d) => {
        stderr += d;
      });
      client = new Client({ name: 'sqlrecall-cancel-test', version: '1.0.0' });
      await client.connect(transport);
    }, 60_000);
    afterAll(async () => {
      await client?.close();
    });

    /**
     * True while our backend runs a statement over `nums` (its lock on the table shows it): the guard's
     * own catalog reads run through the same connection first and must not count as started.
     */
    const crossJoinRunning = async (): Promise<boolean> => {
      const result = await probe.query(
        `SELECT count(*)::int AS n FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE a.datname = $1 AND a.state = 'active' AND a.application_name = 'sqlrecall'
           AND l.relation = 'nums'::regclass`,
        [temp.name],
      );
      return result.rows[0].n > 0;
    };

    /**
     * Starts a tool call, waits until `started` holds, cancels it (the SDK client sends
     * notifications/cancelled); resolves once cancelled, with the call's outcome still pending.
     */
    const cancelWhen = async (
      name: string,
      args: Record<string, unknown>,
      started: () => Promise<boolean>,
    ) => {
      const controller = new AbortController();
      const call = client
        .callTool({ name, arguments: args }, undefined, { signal: controller.signal, timeout: 120_000 })
        .then(
          () => 'answered',
          (error: Error) => error.message,
        );
      await waitFor(started, 30_000);
      controller.abort('the user pressed stop');
      return { outcome: call };
    };

    it('a cancelled `sql` call: the statement is gone within 1 s', async () => {
      const { outcome } = await cancelWhen('sql', { sql: CROSS_JOIN }, crossJoinRunning);
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
      expect(await outcome).not.toBe('answered');
    }, 60_000);

    it('a cancelled `ask` call: its statement is gone within 1 s', async () => {
      const { outcome } = await cancelWhen('ask', { question: 'count everything' }, crossJoinRunning);
      const gone = await waitFor(async () => (await running()) === 0, 5_000);
      expect(gone).toBeLessThan(1000);
      expect(await outcome).not.toBe('answered');
    }, 60_000);

    it('a cancelled `ask` call stops its model request', async () => {
      const slow = () => model.requests.find((r) => JSON.stringify(r.body).includes(SLOW_MODEL_QUESTION));
      await cancelWhen('ask', { question: SLOW_MODEL_QUESTION }, async () => slow() !== undefined);
      const stopped = await waitFor(async () => slow()?.aborted === true, 5_000);
      expect(stopped).toBeLessThan(1000);
      // The server is still serving: the next call is answered.
      const next = await client.callTool({ name: 'sql', arguments: { sql: 'SELECT 1 AS one' } });
      expect(next.isError, stderr).toBeFalsy();
    }, 60_000);
  });
});
