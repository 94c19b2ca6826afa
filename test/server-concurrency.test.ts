/**
 * No request can stall the others: a user may run a bounded number of statements and questions at
 * once (429 `too_many_requests` with Retry-After past it, counted until a streamed body ends), and
 * long statements are parsed and checked on worker threads (`src/sql/check-pool.ts`). The latency
 * target (another user's `GET /api/me` during eight maximal statements) is measured by
 * `bench/http-stall.ts`, not here.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Assistant } from '../src/agent/assistant.js';
import { MAX_SQL_CHARS } from '../src/agent/run-sql.js';
import type { UserDirectory } from '../src/app/users.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Step } from '../src/core/steps.js';
import { createApp } from '../src/server/app.js';
import type { ServerDeps } from '../src/server/deps.js';
import {
  checkPoolStats,
  closeCheckPool,
  configureCheckThreads,
  extractSqlOffThread,
  guardSqlOffThread,
} from '../src/sql/check-pool.js';
import { extractSql } from '../src/sql/extract.js';
import { guardSql } from '../src/sql/guard.js';

/** A gate each blocked call waits on; `open()` lets every waiting call finish. */
function latch() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

const RESULT = {
  columns: [{ name: 'one', type: 'int4' }],
  rows: [[1]],
  rowCount: 1,
  truncated: false,
  durationMs: 1,
};

/** An app whose statements and questions wait for `hold.opened`; tokens are user names. */
function blockedApp(hold: { opened: Promise<void> }, maxRequestsPerUser?: number) {
  const started: string[] = [];
  // Statements pass the real guard, then wait in the database until the latch opens.
  const database = {
    async execute(sql: string) {
      started.push(sql);
      await hold.opened;
      return RESULT;
    },
  } as unknown as DatabaseConnector;
  const assistant = {
    async *ask(): AsyncGenerator<Step> {
      started.push('ask');
      yield { type: 'classified', kind: 'question' } as unknown as Step;
      await hold.opened;
    },
  } as unknown as Assistant;
  const users = { authenticate: async (token: string) => ({ user: token }) } as unknown as UserDirectory;
  const deps: ServerDeps = {
    auth: { mode: 'users', users },
    assistant: async () => assistant,
    sql: {
      database: async () => database,
      catalog: async () => {
        throw new Error('not used');
      },
      limits: { allowTables: [], maxRows: 1000, statementTimeoutMs: 30_000, maxResultBytes: 1 << 20 },
    },
    memory: async () => {
      throw new Error('not used');
    },
    schema: {
      catalog: async () => {
        throw new Error('not used');
      },
      schemaLinking: async () => {
        throw new Error('not used');
      },
    },
    health: async () => ({ ok: true, model: { ok: true }, database: { ok: true }, memory: { ok: true } }),
    settings: () => {
      throw new Error('not used');
    },
    ...(maxRequestsPerUser !== undefined ? { maxRequestsPerUser } : {}),
  };
  const app = createApp(deps);
  const request = (user: string, path: string, body?: unknown, signal?: AbortSignal) =>
    app.request(path, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${user}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      ...(signal ? { signal } : {}),
    });
  return { app, request, started };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i += 1) await new Promise((resolve) => setTimeout(resolve, 10));
  expect(check()).toBe(true);
}

describe('per-user concurrency on /api/sql and /api/ask', () => {
  it('the fifth statement of one user is 429 with Retry-After and how many are running; others go on', async () => {
    const hold = latch();
    const { request, started } = blockedApp(hold);
    const running = Array.from({ length: 4 }, (_, i) => request('ana', '/api/sql', { sql: `SELECT ${i}` }));
    await until(() => started.length === 4);
    const refused = await request('ana', '/api/sql', { sql: 'SELECT 5' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('2');
    const body = (await refused.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('too_many_requests');
    expect(body.error.message).toContain('You already have 4 requests running (at most 4 at once)');
    // Another user is not counted with ana, and ana's other routes answer.
    const other = request('ben', '/api/sql', { sql: 'SELECT 6' });
    await until(() => started.length === 5);
    expect((await request('ana', '/api/me')).status).toBe(200);
    hold.open();
    const answers = await Promise.all([...running, other]);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // Finished requests (their bodies sent) are released.
    await Promise.all(answers.map((r) => r.text()));
    expect((await request('ana', '/api/sql', { sql: 'SELECT 7' })).status).toBe(200);
  });

  it('a streamed question counts until its stream ends or the client goes away', async () => {
    const hold = latch();
    const { request, started } = blockedApp(hold, 1);
    const controller = new AbortController();
    const streaming = await request('cy', '/api/ask', { question: 'q' }, controller.signal);
    expect(streaming.status).toBe(200);
    await until(() => started.includes('ask'));
    // The handler has returned its Response; the stream still runs: still counted.
    const refused = await request('cy', '/api/sql', { sql: 'SELECT 1' });
    expect(refused.status).toBe(429);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain(
      'You already have 1 request running (at most 1 at once)',
    );
    await streaming.body?.cancel();
    controller.abort();
    const after = request('cy', '/api/sql', { sql: 'SELECT 2' });
    hold.open();
    expect((await after).status).toBe(200);
  });
});

describe('long statements are checked on worker threads', () => {
  afterAll(async () => {
    await closeCheckPool();
  });

  /** A ~100,000-character statement: a long IN list. */
  const longList = (() => {
    let sql = 'SELECT 1 WHERE 1 IN (';
    for (let i = 0; sql.length < MAX_SQL_CHARS - 100; i += 1) sql += `${i === 0 ? '' : ','}${i}`;
    return `${sql})`;
  })();

  it('gives the same verdicts as the main thread, and runs only long texts on the pool', async () => {
    await configureCheckThreads(1);
    const before = (await checkPoolStats()).completed;
    const hostile = `SELECT pg_read_file('/etc/passwd') WHERE 1 IN (${longList.slice(21)}`;
    const [accepted, refused, extracted, short] = await Promise.all([
      guardSqlOffThread(longList),
      guardSqlOffThread(hostile),
      extractSqlOffThread(`Here it is:\n\`\`\`sql\n${longList}\n\`\`\``),
      guardSqlOffThread('SELECT 1'),
    ]);
    expect(accepted).toEqual(await guardSql(longList));
    expect(accepted.ok).toBe(true);
    expect(refused).toEqual(await guardSql(hostile));
    expect(refused.ok).toBe(false);
    expect(extracted).toEqual(extractSql(`Here it is:\n\`\`\`sql\n${longList}\n\`\`\``));
    expect(short.ok).toBe(true);
    expect((await checkPoolStats()).completed - before).toBe(3); // the short one stayed here
  }, 120_000);

  it('with the pool off (a one-shot command), everything runs in this thread', async () => {
    await configureCheckThreads(0);
    const verdict = await guardSqlOffThread(longList);
    expect(verdict.ok).toBe(true);
    expect(await checkPoolStats()).toEqual({ threads: 0, completed: 0 });
  }, 60_000);
});
