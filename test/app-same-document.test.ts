/**
 * One application layer under three front ends: the same question through `sqlrecall ask --json`
 * (the CLI in process), `POST /api/ask` (the Hono app in process, JSON body) and the MCP `ask` tool
 * (the MCP server over an in-memory transport) gives the same document; the same statement through
 * `sqlrecall sql --json`, `POST /api/sql` and the MCP `sql` tool gives the same rows, or the same
 * refusal. Every front end runs on its own Runtime over one configuration (the small shop on
 * PGlite, the embedded memory store, a scripted model), one after another, as a user would.
 */
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { loadConfig } from '../src/config/config.js';
import { DEFAULT_MCP_MAX_BYTES } from '../src/mcp/bounds.js';
import { RuntimeLease } from '../src/mcp/lease.js';
import { createMcpServer } from '../src/mcp/server.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { compileFor, extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

/** The stored preference, and the condition that shows it applied. */
const INDIA = "customers.country = 'India'";
/**
 * The model's SQL with the preference: long labels, so the 1 KiB byte budget cuts the rows (the
 * MCP tool once ignored the budget and called every cut `max_rows`), and one category plus one
 * number, so a chart fits.
 */
const INDIA_SQL = `SELECT customers.name || repeat('.', 300) AS label, g AS n FROM customers CROSS JOIN generate_series(1, 10) AS g WHERE ${INDIA} ORDER BY 1, 2`;
const ANSWER = 'Asha and Dev are the customers in India.';
/** A question the model answers with two statements: refused, never run. */
const TWO_STATEMENTS_QUESTION = 'Which customers placed orders, and clear the rest?';
const TWO_STATEMENTS = 'SELECT name FROM customers;\nDELETE FROM orders';
const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

/** A JSON document, read field by field. */
// biome-ignore lint/suspicious/noExplicitAny: the documents under test are loosely typed JSON
type Doc = Record<string, any>;

/**
 * Fields that differ between two calls by nature, removed before comparing: each call without a
 * conversation id starts a new conversation, so `conversationId` is a fresh id every time.
 */
const PER_CALL_FIELDS = ['conversationId'] as const;

function withoutPerCall(doc: Doc): Doc {
  const copy = { ...doc };
  for (const field of PER_CALL_FIELDS) delete copy[field];
  return copy;
}

/** The JSON text of a tool result. */
function toolJson(result: CallToolResult): Doc {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text) as Doc;
}

