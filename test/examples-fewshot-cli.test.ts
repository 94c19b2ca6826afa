/**
 * Few-shot through the CLI and the real memory store (issue 19 point 3): with the model server up,
 * the asking user's saved example for the question goes into the SQL prompt (found by the store's
 * embedding `search`, scoped to the user), marked as the user's confirmed example. Hostile case:
 * another user saved an example for the exact same question — it never appears.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER, USER_EXAMPLE_LABEL } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const ALICE_SQL = "SELECT name, city FROM customers WHERE country = 'India' ORDER BY city";
const MALLORY_SQL = "SELECT email FROM customers WHERE country = 'India' /* mallory */";

describe('few-shot examples in the SQL prompt (CLI, memory store)', () => {
  let dir: string;
  let env: Record<string, string>;
  let server: ScriptedOllama;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-fewshot-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request) =>
        request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)
          ? `\`\`\`sql\n${ALICE_SQL}\n\`\`\``
          : 'Customers in India.',
    });
    env = {
      SQLRECALL_HOME: join(dir, 'home'),
      OLLAMA_HOST: server.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
    };
    for (const [user, sql] of [
      ['alice', ALICE_SQL],
      ['mallory', MALLORY_SQL],
    ] as const) {
      const added = await runCliInProcess(
        ['memory', 'add', '--user', user, '--kind', 'example', '--sql', sql, 'customers from India by city'],
        { env },
      );
      expect(added.code, added.stderr).toBe(0);
    }
  }, 180_000);
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const sqlPrompts = () =>
    server
      .chatRequests()
      .filter((r) => r.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
      .map((r) => r.messages.map((m) => m.content).join('\n'));

  it("the user's own example appears; another user's for the same question never does", async () => {
    server.requests.length = 0;
    const run = await runCliInProcess(['ask', '--json', '--user', 'alice', 'customers from India by city'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    const prompts = sqlPrompts();
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) {
      expect(prompt).toContain(USER_EXAMPLE_LABEL);
      expect(prompt).toContain(ALICE_SQL);
      expect(prompt).not.toContain('mallory');
      expect(prompt).not.toContain('SELECT email');
    }
  }, 60_000);

  it('a user without examples gets no examples block', async () => {
    server.requests.length = 0;
    const run = await runCliInProcess(['ask', '--json', '--user', 'carol', 'customers from India by city'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    for (const prompt of sqlPrompts()) expect(prompt).not.toContain('<examples>');
  }, 60_000);
});
