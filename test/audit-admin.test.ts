/**
 * What the audit and its administrators add around the data policy: a statement killed mid-run
 * leaves an `interrupted` record (its `started` record was written before it ran, and is held in
 * the journal until its outcome arrives); a statement refused because no policy can be decided (an
 * invalid policy file) is recorded with the reason; `GET /api/policy` tells administrators the
 * policy file's state and one user's effective policy, and nobody else; `users admin NAME
 * [--revoke]`; `--user` follows the rule of `users add`.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { UserDirectory } from '../src/app/users.js';
import { AuditLog } from '../src/audit/log.js';
import { AuditStore } from '../src/audit/store.js';
import { loadConfig } from '../src/config/config.js';
import type { AuditRecord } from '../src/core/audit.js';
import type { DatabaseConnector, QueryResult } from '../src/core/ports.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import type { SqlClient } from '../src/memory/store/sql-client.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { tempDir } from './support/temp-dir.js';

const POLICY = `
users:
  sam: { teams: [sales], attributes: { country: India } }
teams:
  sales:
    deny_columns: [public.orders.total_amount]
    rows:
      public.customers: "country = :country"
`;

/** This process's environment without vitest's variables. */
function withoutVitest(): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('VITEST')));
}

/** A statement that keeps PGlite busy for minutes. */
const SLOW_SQL = 'SELECT count(*) AS n FROM generate_series(1, 2000000000) AS g';

describe('a statement killed while it runs', () => {
  it('leaves a record the next process stores as interrupted, and `sqlrecall audit` shows it', async () => {
    const home = tempDir('sqlrecall-audit-kill-');
    const child = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        resolve('test/support/audit-crash-child.ts'),
        join(home, 'audit'),
        'slow',
        SLOW_SQL,
      ],
      // A plain process: with vitest's variables set, the child's imports look for vitest's state.
      { stdio: ['ignore', 'pipe', 'pipe'], env: withoutVitest() },
    );
    let out = '';
    let err = '';
    child.stderr.on('data', (chunk) => {
      err += chunk;
    });
    await new Promise<void>((started, failed) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        if (out.includes('started')) started();
      });
      child.on('exit', () => failed(new Error(`the child ended first: ${out}${err}`)));
    });
    // Killed during the statement: nothing after the started record runs.
    await new Promise((r) => setTimeout(r, 300));
    child.kill('SIGKILL');
    const signal = await new Promise<NodeJS.Signals | null>((done) =>
      child.on('exit', (_code, sig) => done(sig)),
    );
    expect(signal).toBe('SIGKILL');
    expect(out).not.toMatch(/finished/);

    const text = await runCliInProcess(['audit', '--user', 'crash-user'], { env: { SQLRECALL_HOME: home } });
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /crash-user {2}cli\/person {2}interrupted: the process ended during the statement/,
    );
    expect(text.stdout).toContain(SLOW_SQL);
    const json = await runCliInProcess(['audit', '--json'], { env: { SQLRECALL_HOME: home } });
    expect((JSON.parse(json.stdout) as { records: AuditRecord[] }).records).toEqual([
      expect.objectContaining({
        user: 'crash-user',
        sql: SLOW_SQL,
        outcome: 'interrupted',
        rowCount: null,
        question: 'how many orders?',
      }),
    ]);
  }, 60_000);
});

