/**
 * Applied and recalled memories and provenance through MCP, as a client meets them: the SDK's own
 * Client over stdio spawning the real binary on the demo shop, the model played by a scripted
 * server whose SQL follows the India preference only when the prompt shows it. The two users run
 * as sequential processes on the same embedded store.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { BIN, ROOT } from './support/cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const WORDS = 'Always show me customers from India';
const QUESTION = 'Which customers do we have?';
const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

// biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
function doc(result: CallToolResult): Record<string, any> {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text);
}

describe('applied, recalled and show_memory over MCP (stdio, demo shop)', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-mcp-surfaces-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request) => {
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          const prompt = request.messages.map((m) => m.content).join('\n');
          return /customers from India|country = 'India'/.test(prompt)
            ? fence("SELECT name, country FROM customers WHERE country = 'India' ORDER BY id LIMIT 20")
            : fence('SELECT name, country FROM customers ORDER BY country LIMIT 20');
        }
        return 'Here is the answer.';
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

  async function open(user: string) {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, 'mcp', '--user', user],
      env,
      cwd: ROOT,
      stderr: 'pipe',
    });
    const client = new Client({ name: 'sqlrecall-test', version: '1.0.0' });
    await client.connect(transport);
    return {
      call: async (name: string, args: Record<string, unknown> = {}) =>
        (await client.callTool({ name, arguments: args }, undefined, { timeout: 90_000 })) as CallToolResult,
      close: () => client.close(),
    };
  }

  it('ask lists a memory without SQL as recalled and one with SQL as applied; show_memory gives its origin', async () => {
    const priya = await open('priya');
    let handId: string;
    try {
      const remembered = doc(await priya.call('remember', { text: WORDS }));
      handId = remembered.changes[0].id;
      const first = doc(await priya.call('ask', { question: QUESTION }));
      expect(first.sql).toContain("country = 'India'"); // the model was shown the words and followed them
      expect(first.appliedMemories).toEqual([]);
      expect(first.recalledMemories).toEqual([{ id: handId, kind: 'preference', text: WORDS }]);

      const withSql = doc(
        await priya.call('remember', {
          text: 'Only customers from India',
          sql: "customers.country = 'India'",
        }),
      );
      const sqlId = withSql.changes[0].id as string;
      const second = doc(await priya.call('ask', { question: QUESTION }));
      expect(second.appliedMemories).toEqual([
        { id: sqlId, kind: 'preference', text: 'Only customers from India' },
      ]);
      expect(second.recalledMemories.map((m: { id: string }) => m.id)).toEqual([handId]);

      const shown = await priya.call('show_memory', { id: sqlId.slice(0, 8) });
      expect(shown.isError, JSON.stringify(shown)).toBeFalsy();
      const p = doc(shown);
      expect(p.memory).toMatchObject({ id: sqlId, text: 'Only customers from India' });
      expect(p.origin).toMatchObject({ how: 'hand', conversation: null });
      expect(p.origin.summary).toMatch(/^added by hand on /);
      expect(p.lastAppliedAt).toEqual(expect.any(String));
      expect(doc(await priya.call('show_memory', { id: handId })).lastAppliedAt).toBeNull();
    } finally {
      await priya.close();
    }

    // Another user: priya's id is not found, and the error never shows her text.
    const rahul = await open('rahul');
    try {
      for (const id of [handId, handId.slice(0, 8)]) {
        const other = await rahul.call('show_memory', { id });
        expect(other.isError).toBe(true);
        expect(doc(other).error.code).toBe('not_found');
        expect(JSON.stringify(other)).not.toContain('India');
      }
      const asked = doc(await rahul.call('ask', { question: QUESTION }));
      expect(asked.appliedMemories).toEqual([]);
      expect(asked.recalledMemories).toEqual([]);
    } finally {
      await rahul.close();
    }
  }, 240_000);
});