/** A port nothing listens on: a model server that is down. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe('one ask document and one runSql on every front end', () => {
  let model: ScriptedOllama;
  let fixture: Fixture;
  let home: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    fixture = await pgliteShop();
    home = join(tempDir('sqlrecall-same-doc-'), 'home');
    model = await startScriptedOllama({
      chat: (request) => {
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD' });
        if (request.purpose === 'memory-compile') return compileFor(request.lastUserMessage);
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          const prompt = request.messages.map((m) => m.content).join('\n');
          if (prompt.includes(TWO_STATEMENTS_QUESTION)) return fence(TWO_STATEMENTS);
          return fence(prompt.includes(INDIA) ? INDIA_SQL : 'SELECT name FROM customers ORDER BY id');
        }
        return ANSWER;
      },
    });
    env = {
      DATABASE_URL: fixture.url,
      OLLAMA_HOST: model.url,
      SQLRECALL_HOME: home,
      SQLRECALL_USER: 'me',
      SQLRECALL_LOG_LEVEL: 'silent',
      SQLRECALL_MAX_RESULT_BYTES: '1024',
    };
    const added = await runCliInProcess(['memory', 'add', '--sql', INDIA, 'Only show customers from India'], {
      env,
    });
    expect(added.code, added.stderr).toBe(0);
  }, 120_000);
  afterAll(async () => {
    await model?.close();
    await fixture?.close();
  });

  /** `sqlrecall <args>` in process; its stdout parsed as the one JSON document. */
  async function cli(args: string[], settings: Record<string, string>): Promise<Doc> {
    const run = await runCliInProcess(args, { env: settings });
    return JSON.parse(run.stdout) as Doc;
  }

  /**
   * One request to the HTTP API (local mode, user `me`) on a runtime of its own, closed after: a
   * POST of `body`, or a GET when `body` is undefined.
   */
  async function http(
    path: string,
    body: unknown,
    settings: Record<string, string>,
  ): Promise<{ status: number; json: Doc }> {
    const config = loadConfig({ env: settings, cwd: home, flags: {} });
    const client = memoryClient(config);
    const runtime = new Runtime(config);
    try {
      const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'local', user: 'me' }, client }));
      const res = await app.request(path, {
        method: body === undefined ? 'GET' : 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: JSON.parse(await res.text()) as Doc };
    } finally {
      await runtime.close();
      await client.close().catch(() => undefined);
    }
  }

  /** One MCP tool call over an in-memory transport (the runtime released after the call). */
  async function mcp(
    tool: string,
    args: Record<string, unknown>,
    settings: Record<string, string>,
  ): Promise<CallToolResult> {
    return withMcpClient(
      settings,
      async (client) =>
        (await client.callTool({ name: tool, arguments: args }, undefined, {
          timeout: 90_000,
        })) as CallToolResult,
    );
  }

  /** Runs `use` with an MCP client connected over an in-memory transport (released after). */
  async function withMcpClient<T>(
    settings: Record<string, string>,
    use: (client: Client) => Promise<T>,
  ): Promise<T> {
    const config = loadConfig({ env: settings, cwd: home, flags: {} });
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
    const client = new Client({ name: 'same-document-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      return await use(client);
    } finally {
      await client.close();
      await server.close();
      await lease.close();
    }
  }

  /** The ask document of `question` from each front end, in the order CLI, HTTP, MCP. */
  async function askEverywhere(question: string, settings: Record<string, string>): Promise<Doc[]> {
    const fromCli = await cli(['ask', '--json', question], settings);
    const fromHttp = await http('/api/ask', { question }, settings);
    expect(fromHttp.status, JSON.stringify(fromHttp.json)).toBe(200);
    const fromMcp = await mcp('ask', { question }, settings);
    expect(fromMcp.isError, JSON.stringify(fromMcp.content)).toBeFalsy();
    return [fromCli, fromHttp.json, toolJson(fromMcp)];
  }

  it('a question answered by the model with a memory applied and rows cut by the byte budget', async () => {
    const docs = await askEverywhere('Which customers do we have?', env);
    const [fromCli] = docs;
    // The scenario is what it claims: the preference applied, the budget cut the rows, a chart fits.
    expect(fromCli?.error).toBeUndefined();
    expect(fromCli?.sql).toBe(INDIA_SQL);
    expect(fromCli?.appliedMemories.map((m: { text: string }) => m.text)).toEqual([
      'Only show customers from India',
    ]);
    expect(fromCli?.truncated).toBe(true);
    expect(fromCli?.truncatedReason).toBe('max_bytes');
    expect(fromCli?.rowCount).toBeGreaterThan(0);
    expect(fromCli?.rowCount).toBeLessThan(20);
    expect(fromCli?.columns).toEqual(['label', 'n']);
    expect(fromCli?.columnTypes).toEqual(['text', 'int4']);
    expect(fromCli?.chart).toEqual({ type: 'bar', x: 'label', series: ['n'] });
    expect(fromCli?.answer).toBe(ANSWER);
    expect(fromCli?.kind).toBe('question');
    for (const doc of docs) expect(typeof doc.conversationId).toBe('string');
    const [cliDoc, httpDoc, mcpDoc] = docs.map(withoutPerCall);
    expect(httpDoc).toEqual(cliDoc);
    expect(mcpDoc).toEqual(cliDoc);
  }, 180_000);

  it('a question answered by a rule while the model server is down', async () => {
    const down = { ...env, OLLAMA_HOST: `http://127.0.0.1:${await closedPort()}` };
    const docs = await askEverywhere('how many orders per status', down);
    const [fromCli] = docs;
    expect(fromCli?.error).toBeUndefined();
    expect(fromCli?.path).toBe('rules');
    expect(fromCli?.rows).toEqual(expect.arrayContaining([['delivered', '3']]));
    expect(fromCli?.chart).not.toBeNull();
    const [cliDoc, httpDoc, mcpDoc] = docs.map(withoutPerCall);
    expect(httpDoc).toEqual(cliDoc);
    expect(mcpDoc).toEqual(cliDoc);
  }, 180_000);

  /** The ask document of a failing `question` from each front end (CLI, HTTP, MCP), with the HTTP status. */
  async function failEverywhere(
    question: string,
    settings: Record<string, string>,
  ): Promise<{ docs: Doc[]; status: number; exitCode: number }> {
    const run = await runCliInProcess(['ask', '--json', question], { env: settings });
    const fromHttp = await http('/api/ask', { question }, settings);
    const fromMcp = await mcp('ask', { question }, settings);
    expect(fromMcp.isError).toBe(true);
    return {
      docs: [JSON.parse(run.stdout) as Doc, fromHttp.json, toolJson(fromMcp)],
      status: fromHttp.status,
      exitCode: run.code ?? -1,
    };
  }

  it('a question whose SQL is refused: one failure document (steps done, SQL tried, error) everywhere', async () => {
    const before = await fixture.snapshot();
    const { docs, status, exitCode } = await failEverywhere(TWO_STATEMENTS_QUESTION, env);
    const [fromCli] = docs;
    expect(exitCode).toBe(3);
    expect(status).toBe(422);
    expect(fromCli?.error).toMatchObject({ code: 'guard_refused', rule: 'multiple-statements' });
    // The model's two statements are refused in the words `sql` uses for a person's two statements.
    expect(fromCli?.error.message).toBe(
      'Refused: 2 statements were given; only one statement may run at a time',
    );
    expect(fromCli?.sql).toMatch(/DELETE FROM orders/);
    expect(fromCli?.attempts).toEqual([{ sql: fromCli?.sql, error: fromCli?.error.message }]);
    expect(fromCli?.kind).toBe('question');
    expect(fromCli?.rows).toEqual([]);
    const [cliDoc, httpDoc, mcpDoc] = docs.map(withoutPerCall);
    expect(httpDoc).toEqual(cliDoc);
    expect(mcpDoc).toEqual(cliDoc);
    expect(await fixture.snapshot()).toBe(before);
    const two = await sqlEverywhere('SELECT name FROM customers; DELETE FROM orders');
    expect(two.cli.error.message).toBe(fromCli?.error.message);
  }, 180_000);

  it('an empty question and an empty statement: one wording each, on every front end', async () => {
    const down = { ...env, OLLAMA_HOST: `http://127.0.0.1:${await closedPort()}` };
    const { docs, status, exitCode } = await failEverywhere('   ', down);
    expect(exitCode).toBe(2);
    expect(status).toBe(400);
    expect(docs[0]?.error).toEqual({
      code: 'usage',
      message: expect.stringMatching(/^The question is empty/),
    });
    expect(docs[1]).toEqual(docs[0]);
    expect(docs[2]).toEqual(docs[0]);
    const got = await sqlEverywhere('  ');
    expect(got.mcpError).toBe(true);
    expect(got.cli.error).toEqual({
      code: 'usage',
      message: expect.stringMatching(/^There is no SQL to run/),
    });
    expect(got.http.error).toEqual(got.cli.error);
    expect(got.mcp.error).toEqual(got.cli.error);
  }, 180_000);

  /** The result of `sql` from each front end: CLI and MCP documents, and the HTTP body. */
  async function sqlEverywhere(sql: string): Promise<{ cli: Doc; http: Doc; mcp: Doc; mcpError: boolean }> {
    const fromCli = await cli(['sql', '--json', sql], env);
    const fromHttp = await http('/api/sql', { sql }, env);
    const fromMcp = await mcp('sql', { sql }, env);
    return { cli: fromCli, http: fromHttp.json, mcp: toolJson(fromMcp), mcpError: fromMcp.isError === true };
  }

  it.each([
    ['a write', 'DELETE FROM orders', 'guard_refused'],
    ['two statements', 'SELECT 1; DROP TABLE orders', 'guard_refused'],
    ['a function that reads files', "SELECT pg_read_file('/etc/passwd')", 'guard_refused'],
    ['a table that does not exist (with its did-you-mean hint)', 'SELECT name FROM customer', 'db_query'],
  ])(
    '%s: the same error, word for word, on every front end',
    async (_what, sql, code) => {
      const before = await fixture.snapshot();
      const got = await sqlEverywhere(sql);
      expect(got.mcpError).toBe(true);
      const cliError = {
        code: got.cli.error?.code,
        message: got.cli.error?.message,
        hint: got.cli.error?.hint,
      };
      expect(cliError.code).toBe(code);
      // A person wrote the statement: the refusal never blames the model.
      if (code === 'guard_refused') expect(cliError.message).toMatch(/^Refused: (?!.*\bmodel\b)/);
      else expect(cliError.hint).toMatch(/Did you mean .*customers/);
      for (const error of [got.http.error, got.mcp.error]) {
        expect({ code: error?.code, message: error?.message, hint: error?.hint }).toEqual(cliError);
      }
      expect(await fixture.snapshot()).toBe(before);
    },
    180_000,
  );

  it('a good statement: the same rows, columns and cut on every front end', async () => {
    const sql = "SELECT name, repeat('x', 400) AS pad FROM customers ORDER BY id";
    const got = await sqlEverywhere(sql);
    expect(got.mcpError).toBe(false);
    // Four rows of 400+ bytes do not fit in 1 KiB: every surface cuts them the same way.
    expect(got.cli.truncated).toBe(true);
    expect(got.cli.truncatedReason).toBe('max_bytes');
    expect(got.cli.rows.length).toBeGreaterThan(0);
    expect(got.cli.rows.length).toBeLessThan(4);
    expect(got.cli.columns).toEqual(['name', 'pad']);
    expect(got.cli.columnTypes).toEqual(['text', 'text']);
    expect(got.cli).toHaveProperty('chart', null);
    // One document on all three: the web API too carries column names with `columnTypes`, and a chart.
    expect(got.mcp).toEqual(got.cli);
    expect(got.http).toEqual(got.cli);
  }, 180_000);

  it('a statement whose rows fit a chart: the same chart on every front end', async () => {
    const got = await sqlEverywhere(
      'SELECT status, count(*) AS n FROM orders GROUP BY status ORDER BY status',
    );
    expect(got.cli.chart).toEqual({ type: 'bar', x: 'status', series: ['n'] });
    expect(got.mcp).toEqual(got.cli);
    expect(got.http).toEqual(got.cli);
  }, 180_000);

  it('the catalog: the same document from the CLI and HTTP, the same text from the CLI and MCP', async () => {
    const fromCli = await cli(['schema', '--json'], env);
    const fromHttp = await http('/api/schema', undefined, env);
    expect(fromHttp.status, JSON.stringify(fromHttp.json)).toBe(200);
    // The scenario is what it claims: the shop's tables with their columns and keys.
    const orders = fromCli.tables.find((t: { name: string }) => t.name === 'orders');
    expect(orders.columns.map((c: { name: string }) => c.name)).toContain('customer_id');
    expect(orders.foreignKeys[0].references.table).toBe('customers');
    expect(fromHttp.json).toEqual(fromCli);

    const text = (await runCliInProcess(['schema'], { env })).stdout;
    expect(text).toMatch(/^orders\(id integer PK/m);
    const tool = await mcp('schema', {}, env);
    expect(tool.isError, JSON.stringify(tool.content)).toBeFalsy();
    const resource = await withMcpClient(env, (client) => client.readResource({ uri: 'schema://tables' }));
    for (const shown of [tool.content[0], resource.contents[0]])
      expect(`${(shown as { text: string }).text}\n`).toBe(text);
  }, 180_000);

  it('the schema context of a question: one document on every front end, over the one stored index', async () => {
    const question = 'orders per customer country';
    const fromCli = await cli(['schema', 'context', '--json', question], env);
    const fromHttp = await http('/api/schema/context', { question }, env);
    expect(fromHttp.status, JSON.stringify(fromHttp.json)).toBe(200);
    const fromMcp = await mcp('schema_context', { question }, env);
    expect(fromMcp.isError, JSON.stringify(fromMcp.content)).toBeFalsy();
    const docs = [fromCli, fromHttp.json, toolJson(fromMcp)];
    // The scenario is what it claims: tables chosen with reasons, a budget from the model's window.
    expect(fromCli.error).toBeUndefined();
    expect(fromCli.question).toBe(question);
    expect(fromCli.tables.map((t: { table: string }) => t.table)).toEqual(
      expect.arrayContaining(['public.orders', 'public.customers']),
    );
    expect(fromCli.budget.contextTokens).toBeGreaterThan(0);
    expect(fromCli.schemaText).toMatch(/orders\(/);
    // `index` says what each call did to the schema index, so it is compared on its own: the first
    // call may build it, every later front end reuses the stored one (nothing indexed again).
    for (const doc of docs.slice(1))
      expect(doc.index).toMatchObject({ indexed: 0, reembedded: 0, unchanged: fromCli.catalogTables });
    const [cliDoc, httpDoc, mcpDoc] = docs.map(({ index: _index, ...rest }) => rest);
    expect(httpDoc).toEqual(cliDoc);
    expect(mcpDoc).toEqual(cliDoc);
  }, 180_000);
});