describe('a statement that is running', () => {
  let client: SqlClient;
  beforeAll(() => {
    client = createPgliteClient(undefined);
  });
  afterAll(async () => {
    await client?.close();
  });

  it('stays in the journal until its outcome, then is stored once, with that outcome', async () => {
    const store = new AuditStore(client);
    const log = new AuditLog({
      dir: tempDir('sqlrecall-audit-running-'),
      retentionDays: 90,
      drainDelayMs: 5,
    });
    await log.attach(store);
    let finish: (result: QueryResult) => void = () => {};
    const db = {
      dialect: 'postgres',
      execute: () =>
        new Promise<QueryResult>((done) => {
          finish = done;
        }),
    } as unknown as DatabaseConnector;
    const listener = log.listener({ user: 'runner', frontEnd: 'http' });
    let started: () => void = () => {};
    const startedNow = new Promise<void>((done) => {
      started = done;
    });
    const running = runCheckedSql({
      db,
      sql: 'SELECT 42 AS n',
      maxRows: 10,
      timeoutMs: 1000,
      onStatement: (event) => {
        listener(event);
        if (event.outcome === 'started') started();
      },
    });
    await startedNow;
    // Another statement of the same user finishes meanwhile: it waits behind the running one.
    log.record(
      { user: 'runner', frontEnd: 'cli' },
      { sql: 'SELECT 1', origin: 'person', outcome: 'ran', rowCount: 1 },
    );
    await new Promise((r) => setTimeout(r, 20));
    await log.flush();
    expect(await store.list({ user: 'runner' })).toEqual([]);
    finish({
      columns: [{ name: 'n', type: 'int4' }],
      rows: [[42]],
      rowCount: 1,
      truncated: false,
      durationMs: 1,
    });
    await running;
    await log.close();
    const records = await store.list({ user: 'runner' });
    expect(records.map((r) => [r.sql, r.outcome, r.rowCount]).sort()).toEqual([
      ['SELECT 1', 'ran', 1],
      ['SELECT 42 AS n', 'ran', 1],
    ]);
  });
});

