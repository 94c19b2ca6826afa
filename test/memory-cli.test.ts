/**
 * Memory across processes, as a user meets it: the real binary on the demo shop, one process per
 * step, the memory store under SQLRECALL_HOME, the model played by a scripted server whose SQL
 * replies depend on what the prompt contains (so the tests prove what the model was shown).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { BIN, ROOT, runSqlrecall } from './support/cli.js';
import { pgliteShop } from './support/fixtures.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './support/scripted/server.js';

const INDIA = "customers.country = 'India'";
const HIGH = 'orders.total_amount > 10000';
const SEED_QUESTION = 'Show me customers who have a high order value';
const ANSWER = 'Here is the answer.';

describe('memory across processes (demo shop)', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;
  const prompts: string[] = [];
  const state = { extractDelayMs: 0 };
  const lastPrompt = () => prompts[prompts.length - 1] ?? '';

  function sqlFor(prompt: string): string {
    const question = /^Question: (.*)$/m.exec(prompt)?.[1] ?? '';
    const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;
    if (question === SEED_QUESTION) {
      const a = prompt.includes(INDIA);
      const b = prompt.includes(HIGH);
      if (a && b)
        return fence(
          `SELECT DISTINCT c.name, c.country FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = 'India' AND o.total_amount > 10000 ORDER BY c.name LIMIT 20`,
        );
      if (!a && !b)
        return fence(
          'SELECT DISTINCT c.name, c.country FROM customers c JOIN orders o ON o.customer_id = c.id ORDER BY c.name LIMIT 20',
        );
      return 'SELECT broken'; // one memory without the other: the test would fail loudly
    }
    if (/wholesale/.test(question) && /Previous SQL: SELECT .*country = 'India'/.test(prompt))
      return fence("SELECT count(*) AS n FROM customers WHERE country = 'India' AND segment = 'wholesale'");
    if (/from India/.test(question))
      return fence("SELECT name FROM customers WHERE country = 'India' ORDER BY name LIMIT 10");
    return fence('SELECT count(*) AS n FROM orders');
  }

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-memcli-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      models: [
        'qwen2.5-coder:7b',
        'all-minilm',
        { name: 'nomic-embed-text', kind: 'embedding', embeddingLength: 768 },
      ],
      chat: (request): ScriptedReply => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') {
          const text = extractionFor(messageOf(request.lastUserMessage));
          return /delivered/.test(request.lastUserMessage) && state.extractDelayMs > 0
            ? { text, delayMs: state.extractDelayMs }
            : text;
        }
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          prompts.push(prompt);
          return sqlFor(prompt);
        }
        return ANSWER;
      },
    });
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: server.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
    };
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  const cli = (args: string[], extra: Record<string, string> = {}, input?: string) =>
    runSqlrecall(args, { env: { ...env, ...extra }, input, timeoutMs: 90_000 });

  it('the seed scenario: priya teaches twice, asks in a new process; rahul sees none of it', async () => {
    const before = prompts.length;
    const first = await cli(['ask', '--json', '--user', 'priya', 'Always show me customers from India']);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout)).toMatchObject({
      kind: 'instruction',
      sql: null,
      answer: expect.stringMatching(/^Remembered \[[0-9a-f]{8}\]: Always show me customers from India/),
      remembered: [{ action: 'ADD', kind: 'preference' }],
    });
    const second = await cli([
      'ask',
      '--json',
      '--user',
      'priya',
      'High value order means total amount over 10000',
    ]);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({
      kind: 'instruction',
      sql: null,
      remembered: [{ action: 'ADD', kind: 'term' }],
    });
    expect(prompts.length).toBe(before); // no SQL was generated, let alone run

    const list = JSON.parse((await cli(['memory', 'list', '--json', '--user', 'priya'])).stdout);
    expect(list.memories.map((m: { kind: string; sql: string }) => `${m.kind}: ${m.sql}`).sort()).toEqual([
      `preference: ${INDIA}`,
      `term: ${HIGH}`,
    ]);

    const asked = await cli(['ask', '--json', '--user', 'priya', SEED_QUESTION]);
    expect(asked.code, asked.stderr).toBe(0);
    const doc = JSON.parse(asked.stdout);
    expect(doc.sql).toContain("c.country = 'India'");
    expect(doc.sql).toContain('o.total_amount > 10000');
    expect(doc.rowCount).toBeGreaterThan(0);
    expect(doc.rows.every((row: string[]) => row[1] === 'India')).toBe(true);
    expect(doc.appliedMemories.map((m: { text: string }) => m.text).sort()).toEqual([
      'Always show me customers from India',
      'High value order means total amount over 10000',
    ]);

    const rahul = await cli(['ask', '--json', '--user', 'rahul', SEED_QUESTION]);
    expect(rahul.code, rahul.stderr).toBe(0);
    expect(lastPrompt()).toContain(`Question: ${SEED_QUESTION}`);
    for (const memory of [INDIA, HIGH, 'Always show me', 'High value order', '<memories>\n'])
      expect(lastPrompt()).not.toContain(memory);
    expect(JSON.parse(rahul.stdout).appliedMemories).toEqual([]);
  }, 180_000);

  it('a follow-up in a new process sees the previous SQL; chat --resume continues the last conversation', async () => {
    const first = await cli([
      'ask',
      '--json',
      '--user',
      'omar',
      '--conversation',
      'omar-1',
      'which customers are from India?',
    ]);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).conversationId).toBe('omar-1');
    const follow = await cli([
      'ask',
      '--json',
      '--user',
      'omar',
      '--conversation',
      'omar-1',
      'how many of those were wholesale?',
    ]);
    expect(follow.code, follow.stderr).toBe(0);
    expect(lastPrompt()).toContain("Previous SQL: SELECT name FROM customers WHERE country = 'India'");
    expect(JSON.parse(follow.stdout).sql).toContain("segment = 'wholesale'");

    const chat = await cli(
      ['chat', '--resume', '--user', 'omar'],
      {},
      'how many of those were wholesale?\nexit\n',
    );
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stderr).toMatch(/Continuing/);
    expect(lastPrompt()).toContain('Previous question: how many of those were wholesale?');
  }, 180_000);

  it('two concurrent asks on one embedded store: both succeed (one owns the store, the other uses its socket)', async () => {
    // Each process questions its own database (an embedded database must not be opened twice).
    const shop = await pgliteShop();
    const [a, b] = await Promise.all([
      cli(['ask', '--json', '--user', 'zed', 'how many orders?']),
      cli(['ask', '--json', '--user', 'zed', '--db', shop.url, 'how many orders?']),
    ]).finally(() => shop.close());
    expect(a.code, a.stderr).toBe(0);
    expect(b.code, b.stderr).toBe(0);
    // Issue 15: no more waiting for the other process to release the store.
    expect(`${a.stderr}${b.stderr}`).not.toMatch(/Waiting for another sqlrecall process/);
  }, 180_000);

  it('SIGKILL between the answer and the memory write: the next start applies the pending write', async () => {
    const setup = await cli(['ask', '--user', 'sam', 'Always show me customers from India']);
    expect(setup.code, setup.stderr).toBe(0);
    state.extractDelayMs = 60_000;
    const killed = await new Promise<{ stdout: string; signal: NodeJS.Signals | null }>((resolve, reject) => {
      const child = spawn(
        process.execPath,
        [BIN, 'ask', '--user', 'sam', 'From now on only delivered orders — how many orders are there?'],
        {
          cwd: ROOT,
          env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
        },
      );
      let stdout = '';
      const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
      const poll = setInterval(() => {
        const waiting = server
          .chatRequests()
          .some((r) => r.purpose === 'memory-extract' && /only delivered orders/.test(r.lastUserMessage));
        if (stdout.includes(ANSWER) && waiting) child.kill('SIGKILL');
      }, 50);
      child.stdout.on('data', (d) => {
        stdout += d;
      });
      child.on('error', reject);
      child.on('close', (_code, signal) => {
        clearTimeout(timer);
        clearInterval(poll);
        resolve({ stdout, signal });
      });
    });
    state.extractDelayMs = 0;
    expect(killed.signal).toBe('SIGKILL');
    expect(killed.stdout).toContain(ANSWER); // the answer was shown…
    expect(killed.stdout).not.toContain('Remembered'); // …the memory write was not
    // The next start applies the pending write (any memory command would too; ask is checked here).
    const next = await cli(['ask', '--json', '--user', 'sam', 'how many orders?']);
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/Applied 1 memory write\(s\) left pending/);
    expect(lastPrompt()).toContain("orders.status = 'delivered'");
    expect(lastPrompt()).toContain(INDIA); // the memory committed before the crash is still there
    const after = JSON.parse((await cli(['memory', 'list', '--json', '--user', 'sam'])).stdout);
    expect(after.memories.map((m: { text: string }) => m.text)).toHaveLength(2);
  }, 180_000);

  it('another embedding dimension is refused (exit 2) until memory reembed migrates', async () => {
    const other = { SQLRECALL_EMBED_MODEL: 'nomic-embed-text' };
    const refused = await cli(['ask', '--user', 'priya', SEED_QUESTION], other);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/all-minilm \(384 dimensions\).*nomic-embed-text \(768 dimensions\)/);
    expect(refused.stderr).toMatch(/sqlrecall memory reembed/);
    expect(refused.stderr).not.toMatch(/\n\s+at /);
    const reembed = await cli(['memory', 'reembed', '--json'], other);
    expect(reembed.code, reembed.stderr).toBe(0);
    expect(JSON.parse(reembed.stdout)).toMatchObject({
      from: { model: 'all-minilm', dimensions: 384 },
      to: { model: 'nomic-embed-text', dimensions: 768 },
    });
    const asked = await cli(['ask', '--json', '--user', 'priya', SEED_QUESTION], other);
    expect(asked.code, asked.stderr).toBe(0);
    expect(JSON.parse(asked.stdout).appliedMemories).toHaveLength(2);
  }, 180_000);
});
