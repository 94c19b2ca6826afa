/**
 * The audit trail: every statement run, failed or refused on the one SQL path reaches the
 * listener; records go to the journal first and survive a `kill -9`; the table keeps each record
 * once, filters by user and time, prunes past the retention; only administrators read it over HTTP;
 * `users add --admin` makes one.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { parseSince } from '../src/app/audit.js';
import { UserDirectory } from '../src/app/users.js';
import { AuditLog } from '../src/audit/log.js';
import { AuditStore } from '../src/audit/store.js';
import type { StatementEvent } from '../src/core/audit.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector, QueryResult } from '../src/core/ports.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import type { SqlClient } from '../src/memory/store/sql-client.js';
import { createApp } from '../src/server/app.js';
import type { ServerDeps } from '../src/server/deps.js';
import { tempDir } from './support/temp-dir.js';

const ONE_ROW: QueryResult = {
  columns: [{ name: 'n', type: 'int4' }],
  rows: [[1]],
  rowCount: 1,
  truncated: false,
  durationMs: 1,
};

/** A database that answers one row, or fails like PostgreSQL for a statement naming `missing`. */
const database = {
  async execute(sql: string): Promise<QueryResult> {
    if (sql.includes('missing'))
      throw new SqlrecallError('db_query', 'relation "missing" does not exist', {
        details: { sqlState: '42P01' },
      });
    if (sql.includes('policed')) return { ...ONE_ROW, policies: ['team sales'] };
    return ONE_ROW;
  },
} as unknown as DatabaseConnector;

describe('the one SQL path tells the audit listener', () => {
  const run = async (sql: string) => {
    const events: StatementEvent[] = [];
    const outcome = await runCheckedSql({
      db: database,
      sql,
      maxRows: 10,
      timeoutMs: 1000,
      onStatement: (event) => events.push(event),
    }).catch((error: unknown) => error);
    return { events, outcome };
  };

  it('of a statement that ran, with its rows and the policies its result carries', async () => {
    expect((await run('SELECT 1 AS n')).events).toEqual([
      { sql: 'SELECT 1 AS n', origin: 'person', outcome: 'started' },
      { sql: 'SELECT 1 AS n', origin: 'person', outcome: 'ran', rowCount: 1 },
    ]);
    expect((await run('SELECT n FROM policed')).events[1]).toMatchObject({
      outcome: 'ran',
      policies: ['team sales'],
    });
  });

  it('of a refused statement (a write, several statements), which never reaches the database', async () => {
    for (const sql of ['DELETE FROM orders', 'SELECT 1; DROP TABLE orders']) {
      const { events, outcome } = await run(sql);
      expect(outcome).toBeInstanceOf(SqlrecallError);
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ sql, outcome: 'refused', code: 'guard_refused', origin: 'person' });
      expect(events[0]!.reason).toMatch(/refused|one statement|read/i);
    }
  });

  it('of a statement the database rejected', async () => {
    const { events } = await run('SELECT * FROM missing');
    expect(events).toEqual([
      expect.objectContaining({ outcome: 'started' }),
      expect.objectContaining({
        outcome: 'failed',
        code: 'db_query',
        reason: 'relation "missing" does not exist',
      }),
    ]);
  });

  it('and a listener that throws fails nothing', async () => {
    const result = await runCheckedSql({
      db: database,
      sql: 'SELECT 1',
      maxRows: 10,
      timeoutMs: 1000,
      onStatement: () => {
        throw new Error('broken sink');
      },
    });
    expect(result.result.rowCount).toBe(1);
  });
});

