/**
 * What a new user reads when things go wrong: a model server that is down (named as such, memory
 * texts never in the error), a reply stream cut mid-way (a cut reply, not "cannot reach"), Ctrl-C
 * during a question, an empty `schema context`, a mistyped `--allow-tables`, a model URL on a port
 * fetch never connects to, a `pglite:` folder that does not exist, and the one document of `ask`
 * and of a refused statement on every front end.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { DEFAULT_MCP_MAX_BYTES } from '../src/mcp/bounds.js';
import { RuntimeLease } from '../src/mcp/lease.js';
import { createMcpServer } from '../src/mcp/server.js';
import { Runtime } from '../src/runtime/runtime.js';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './support/scripted/server.js';
import { sseReply } from './support/scripted/transcripts.js';
import { createLocalApp } from './support/server-app.js';
import { tempDir } from './support/temp-dir.js';

const PREFERENCE = 'always show customers from India';
/** A question a rule could answer without the model: a cut reply must not be papered over by it. */
const COUNT_QUESTION = 'how many customers are there?';

/** A port nothing listens on: a model server that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('messages when things go wrong', () => {
  let model: ScriptedOllama;
  let fixture: Fixture;
  let dir: string;
  let env: Record<string, string>;
  let sqlReply: ScriptedReply = '```sql\nSELECT count(*) FROM customers\n```';

  beforeAll(async () => {
    fixture = await pgliteShop();
    dir = tempDir('sqlrecall-trouble-');
    model = await startScriptedOllama({
      chat: (request) => (request.purpose === 'sql' ? sqlReply : 'There are four customers.'),
    });
    env = {
      DATABASE_URL: fixture.url,
      OLLAMA_HOST: model.url,
      SQLRECALL_HOME: join(dir, 'home'),
      SQLRECALL_USER: 'meera',
      SQLRECALL_LOG_LEVEL: 'silent',
    };
    const added = await runCliInProcess(
      ['memory', 'add', '--kind', 'preference', '--sql', "customers.country = 'India'", PREFERENCE],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await model?.close();
    await fixture?.close();
  });

  it('a model server that is down during ask: named with its URL, no memory text in the error', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const run = await runCliInProcess(['ask', '--json', COUNT_QUESTION], {
      env: { ...env, OLLAMA_HOST: url },
    });
    expect(run.code, run.stderr).toBe(5);
    const { error } = JSON.parse(run.stdout);
    expect(error.code).toBe('model_unreachable');
    expect(error.message).toContain(
      `Cannot reach Ollama at ${url}: connection refused; nothing answers there`,
    );
    expect(error.message).not.toMatch(/embedding model .* is not available/);
    expect(error.hint).toMatch(/^ollama serve/);
    expect(error.hint).not.toMatch(/ollama pull/);
    // The preference that stopped the rule answer is named by its id, never by what it says.
    expect(error.message).toMatch(/standing preference \[[0-9a-f]{8}\]/);
    for (const text of [run.stdout, run.stderr]) expect(text).not.toContain(PREFERENCE);
  }, 60_000);

  it.each([
    ['dropped with the reply', { after: 'destroy', pause: false }],
    ['dropped mid-reply', { after: 'destroy', pause: true }],
    ['ended without its completion signal', { after: 'end', pause: false }],
  ] as const)(
    '/v1: a reply stream %s is a cut reply, not an unreachable server, and nothing runs',
    async (_what, how) => {
      const cut = sseReply('llama.cpp', { content: ['SELECT count(*) ', 'FROM'], complete: false });
      sqlReply = {
        raw: { ...cut, parts: how.pause ? [...cut.parts, { delayMs: 150 }] : cut.parts, after: how.after },
      };
      try {
        const run = await runCliInProcess(['ask', '--json', '--no-memory', COUNT_QUESTION], {
          env: { ...env, SQLRECALL_PROVIDER: 'openai', SQLRECALL_BASE_URL: `${model.url}/v1` },
        });
        expect(run.code, run.stdout + run.stderr).toBe(5);
        const doc = JSON.parse(run.stdout);
        // No rule answered in its place: nothing ran.
        expect(doc).toMatchObject({ sql: null, rows: [], rowCount: 0, error: { code: 'model_output' } });
        expect(doc.path).toBeUndefined();
        expect(doc.error.message).toMatch(/was cut off before it was complete \(an incomplete stream/);
        expect(doc.error.message).toContain('nothing of it was run or shown');
        expect(doc.error.message).not.toMatch(/Cannot reach|failed: terminated/);
        expect(doc.error.hint).toMatch(/model server's log/);
      } finally {
        sqlReply = '```sql\nSELECT count(*) FROM customers\n```';
      }
    },
    60_000,
  );

  it('Ctrl-C while the model writes SQL: exit 130, "Cancelled" saying what was stopped', async () => {
    model.reset();
    sqlReply = { text: 'SELECT count(*) FROM customers -- slow', chunkDelayMs: 60_000 };
    try {
      const running = runCliInProcess(['ask', '--json', '--no-memory', COUNT_QUESTION], { env });
      const deadline = Date.now() + 30_000;
      while (!model.requests.some((r) => r.chat?.purpose === 'sql')) {
        if (Date.now() > deadline) throw new Error('no SQL call');
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 200)); // the first token is streaming
      process.emit('SIGINT');
      const run = await running;
      expect(run.code, run.stderr).toBe(130);
      expect(JSON.parse(run.stdout).error).toEqual({
        code: 'cancelled',
        message: 'Cancelled; the model request was stopped and no statement was run.',
      });
      expect(run.stderr).toContain('error: Cancelled; the model request was stopped');
      expect(run.stderr).not.toMatch(/Unexpected error|aborted|AbortError/i);
      // The server sees the client go away a moment later.
      const sqlCall = model.requests.find((r) => r.chat?.purpose === 'sql')!;
      for (let i = 0; i < 40 && !sqlCall.aborted; i += 1) await new Promise((r) => setTimeout(r, 50));
      expect(sqlCall.aborted).toBe(true);
    } finally {
      sqlReply = '```sql\nSELECT count(*) FROM customers\n```';
    }
  }, 60_000);

  it('schema context with an empty question is a usage error (exit 2)', async () => {
    for (const question of ['', '   ']) {
      const run = await runCliInProcess(['schema', 'context', question], { env });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/^error: The question is empty/);
    }
  });

  it('--allow-tables: entries that are no table name are refused (exit 2); names, quoted names and schema.* pass', async () => {
    for (const bad of ['!!bad', 'public.cust omers', 'a.b.c', '*', 'orders;drop', 'public.*x']) {
      const run = await runCliInProcess(['sql', '--allow-tables', bad, 'SELECT name FROM customers'], {
        env,
      });
      expect(run.code, bad).toBe(2);
      expect(run.stderr).toMatch(
        /--allow-tables is invalid: expected schema\.table, schema\.\* or table names/,
      );
    }
    // A list of only commas or blanks names nothing: refused, never "no allowlist" (every table).
    for (const empty of [',', ' , ', ',,']) {
      const run = await runCliInProcess(['sql', '--allow-tables', empty, 'SELECT name FROM customers'], {
        env,
      });
      expect(run.code, JSON.stringify(empty)).toBe(2);
      expect(run.stderr).toMatch(/--allow-tables is invalid: the list names nothing/);
    }
    for (const good of [
      'public.customers',
      'customers,orders',
      'public.*',
      '"public"."customers"',
      'Customers',
    ]) {
      const run = await runCliInProcess(
        ['sql', '--json', '--allow-tables', good, 'SELECT name FROM customers'],
        {
          env,
        },
      );
      expect(run.code, `${good}: ${run.stderr}`).toBe(0);
      expect(JSON.parse(run.stdout).rowCount).toBe(4);
    }
  }, 60_000);

  it('doctor: a port fetch never connects to is not "bad port"; a closed one says nothing answers', async () => {
    for (const blocked of [
      { OLLAMA_HOST: 'http://127.0.0.1:9' } as Record<string, string>,
      {
        SQLRECALL_PROVIDER: 'openai',
        SQLRECALL_BASE_URL: 'http://127.0.0.1:9/v1',
      },
    ]) {
      const run = await runCliInProcess(['doctor'], { env: { ...env, ...blocked } });
      expect(run.code).toBe(5);
      expect(run.stdout).toContain("port 9 is one Node's fetch never connects to");
      expect(run.stdout).not.toMatch(/bad port/);
    }
    const url = `http://127.0.0.1:${await closedPort()}`;
    const down = await runCliInProcess(['doctor'], { env: { ...env, OLLAMA_HOST: url } });
    expect(down.code).toBe(5);
    expect(down.stdout).toContain(`Cannot reach Ollama at ${url}: connection refused; nothing answers there`);
  }, 60_000);

  it('pglite: a folder that does not exist is refused (exit 2) and never created; an existing folder opens', async () => {
    const missing = join(dir, 'missing-folder');
    for (const args of [['ask', COUNT_QUESTION], ['sql', 'SELECT 1'], ['schema']]) {
      const run = await runCliInProcess([...args, '--db', `pglite:${missing}`], { env });
      expect(run.code, `${args[0]}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain(
        `error: There is no database at ${missing}: give the folder of an existing`,
      );
      expect(run.stderr).toContain('`sqlrecall demo`');
      expect(existsSync(missing)).toBe(false);
    }
    const made = join(dir, 'made-by-me');
    mkdirSync(made);
    const run = await runCliInProcess(['sql', '--json', '--db', `pglite:${made}`, 'SELECT 1 AS one'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout).rows).toEqual([[1]]);
  }, 120_000);

  it('ask --json always carries kind and conversationId, null when memory is off', async () => {
    const run = await runCliInProcess(['ask', '--json', '--no-memory', COUNT_QUESTION], { env });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toHaveProperty('kind', null);
    expect(doc).toHaveProperty('conversationId', null);
    const withMemory = JSON.parse((await runCliInProcess(['ask', '--json', COUNT_QUESTION], { env })).stdout);
    expect(withMemory.kind).toBe('question');
    expect(typeof withMemory.conversationId).toBe('string');
  }, 60_000);

  it('a refused or failed statement: the document carries the statement on the CLI, HTTP and MCP', async () => {
    const local = createLocalApp({
      databaseUrl: fixture.url,
      ollamaHost: model.url,
      home: join(dir, 'http'),
    });
    const config = loadConfig({
      env: {},
      cwd: dir,
      flags: { ...mcpFlags(dir), databaseUrl: fixture.url },
    });
    const lease = new RuntimeLease(() => new Runtime(config), true);
    const server = createMcpServer({
      config,
      runtime: lease,
      maxBytes: DEFAULT_MCP_MAX_BYTES,
      log: () => {},
      version: 'test',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'trouble-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      for (const [sql, code] of [
        ['DELETE FROM orders', 'guard_refused'],
        ['SELECT nope FROM orders', 'db_query'],
      ] as const) {
        const cli = JSON.parse((await runCliInProcess(['sql', '--json', sql], { env })).stdout);
        const res = await local.app.request('/api/sql', {
          method: 'POST',
          headers: { 'content-type': 'application/json', accept: 'application/json' },
          body: JSON.stringify({ sql }),
        });
        const http = await res.json();
        const tool = (await client.callTool({ name: 'sql', arguments: { sql } })) as CallToolResult;
        expect(tool.isError).toBe(true);
        const mcp = JSON.parse((tool.content[0] as { text: string }).text);
        expect(cli).toMatchObject({ sql, error: { code } });
        expect(http).toEqual(cli);
        expect(mcp).toEqual(cli);
      }
    } finally {
      await client.close();
      await server.close();
      await lease.close();
      await local.close();
    }
  }, 120_000);
});

/** Settings of the MCP server's runtime: the test's user, its own home, memory off. */
function mcpFlags(dir: string): Record<string, string> {
  return { home: join(dir, 'mcp'), user: 'meera', logLevel: 'silent', memoryEnabled: 'off' };
}
