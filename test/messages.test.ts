/**
 * Messages and exit codes a new user meets first: a server that wants a password, TLS settings in
 * the URL, empty input, an over-long question, a misspelt table, a refused DELETE. Each message
 * says what to do in one line, and usage mistakes exit 2 before any database or model work.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_QUESTION_CHARS } from '../src/core/limits.js';
import { runSqlrecall } from './support/cli.js';
import { pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { createLocalApp, type LocalApp } from './support/server-app.js';

/** One authentication request message ('R') with its code and data. */
function authMessage(code: number, data: string): Buffer {
  const body = Buffer.from(data);
  const head = Buffer.alloc(9);
  head.write('R', 0);
  head.writeInt32BE(8 + body.length, 1);
  head.writeInt32BE(code, 5);
  return Buffer.concat([head, body]);
}

/**
 * A PostgreSQL server stand-in that speaks only the start of the protocol, as a server configured
 * for passwords does: it declines TLS ('N' to an SSLRequest), answers the startup message with
 * AuthenticationSASL (SCRAM-SHA-256) and the client's first SCRAM message with the server-first
 * message, at which point a client without a password gives up.
 */
function startPasswordServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    let messages = 0;
    socket.on('data', (data) => {
      // SSLRequest: length 8, code 80877103.
      if (data.length >= 8 && data.readInt32BE(0) === 8 && data.readInt32BE(4) === 80877103) {
        socket.write('N');
        return;
      }
      messages += 1;
      if (messages === 1) socket.write(authMessage(10, 'SCRAM-SHA-256\0\0'));
      else if (messages === 2) socket.write(authMessage(11, 'r=abc,s=QSXCR+Q6sek8bf92,i=4096'));
      else socket.destroy();
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const port = (server.address() as { port: number }).port;
      resolve({
        url: `postgres://alice@127.0.0.1:${port}/shop`,
        close: () =>
          new Promise<void>((done) => {
            for (const s of sockets) s.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

describe('messages and exit codes', () => {
  let home: string;
  let model: ScriptedOllama;
  let shopUrl: string;
  let passwordServer: Awaited<ReturnType<typeof startPasswordServer>>;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-messages-'));
    model = await startScriptedOllama({ chat: () => '```sql\nSELECT 1\n```' });
    shopUrl = (await pgliteShop()).url;
    passwordServer = await startPasswordServer();
  }, 60_000);
  afterAll(async () => {
    await passwordServer?.close();
    await model?.close();
    if (home) rmSync(home, { recursive: true, force: true });
    if (shopUrl) rmSync(shopUrl.slice('pglite:'.length), { recursive: true, force: true });
  });

  const env = () => ({ SQLRECALL_HOME: home, OLLAMA_HOST: model.url, SQLRECALL_MEMORY: 'off' });

  it('a server that wants a password: the message names PGPASSWORD and the URL form, not SASL', async () => {
    const run = await runSqlrecall(['sql', '--db', passwordServer.url, 'SELECT 1'], { env: env() });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('PGPASSWORD');
    expect(run.stderr).toContain('in the URL as user:password@host');
    expect(run.stderr).not.toMatch(/SASL|must be a string/);
  }, 30_000);

  it('?sslmode=require: one line, no driver warning block', async () => {
    const run = await runSqlrecall(['sql', '--db', `${passwordServer.url}?sslmode=require`, 'SELECT 1'], {
      env: env(),
    });
    expect(run.code).toBe(4);
    expect(run.stderr).not.toMatch(/SECURITY WARNING|uselibpqcompat|trace-warnings/);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: Cannot connect to .*SSL/)]);
  }, 30_000);

  it('MEMORY_DATABASE_URL with ?sslmode=require: one line, no driver warning block', async () => {
    const run = await runSqlrecall(['memory', 'list'], {
      env: { ...env(), SQLRECALL_MEMORY: 'on', MEMORY_DATABASE_URL: `${passwordServer.url}?sslmode=require` },
    });
    expect(run.code).not.toBe(0);
    expect(run.stderr).not.toMatch(/SECURITY WARNING|uselibpqcompat|trace-warnings/);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^error: .*SSL/)]);
  }, 30_000);

  it('empty input is a usage error (exit 2) for sql and ask, before any database or model work', async () => {
    const before = model.requests.length;
    for (const args of [
      ['sql', ''],
      ['sql', '   '],
      ['ask', ''],
      ['ask', '  '],
    ]) {
      const run = await runCliInProcess([...args, '--db', shopUrl], { env: env() });
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toMatch(/^error: /);
    }
    const json = await runCliInProcess(['ask', '', '--json', '--db', shopUrl], { env: env() });
    expect(json.code).toBe(2);
    expect(JSON.parse(json.stdout).error.code).toBe('usage');
    expect(model.requests.length).toBe(before);
  });

  it('a question over the documented limit is refused naming the limit, before any model call', async () => {
    const before = model.requests.length;
    const long = `how many orders ${'and more '.repeat(12_000)}`;
    const run = await runCliInProcess(['ask', long, '--db', shopUrl], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`the limit is ${MAX_QUESTION_CHARS.toLocaleString('en')} characters`);
    expect(model.requests.length).toBe(before);
  });

  describe('over HTTP', () => {
    let local: LocalApp;
    beforeAll(() => {
      local = createLocalApp({ databaseUrl: shopUrl, ollamaHost: model.url, home });
    });
    afterAll(async () => {
      await local?.close();
    });

    it('an empty or over-long question is a 400 naming the problem; the model is not called', async () => {
      const before = model.requests.length;
      const empty = await local.ask('   ', 'application/json');
      expect(empty.status).toBe(400);
      const long = await local.ask('x'.repeat(MAX_QUESTION_CHARS + 1), 'application/json');
      expect(long.status).toBe(400);
      expect(JSON.stringify(await long.json())).toContain(MAX_QUESTION_CHARS.toLocaleString('en'));
      expect(model.requests.length).toBe(before);
    });
  });

  it('an unknown table in sql: "did you mean orders?" (exit 4, the database error stays)', async () => {
    const run = await runCliInProcess(['sql', 'SELECT * FROM orderz', '--db', shopUrl], { env: env() });
    expect(run.code).toBe(4);
    expect(run.stderr).toContain('relation "orderz" does not exist');
    expect(run.stderr).toContain('hint: Did you mean orders?');
    const json = await runCliInProcess(['sql', 'SELECT * FROM orderz', '--json', '--db', shopUrl], {
      env: env(),
    });
    expect(JSON.parse(json.stdout).error.hint).toBe('Did you mean orders?');
    // Nothing close: no guess.
    const far = await runCliInProcess(['sql', 'SELECT * FROM zzzzzzzz', '--db', shopUrl], { env: env() });
    expect(far.code).toBe(4);
    expect(far.stderr).not.toContain('Did you mean');
  });

  it('a plain DELETE is refused as a statement that modifies data, not "inside a WITH clause"', async () => {
    const run = await runCliInProcess(['sql', 'DELETE FROM orders', '--db', shopUrl], { env: env() });
    expect(run.code).toBe(3);
    expect(run.stderr).toContain('a statement that modifies data (DELETE)');
    expect(run.stderr).not.toContain('WITH clause');
  });

  it("rows that equal the statement's own LIMIT are called the first N, not a total", async () => {
    const limited = await runCliInProcess(
      ['sql', 'SELECT name FROM customers ORDER BY id LIMIT 2', '--db', shopUrl],
      {
        env: env(),
      },
    );
    expect(limited.code).toBe(0);
    expect(limited.stdout).toContain("the first 2 rows (the query's LIMIT 2), not a total");
    const whole = await runCliInProcess(
      ['sql', 'SELECT name FROM customers ORDER BY id LIMIT 10', '--db', shopUrl],
      {
        env: env(),
      },
    );
    expect(whole.stdout).toContain('4 rows');
    expect(whole.stdout).not.toContain('not a total');
  });
});

describe('chat notes name what chat has', () => {
  let model: ScriptedOllama;
  let home: string;
  let shop: string;
  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-messages-chat-'));
    shop = (await pgliteShop()).url;
    model = await startScriptedOllama({
      chat: (request) =>
        request.lastUserMessage.includes('numbers')
          ? '```sql\nSELECT g FROM generate_series(1, 300) g\n```'
          : 'Here they are.',
    });
  }, 60_000);
  afterAll(async () => {
    await model?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('more rows than the chat prints: no "use --json" (chat has no --json)', async () => {
    const run = await runCliInProcess(['chat', '--db', shop], {
      env: { SQLRECALL_HOME: home, OLLAMA_HOST: model.url, SQLRECALL_MEMORY: 'off' },
      input: 'list the numbers\nexit\n',
    });
    expect(run.stdout).toContain('300 rows');
    expect(run.stdout).toContain('200 shown');
    expect(run.stdout).not.toContain('--json');
  });
});
