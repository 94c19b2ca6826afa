/**
 * `sqlrecall mcp` as an MCP client meets it: the SDK's own Client over stdio spawning the real
 * binary (`node bin/sqlrecall.js mcp`) on the demo shop, the model played by the scripted server
 * whose SQL replies depend on what the prompt contains (so the tests prove what the model saw).
 * The embedded memory store is single-process, so the two users run as sequential processes on
 * the same store.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { BIN, ROOT, runSqlrecall } from './support/cli.js';
import { serverShop } from './support/fixtures.js';
import { createStoreHarness } from './support/memory-store.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { TEST_DATABASE_URL } from './support/server-db.js';
import { tempDir } from './support/temp-dir.js';

const INDIA = "customers.country = 'India'";
const QUESTION = 'Which customers do we have?';
const ANSWER = 'Here is the answer.';
const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

/** One running `sqlrecall mcp` process with a connected client. */
interface Session {
  client: Client;
  stderr: () => string;
  call: (name: string, args?: Record<string, unknown>) => Promise<CallToolResult>;
  close: () => Promise<void>;
}

/** The JSON document in a tool result's text. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
function doc(result: CallToolResult): Record<string, any> {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text);
}

describe('sqlrecall mcp (stdio, demo shop)', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;
  const prompts: string[] = [];

  beforeAll(async () => {
    const dir = tempDir('sqlrecall-mcp-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request) => {
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          const prompt = request.messages.map((m) => m.content).join('\n');
          prompts.push(prompt);
          return prompt.includes(INDIA)
            ? fence("SELECT name, country FROM customers WHERE country = 'India' ORDER BY id LIMIT 20")
            : fence('SELECT name, country FROM customers ORDER BY country LIMIT 500');
        }
        return ANSWER;
      },
    });
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: server.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
    };
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  async function open(
    user: string,
    extraArgs: string[] = [],
    extraEnv: Record<string, string> = {},
  ): Promise<Session> {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--user', user, ...extraArgs],
      env: { ...env, ...extraEnv },
      cwd: ROOT,
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (d) => {
      stderr += d;
    });
    const client = new Client({ name: 'sqlrecall-test', version: '1.0.0' });
    await client.connect(transport);
    return {
      client,
      stderr: () => stderr,
      call: async (name, args = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult,
      close: () => client.close(),
    };
  }

  it('lists the tools and the schema resources; stdout carries only the protocol', async () => {
    const s = await open('priya');
    try {
      const { tools } = await s.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual(
        [
          'ask',
          'audit_memory',
          'forget',
          'recall',
          'remember',
          'schema',
          'schema_context',
          'show_memory',
          'sql',
        ].sort(),
      );
      // No tool lets the client name the user.
      for (const tool of tools) expect(Object.keys(tool.inputSchema.properties ?? {})).not.toContain('user');

      const { resources } = await s.client.listResources();
      expect(resources.map((r) => r.uri)).toContain('schema://tables');
      expect(resources.map((r) => r.uri)).toContain('schema://tables/public.customers');
      const table = await s.client.readResource({ uri: 'schema://tables/public.customers' });
      const text = (table.contents[0] as { text: string }).text;
      expect(text).toMatch(/customers\(/);
      expect(text).toContain('country');
      expect(text).not.toMatch(/orders\(/);

      const orders = await s.call('schema', { table: 'orders' });
      expect(orders.isError).toBeFalsy();
      expect((orders.content[0] as { text: string }).text).toMatch(/orders\(/);
      const unknown = await s.call('schema', { table: 'no_such_table' });
      expect(unknown.isError).toBe(true);
      expect(doc(unknown).error.code).toBe('not_found');
      const context = doc(await s.call('schema_context', { question: 'orders per customer country' }));
      expect(context.tables.length).toBeGreaterThan(0);
      expect(context.schemaText).toMatch(/\(/);
      // Logs went to stderr (the client parsed every stdout line as protocol).
      expect(s.stderr()).toContain('serving user priya');
    } finally {
      await s.close();
    }
  }, 120_000);

  it('priya: ask, remember then ask applying the memory, hostile sql refused, a user argument refused', async () => {
    const s = await open('priya');
    try {
      const before = prompts.length;
      const asked = await s.call('ask', { question: QUESTION });
      expect(asked.isError, JSON.stringify(asked)).toBeFalsy();
      const first = doc(asked);
      expect(first).toMatchObject({
        question: QUESTION,
        sql: 'SELECT name, country FROM customers ORDER BY country LIMIT 500',
        columns: ['name', 'country'],
        truncated: false,
        answer: ANSWER,
        appliedMemories: [],
      });
      expect(first.rowCount).toBeGreaterThan(0);
      expect(first.rows.some((row: string[]) => row[1] !== 'India')).toBe(true);
      expect(prompts.length).toBe(before + 1);
      expect(prompts.at(-1)).not.toContain(INDIA);

      const remembered = await s.call('remember', {
        text: 'Only show me customers from India',
        sql: INDIA,
      });
      expect(remembered.isError, JSON.stringify(remembered)).toBeFalsy();
      const change = doc(remembered).changes[0];
      expect(change).toMatchObject({ action: 'ADD', kind: 'preference' });

      const again = doc(await s.call('ask', { question: QUESTION }));
      expect(prompts.at(-1)).toContain(INDIA); // the memory reached the SQL prompt
      expect(again.sql).toContain("country = 'India'");
      expect(again.rowCount).toBeGreaterThan(0);
      expect(again.rows.every((row: string[]) => row[1] === 'India')).toBe(true);
      expect(again.appliedMemories).toEqual([
        { id: change.id, kind: 'preference', text: 'Only show me customers from India' },
      ]);

      const recalled = doc(await s.call('recall'));
      expect(recalled.user).toBe('priya');
      expect(recalled.memories.map((m: { id: string }) => m.id)).toEqual([change.id]);

      for (const hostile of ['DROP TABLE customers', 'SELECT pg_sleep(30)', "COPY customers TO '/tmp/x'"]) {
        const refused = await s.call('sql', { sql: hostile });
        expect(refused.isError, hostile).toBe(true);
        expect(doc(refused).error.code, hostile).toBe('guard_refused');
        expect(doc(refused).error.message).toMatch(/^Refused: /);
        expect(JSON.stringify(refused)).not.toMatch(/\n\s+at /);
      }
      const count = doc(await s.call('sql', { sql: 'SELECT count(*) AS n FROM customers' }));
      expect(Number(count.rows[0][0])).toBeGreaterThan(0); // the table is still there

      // The user is the process's, never the client's.
      const spoofed = await s.call('recall', { user: 'rahul' });
      expect(spoofed.isError).toBe(true);
      expect(doc(spoofed).error).toMatchObject({ code: 'usage', message: expect.stringMatching(/user/) });
      expect(doc(spoofed).error.hint).toMatch(/serves one user \(priya\)/);
      const spoofedAsk = await s.call('ask', { question: QUESTION, user: 'rahul' });
      expect(spoofedAsk.isError).toBe(true);
      expect(doc(spoofedAsk).error.code).toBe('usage');
      const empty = await s.call('ask', { question: '   ' });
      expect(doc(empty).error).toMatchObject({ code: 'usage', message: expect.stringMatching(/question/) });

      // A database error is an MCP tool error with the product's code.
      const missing = await s.call('sql', { sql: 'SELECT * FROM no_such_table' });
      expect(missing.isError).toBe(true);
      expect(doc(missing).error.code).toBe('db_query');
    } finally {
      await s.close();
    }
  }, 240_000);

  it("rahul never sees priya's memories, cannot forget them, and results are byte-capped", async () => {
    const s = await open('rahul', ['--max-bytes', '2048']);
    let priyaMemory: string;
    try {
      expect(doc(await s.call('recall')).memories).toEqual([]);
      expect(doc(await s.call('recall', { query: 'customers from India' })).memories).toEqual([]);
      const asked = doc(await s.call('ask', { question: QUESTION }));
      expect(asked.appliedMemories).toEqual([]);
      expect(prompts.at(-1)).not.toContain(INDIA);

      const big = doc(
        await s.call('sql', { sql: "SELECT g, repeat('x', 50) AS pad FROM generate_series(1, 500) g" }),
      );
      expect(big).toMatchObject({ truncated: true, truncatedReason: 'max_bytes' });
      expect(big.rows.length).toBeGreaterThan(0);
      expect(big.rows.length).toBeLessThan(500);
      expect(big.rowCount).toBe(big.rows.length);
      expect(big.rows[0][0]).toBe(1);

      // While this server idles, the embedded stores are free: a CLI command in another process
      // runs at once instead of waiting for the lock.
      const list = await runSqlrecall(['memory', 'list', '--json', '--user', 'priya'], {
        env,
        timeoutMs: 90_000,
      });
      expect(list.code, list.stderr).toBe(0);
      expect(list.stderr).not.toMatch(/Waiting for another sqlrecall process/);
      const memories = JSON.parse(list.stdout).memories;
      expect(memories).toHaveLength(1);
      priyaMemory = memories[0].id;
    } finally {
      await s.close();
    }

    const r = await open('rahul');
    try {
      const forged = await r.call('forget', { target: priyaMemory });
      expect(forged.isError).toBe(true);
      expect(doc(forged).error.code).toBe('not_found');
    } finally {
      await r.close();
    }

    const q = await open('priya');
    try {
      expect(doc(await q.call('recall')).memories.map((m: { id: string }) => m.id)).toEqual([priyaMemory]);
      const forgot = await q.call('forget', { target: priyaMemory.slice(0, 8) });
      expect(forgot.isError, JSON.stringify(forgot)).toBeFalsy();
      expect(doc(forgot).deleted.id).toBe(priyaMemory);
      expect(doc(await q.call('recall')).memories).toEqual([]);
      const after = doc(await q.call('ask', { question: QUESTION }));
      expect(after.appliedMemories).toEqual([]);
      expect(prompts.at(-1)).not.toContain(INDIA);
    } finally {
      await q.close();
    }
  }, 300_000);

  // The server PostgreSQL of CI lacks pgvector: the shared memory store is PGlite + pgvector
  // served over the wire protocol (as in the memory store tests), reached by both processes.
  it.skipIf(!TEST_DATABASE_URL)(
    "server PostgreSQL: two live processes on one memory store; rahul never sees, applies or forgets priya's memory",
    async () => {
      const shop = await serverShop();
      const memoryStore = await createStoreHarness('server-style');
      const serverEnv = { DATABASE_URL: shop.url, MEMORY_DATABASE_URL: memoryStore.url! };
      try {
        const [priya, rahul] = await Promise.all([
          open('priya', [], serverEnv),
          open('rahul', [], serverEnv),
        ]);
        try {
          const added = await priya.call('remember', {
            text: 'Only show me customers from India',
            sql: INDIA,
          });
          expect(added.isError, JSON.stringify(added)).toBeFalsy();
          const id = doc(added).changes[0].id as string;

          expect(doc(await rahul.call('recall')).memories).toEqual([]);
          expect(doc(await rahul.call('recall', { query: 'customers from India' })).memories).toEqual([]);
          const rahulAsk = doc(await rahul.call('ask', { question: QUESTION }));
          expect(rahulAsk.appliedMemories).toEqual([]);
          expect(prompts.at(-1)).not.toContain(INDIA);
          const forged = await rahul.call('forget', { target: id });
          expect(doc(forged).error.code).toBe('not_found');

          const priyaAsk = doc(await priya.call('ask', { question: QUESTION }));
          expect(prompts.at(-1)).toContain(INDIA);
          expect(priyaAsk.appliedMemories.map((m: { id: string }) => m.id)).toEqual([id]);
          expect(priyaAsk.rows.every((row: string[]) => row[1] === 'India')).toBe(true);
          expect(doc(await priya.call('forget', { target: id })).deleted.id).toBe(id);
          expect(doc(await priya.call('recall')).memories).toEqual([]);
        } finally {
          await Promise.all([priya.close(), rahul.close()]);
        }
      } finally {
        await shop.close();
        await shop.db.drop();
        await memoryStore.dispose();
      }
    },
    240_000,
  );
});