describe('audit journal and table', () => {
  let client: SqlClient;
  beforeAll(async () => {
    client = createPgliteClient(undefined);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('records go to the journal at once and to the table once attached, each once', async () => {
    const dir = tempDir('sqlrecall-audit-');
    const log = new AuditLog({ dir, retentionDays: 90, drainDelayMs: 5 });
    const ann = log.listener({ user: 'ann', frontEnd: 'http', question: 'orders?' });
    ann({ sql: 'SELECT 1', origin: 'model', outcome: 'ran', rowCount: 1 });
    ann({
      sql: 'DELETE FROM t',
      origin: 'model',
      outcome: 'refused',
      code: 'guard_refused',
      reason: 'a write',
    });
    log.record(
      { user: 'bob', frontEnd: 'cli' },
      { sql: 'SELECT 2', origin: 'person', outcome: 'ran', rowCount: 0 },
    );
    expect(log.status()).toMatchObject({ recorded: 3, stored: 0, errors: 0 });
    const store = new AuditStore(client);
    await log.attach(store);
    await log.close();
    expect(log.status()).toMatchObject({ recorded: 3, stored: 3, errors: 0 });
    const all = await store.list();
    expect(all.map((r) => [r.user, r.frontEnd, r.outcome, r.sql])).toEqual(
      expect.arrayContaining([
        ['ann', 'http', 'ran', 'SELECT 1'],
        ['ann', 'http', 'refused', 'DELETE FROM t'],
        ['bob', 'cli', 'ran', 'SELECT 2'],
      ]),
    );
    expect(all.find((r) => r.sql === 'DELETE FROM t')).toMatchObject({
      question: 'orders?',
      reason: 'a write',
      code: 'guard_refused',
      rowCount: null,
    });
    expect((await store.list({ user: 'bob' })).map((r) => r.sql)).toEqual(['SELECT 2']);
    // Another spelling of the same user finds the same records (as policies and users fold it).
    expect((await store.list({ user: 'BOB' })).map((r) => r.sql)).toEqual(['SELECT 2']);
    // Writing the same records again (a crash between insert and truncation) keeps one each.
    expect(await store.insert(all)).toBe(0);
    // Nothing left in the journal folder once everything is stored.
    expect(readdirSync(dir)).toEqual([]);
  });

  it('filters by time and deletes records past the retention', async () => {
    const store = new AuditStore(client);
    const old = new Date(Date.now() - 100 * 86_400_000).toISOString();
    await store.insert([
      {
        id: '00000000-0000-4000-8000-000000000001',
        at: old,
        user: 'old-user',
        frontEnd: 'cli',
        question: null,
        sql: 'SELECT old',
        outcome: 'ran',
        origin: 'person',
        rowCount: 1,
        reason: null,
        code: null,
        policies: ['defaults'],
      },
    ]);
    expect((await store.list({ user: 'old-user' }))[0]?.policies).toEqual(['defaults']);
    expect(await store.list({ user: 'old-user', since: parseSince('7d') })).toEqual([]);
    expect(await store.prune(90)).toBe(1);
    expect(await store.list({ user: 'old-user' })).toEqual([]);
  });

  it('a process killed with SIGKILL right after its statements loses none of their records', async () => {
    const dir = tempDir('sqlrecall-audit-crash-');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', resolve('test/support/audit-crash-child.ts'), dir, '25'],
      {
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    const signal = await new Promise<NodeJS.Signals | null>((done) =>
      child.on('exit', (_code, sig) => done(sig)),
    );
    expect(signal).toBe('SIGKILL');
    expect(JSON.parse(out.trim())).toMatchObject({ recorded: 25, stored: 0 });
    expect(readdirSync(dir)).toHaveLength(1); // its journal, left behind

    // The next process that opens the table takes the journal over.
    const store = new AuditStore(client);
    const next = new AuditLog({ dir, retentionDays: 90 });
    await next.attach(store);
    await next.close();
    const records = await store.list({ user: 'crash-user', limit: 1000 });
    expect(records.map((r) => r.sql).sort()).toEqual(
      Array.from({ length: 25 }, (_, i) => `SELECT ${i} AS n`).sort(),
    );
    expect(records.every((r) => r.question === 'how many orders?')).toBe(true);
    expect(existsSync(dir) ? readdirSync(dir) : []).toEqual([]);
  }, 60_000);

  it('--since takes dates, times and durations, and refuses anything else', () => {
    const now = new Date('2026-12-02T12:00:00Z');
    expect(parseSince('24h', now).toISOString()).toBe('2026-12-01T12:00:00.000Z');
    expect(parseSince('2026-11-30', now).toISOString()).toBe('2026-11-30T00:00:00.000Z');
    expect(() => parseSince('yesterday; DROP TABLE x', now)).toThrow(/--since/);
  });
});

describe('administrators', () => {
  let client: SqlClient;
  let users: UserDirectory;
  let adminToken: string;
  let memberToken: string;
  let listed = 0;
  let app: ReturnType<typeof createApp>;

  beforeAll(async () => {
    client = createPgliteClient(undefined);
    users = new UserDirectory(client);
    adminToken = (await users.addUser('root', { admin: true })).token;
    // A team admin is not an administrator of sqlrecall.
    memberToken = (await users.addUser('sam', { team: 'sales', teamRole: 'admin' })).token;
    const store = new AuditStore(client);
    const log = new AuditLog({ dir: tempDir('sqlrecall-audit-http-'), retentionDays: 90, drainDelayMs: 5 });
    await log.attach(store);
    const deps = {
      auth: { mode: 'users', users },
      sql: {
        database: async () => database,
        catalog: async () => {
          throw new Error('not used');
        },
        limits: { allowTables: [], maxRows: 100, statementTimeoutMs: 1000, maxResultBytes: 1 << 20 },
      },
      audit: {
        listener: (context) => log.listener(context),
        async list(query) {
          listed += 1;
          await log.flush();
          return store.list(query);
        },
        status: () => log.status(),
      },
    } as Partial<ServerDeps> as ServerDeps;
    app = createApp(deps);
  });
  afterAll(async () => {
    await client?.close();
  });

  const get = (path: string, token?: string) =>
    app.request(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});

  it('users add --admin signs in as an administrator; a team admin is not one', async () => {
    expect(await users.authenticate(adminToken)).toEqual({ user: 'root', admin: true });
    expect(await users.authenticate(memberToken)).toEqual({ user: 'sam', team: 'sales', teamRole: 'admin' });
    expect((await users.list()).map((u) => [u.user, u.admin ?? false])).toEqual([
      ['root', true],
      ['sam', false],
    ]);
  });

  it('GET /api/audit: 401 without a token, 403 for a non-admin (whatever the filter), records for an admin', async () => {
    const sql = await app.request('/api/sql', {
      method: 'POST',
      headers: { authorization: `Bearer ${memberToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ sql: 'DELETE FROM orders' }),
    });
    expect(sql.status).toBe(422);
    expect((await get('/api/audit')).status).toBe(401);
    const before = listed;
    for (const path of ['/api/audit', '/api/audit?user=sam', '/api/audit?user=root&since=1d']) {
      const denied = await get(path, memberToken);
      expect(denied.status).toBe(403);
      expect(((await denied.json()) as { error: { code: string } }).error.code).toBe('forbidden');
    }
    expect(listed).toBe(before); // the trail was never read for them
    const ok = await get('/api/audit?user=sam', adminToken);
    expect(ok.status).toBe(200);
    const { records } = (await ok.json()) as {
      records: { user: string; sql: string; outcome: string; frontEnd: string }[];
    };
    expect(records).toEqual([
      expect.objectContaining({
        user: 'sam',
        sql: 'DELETE FROM orders',
        outcome: 'refused',
        frontEnd: 'http',
      }),
    ]);
    expect((await get('/api/audit?since=someday', adminToken)).status).toBe(400);
  });
});
