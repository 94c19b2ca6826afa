/**
 * Replies of real local models, through `ask` on the demo shop over the real `openai` client:
 * reasoning is kept apart (never SQL, never the answer), a reasoning-only reply gets one round
 * asking for the SQL only and then a clear error; SQL is read from a text `<tool_call>` wrapper and
 * from structured `tool_calls` deltas; a bare reply keeps every character (MySQL backticks reach the
 * dialect repair intact); a prose refusal is shown as the model's reason (exit 5).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../src/demo/load.js';
import { runCliInProcess } from './support/in-process-cli.js';
import type { ScriptedChatRequest, ScriptedReply } from './support/scripted/server.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { type OpenAiFamily, sseReply } from './support/scripted/transcripts.js';
import { tempDir } from './support/temp-dir.js';

const COUNT = 'SELECT count(*) AS customer_count FROM customers';

describe('model replies through ask', () => {
  let server: ScriptedOllama;
  let dir: string;
  let sqlReplies: ScriptedReply[] = [];
  const sqlRequests: ScriptedChatRequest[] = [];

  beforeAll(async () => {
    dir = tempDir('sqlrecall-models-replies-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request) => {
        if (request.purpose !== 'sql') return 'That is the number of customers.';
        sqlRequests.push(request);
        return sqlReplies.shift() ?? 'no reply programmed';
      },
    });
  }, 180_000);
  afterAll(() => server?.close());
  beforeEach(() => {
    sqlRequests.length = 0;
  });

  let homes = 0;
  const ask = (json = true) => {
    homes += 1;
    return runCliInProcess(
      ['ask', '--no-memory', ...(json ? ['--json'] : []), 'how many customers are there?'],
      {
        env: {
          SQLRECALL_HOME: join(dir, `home-${homes}`),
          DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
          SQLRECALL_PROVIDER: 'openai',
          SQLRECALL_BASE_URL: `${server.url}/v1`,
        },
      },
    );
  };

  it.each<OpenAiFamily>(['llama.cpp', 'vllm', 'lmstudio', 'ollama-v1'])(
    '%s: SQL in the reasoning is never run; the content is',
    async (family) => {
      sqlReplies = [
        {
          raw: sseReply(family, {
            reasoning: ['Maybe ', 'SELECT * FROM order_items? No.'],
            content: [COUNT],
          }),
        },
      ];
      const run = await ask();
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const out = JSON.parse(run.stdout);
      expect(out.sql).toBe(COUNT);
      expect(out.answer).not.toMatch(/Maybe|order_items/);
    },
  );

  it('a reasoning-only reply gets one round asking for the SQL only', async () => {
    sqlReplies = [
      { raw: sseReply('llama.cpp', { reasoning: ['I think ', COUNT] }) },
      { raw: sseReply('llama.cpp', { content: [COUNT] }) },
    ];
    const run = await ask();
    expect(run.code, run.stdout).toBe(0);
    expect(JSON.parse(run.stdout).sql).toBe(COUNT);
    expect(sqlRequests).toHaveLength(2);
    expect(sqlRequests[1]!.lastUserMessage).toMatch(/SQL statement only/);
  });

  it('reasoning-only twice: exit 5 saying the model answered only in its reasoning', async () => {
    sqlReplies = [
      { raw: sseReply('vllm', { reasoning: ['thinking about ', COUNT] }) },
      { raw: sseReply('vllm', { reasoning: ['still thinking'] }) },
    ];
    const run = await ask(false);
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/answered only in its reasoning/);
    expect(run.stdout.trim()).toBe('');
  });

  it('reads SQL from a <tool_call> text wrapper', async () => {
    sqlReplies = [`<tool_call>\n{"name": "run_sql", "arguments": {"query": "${COUNT}"}}\n</tool_call>`];
    const run = await ask();
    expect(run.code, run.stdout).toBe(0);
    expect(JSON.parse(run.stdout).sql).toBe(COUNT);
  });

  it('reads SQL from structured tool_calls deltas', async () => {
    const args = JSON.stringify({ sql: COUNT });
    sqlReplies = [
      {
        raw: sseReply('vllm', {
          toolCalls: [
            { index: 0, id: 'call_1', type: 'function', function: { name: 'run_sql', arguments: '' } },
            { index: 0, function: { arguments: args.slice(0, 20) } },
            { index: 0, function: { arguments: args.slice(20) } },
          ],
          finish: 'tool_calls',
        }),
      },
    ];
    const run = await ask();
    expect(run.code, run.stdout).toBe(0);
    expect(JSON.parse(run.stdout).sql).toBe(COUNT);
  });

  it('keeps MySQL backticks intact for the dialect repair', async () => {
    const mysql = 'SELECT `country`, count(*) FROM customers GROUP BY `country`';
    sqlReplies = [mysql, 'SELECT country, count(*) FROM customers GROUP BY country'];
    const run = await ask();
    expect(run.code, run.stdout).toBe(0);
    expect(sqlRequests).toHaveLength(2);
    const repair = sqlRequests[1]!.messages.find((m) => m.role === 'assistant')!;
    expect(repair.content).toContain(mysql);
  });

  it('chat --show-thinking shows the reasoning on stderr, never in the answer; without it, not at all', async () => {
    const env = {
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
      SQLRECALL_PROVIDER: 'openai',
      SQLRECALL_BASE_URL: `${server.url}/v1`,
      SQLRECALL_MEMORY: 'off',
    };
    const thought = {
      raw: sseReply('llama.cpp', { reasoning: ['Counting rows of customers. '], content: [COUNT] }),
    };
    sqlReplies = [thought];
    const shown = await runCliInProcess(['chat', '--show-thinking'], {
      env: { ...env, SQLRECALL_HOME: join(dir, 'chat-shown') },
      input: 'how many customers are there?\nexit\n',
    });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toContain('Counting rows of customers.');
    expect(shown.stdout).not.toContain('Counting rows of customers.');
    sqlReplies = [thought];
    const hidden = await runCliInProcess(['chat'], {
      env: { ...env, SQLRECALL_HOME: join(dir, 'chat-hidden') },
      input: 'how many customers are there?\nexit\n',
    });
    expect(hidden.code, hidden.stderr).toBe(0);
    expect(hidden.stdout + hidden.stderr).not.toContain('Counting rows of customers.');
    expect(sqlRequests).toHaveLength(2);
  });

  it("a prose refusal is shown as the model's reason, exit 5", async () => {
    sqlReplies = ['I am sorry, but I cannot help with listing passwords of users.'];
    const run = await ask(false);
    expect(run.code).toBe(5);
    expect(run.stderr).toContain('I cannot help with listing passwords of users');
  });
});