describe('the policy status over HTTP, and refusals of an invalid policy file', () => {
  let home: string;
  let policyFile: string;
  let runtime: Runtime;
  let client: ReturnType<typeof memoryClient>;
  let app: ReturnType<typeof createApp>;
  let root: string;
  let sam: string;
  let closeFixture: () => Promise<void>;

  beforeAll(async () => {
    const fixture = await pgliteShop();
    closeFixture = fixture.close;
    home = tempDir('sqlrecall-policy-status-');
    policyFile = join(home, 'policy.yaml');
    writeFileSync(policyFile, POLICY);
    const config = loadConfig({
      env: {},
      cwd: home,
      flags: {
        databaseUrl: fixture.url,
        home,
        user: 'me',
        logLevel: 'silent',
        memoryEnabled: 'off',
        policy: policyFile,
        ollamaHost: 'http://127.0.0.1:9',
      },
    });
    client = memoryClient(config);
    runtime = new Runtime(config);
    const users = new UserDirectory(client);
    root = (await users.addUser('root', { admin: true })).token;
    sam = await users.add('sam');
    app = createApp(depsFromRuntime(runtime, { auth: { mode: 'users', users }, client }));
  }, 120_000);
  afterAll(async () => {
    await runtime?.close();
    await client?.close().catch(() => undefined);
    await closeFixture?.();
  });

  const get = async (path: string, token?: string) => {
    const res = await app.request(path, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    // biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  };

  it('GET /api/policy: 401 without a token, 403 for a user, the status for an administrator', async () => {
    expect((await get('/api/policy')).status).toBe(401);
    for (const path of ['/api/policy', '/api/policy?user=sam', '/api/policy?user=root']) {
      const denied = await get(path, sam);
      expect(denied.status).toBe(403);
      expect(denied.body.error.code).toBe('forbidden');
      expect(JSON.stringify(denied.body)).not.toMatch(/total_amount|country/);
    }
    const ok = await get('/api/policy', root);
    expect(ok.status).toBe(200);
    expect(ok.body).toMatchObject({
      file: policyFile,
      state: 'valid',
      valid: true,
      problems: [],
      users: 1,
      teams: 1,
    });
    expect(Date.parse(ok.body.loadedAt)).toBeGreaterThan(Date.now() - 60_000);
    expect(ok.body.effective).toBeUndefined();
  });

  it("GET /api/policy?user=NAME: that user's effective policy, as `policy explain` gives it", async () => {
    const { body } = await get('/api/policy?user=sam', root);
    expect(body.effective).toMatchObject({
      user: 'sam',
      sources: ['user sam', 'team sales'],
      deniedColumns: [{ table: 'public.orders', column: 'total_amount', policy: 'team sales' }],
      rowFilters: [{ table: 'public.customers', params: ['India'], policy: 'team sales' }],
      rowsToModel: true,
    });
    const cli = await runCliInProcess(
      ['policy', 'explain', '--json', '--user', 'sam', '--policy', policyFile],
      {
        env: { SQLRECALL_HOME: join(home, 'cli') },
      },
    );
    expect(cli.code, cli.stderr).toBe(0);
    expect(body.effective).toEqual(JSON.parse(cli.stdout));
    // Someone the file does not name gets the defaults (nothing restricted here).
    expect((await get('/api/policy?user=nobody', root)).body.effective).toMatchObject({
      sources: ['defaults'],
    });
  });

  it('an invalid file on disk is reported with its problems while the last valid version stays', async () => {
    writeFileSync(policyFile, `${POLICY}\n    deny_column: [public.orders.status]\n`);
    const { body } = await get('/api/policy?user=sam', root);
    expect(body).toMatchObject({ state: 'invalid-kept', valid: false });
    expect(JSON.stringify(body.problems)).toMatch(/deny_column/);
    expect(body.effective.deniedColumns).toHaveLength(1);
    writeFileSync(policyFile, POLICY);
    expect((await get('/api/policy', root)).body.state).toBe('valid');
  });

  it('a statement refused because the policy file was never valid is recorded with the reason', async () => {
    const broken = join(home, 'broken.yaml');
    writeFileSync(broken, 'users: [not, a, map]\n');
    const env = { SQLRECALL_HOME: join(home, 'cli'), SQLRECALL_POLICY: broken, SQLRECALL_USER: 'sam' };
    const run = await runCliInProcess(
      ['sql', 'SELECT name FROM customers', '--db', runtime.config.databaseUrl!],
      {
        env,
      },
    );
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/policy file .* is invalid, so no statement runs/);
    const audit = await runCliInProcess(['audit', '--json', '--user', 'sam'], { env });
    expect((JSON.parse(audit.stdout) as { records: AuditRecord[] }).records).toEqual([
      expect.objectContaining({
        sql: 'SELECT name FROM customers',
        outcome: 'refused',
        code: 'config',
        reason: expect.stringMatching(/is invalid, so no statement runs/),
        frontEnd: 'cli',
      }),
    ]);
  });
});

describe('users admin and --user', () => {
  const env = () => ({ SQLRECALL_HOME: home });
  let home: string;
  beforeAll(() => {
    home = tempDir('sqlrecall-users-admin-');
  });

  it('grants and revokes the administrator right after the user was added', async () => {
    expect((await runCliInProcess(['users', 'add', 'bob'], { env: env() })).code).toBe(0);
    const grant = await runCliInProcess(['users', 'admin', 'bob'], { env: env() });
    expect(grant.code, grant.stderr).toBe(0);
    expect(grant.stdout).toMatch(/bob is now an administrator/);
    expect((await runCliInProcess(['users', 'list'], { env: env() })).stdout).toMatch(
      /^bob {2}administrator/m,
    );
    const revoke = await runCliInProcess(['users', 'admin', 'bob', '--revoke', '--json'], { env: env() });
    expect(JSON.parse(revoke.stdout)).toEqual({ user: 'bob', admin: false });
    expect((await runCliInProcess(['users', 'list'], { env: env() })).stdout).not.toMatch(/administrator/);
  });

  it('an unknown user is exit 2 with the closest names; --revoke elsewhere is a usage error', async () => {
    const unknown = await runCliInProcess(['users', 'admin', 'bobb'], { env: env() });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/There is no user bobb/);
    expect(unknown.stderr).toMatch(/Did you mean bob\?/);
    const misplaced = await runCliInProcess(['users', 'token', 'bob', '--revoke'], { env: env() });
    expect(misplaced.code).toBe(2);
    expect(misplaced.stderr).toMatch(/--revoke goes with `users admin NAME`/);
  });

  it('--user and SQLRECALL_USER refuse a name `users add` refuses, with the same rule', async () => {
    const added = await runCliInProcess(['users', 'add', 'bad name'], { env: env() });
    expect(added.code).toBe(2);
    expect(added.stderr).toMatch(/1 to 100 letters, digits, dots, underscores, @ or hyphens/);
    for (const run of [
      await runCliInProcess(['sql', '--user', 'bad name', 'SELECT 1'], { env: env() }),
      await runCliInProcess(['sql', 'SELECT 1'], { env: { ...env(), SQLRECALL_USER: 'sam:x' } }),
      await runCliInProcess(['memory', 'list', '--user', 'a'.repeat(101)], { env: env() }),
    ]) {
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/user name is 1 to 100 letters, digits, dots, underscores, @ or hyphens/);
      expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    }
    const fine = await runCliInProcess(['memory', 'list', '--user', 'priya.k@example'], { env: env() });
    expect(fine.code, fine.stderr).toBe(0);
  });
});
