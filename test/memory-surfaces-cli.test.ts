/**
 * Applied and recalled memories as a user meets them in the CLI: the real binary on the demo shop,
 * one process per step, the model played by a scripted server whose SQL depends on what the prompt
 * contains (so the tests prove what the model was shown). A memory taught with `memory add` reaches
 * the next `ask` in another process and is listed there: as applied when its predicate is in the
 * SQL, as recalled when there is nothing to verify (no SQL). `memory list` shows when each memory
 * was last applied; `memory show` says where a memory came from.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { runSqlrecall } from './support/cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './support/scripted/server.js';

const INDIA_TEXT = 'Always show me customers from India';
const LOYAL_TEXT = 'Loyal customer means a customer who came back after a complaint';
const QUESTION = 'Which customers do we have?';
const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

interface Listed {
  id: string;
  kind: string;
  text: string;
}

describe('applied and recalled memories in the CLI (demo shop, one process per step)', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;
  const prompts: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-surfaces-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      models: ['qwen2.5-coder:7b', 'all-minilm'],
      chat: (request): ScriptedReply => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          prompts.push(prompt);
          // The model follows the preference only when it was shown (in words or as SQL).
          return prompt.includes('customers from India')
            ? fence("SELECT name, country FROM customers WHERE country = 'India' ORDER BY name LIMIT 20")
            : fence('SELECT name, country FROM customers ORDER BY name LIMIT 20');
        }
        return 'Here is the answer.';
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

  const cli = async (args: string[]) => {
    const run = await runSqlrecall(args, { env, timeoutMs: 90_000 });
    expect(run.code, run.stderr).toBe(0);
    return run.stdout;
  };

  it('a memory added by hand without SQL is listed as recalled by the next ask in another process', async () => {
    const added = JSON.parse(await cli(['memory', 'add', '--json', '--user', 'priya', INDIA_TEXT]));
    const indiaId = added.changes[0].id as string;
    const loyal = JSON.parse(
      await cli(['memory', 'add', '--json', '--user', 'priya', '--kind', 'term', LOYAL_TEXT]),
    );
    const loyalId = loyal.changes[0].id as string;
    const stored = JSON.parse(await cli(['memory', 'list', '--json', '--user', 'priya'])).memories as {
      id: string;
      sql: string | null;
    }[];
    // Nothing to verify in the SQL: neither memory has a compiled condition.
    expect(stored.map((m) => m.sql)).toEqual([null, null]);

    const doc = JSON.parse(await cli(['ask', '--json', '--user', 'priya', QUESTION]));
    expect(prompts.at(-1)).toContain(INDIA_TEXT); // it reached the prompt…
    expect(doc.sql).toContain("country = 'India'"); // …and the model followed it
    expect(doc.appliedMemories).toEqual([]);
    const recalled = doc.recalledMemories as Listed[];
    expect(recalled).toContainEqual({ id: indiaId, kind: 'preference', text: INDIA_TEXT });
    // The definition is recalled when the question names the term, never reported as applied.
    const loyalQuestion = JSON.parse(
      await cli(['ask', '--json', '--user', 'priya', 'Which customers are loyal customers?']),
    );
    expect((loyalQuestion.recalledMemories as Listed[]).map((m) => m.id)).toContain(loyalId);
    expect((loyalQuestion.appliedMemories as Listed[]).map((m) => m.id)).not.toContain(loyalId);

    // Human output: a "Recalled:" line with the short id that `memory show` and `--without` take.
    const human = await cli(['ask', '--user', 'priya', QUESTION]);
    expect(human).toContain(`Recalled: ${INDIA_TEXT} [${indiaId.slice(0, 8)}]`);
    expect(human).not.toMatch(/^Applied:/m);

    // Another user's question shows nothing of priya's.
    const rahul = JSON.parse(await cli(['ask', '--json', '--user', 'rahul', QUESTION]));
    expect(rahul.appliedMemories).toEqual([]);
    expect(rahul.recalledMemories).toEqual([]);
  }, 240_000);

  it('a memory with SQL is listed as applied, and memory list shows when it was last applied', async () => {
    const added = JSON.parse(
      await cli([
        'memory',
        'add',
        '--json',
        '--user',
        'meena',
        '--sql',
        "customers.country = 'India'",
        'Only customers from India',
      ]),
    );
    const id = added.changes[0].id as string;
    const before = await cli(['memory', 'list', '--user', 'meena']);
    expect(before).toContain('never applied');

    const doc = JSON.parse(await cli(['ask', '--json', '--user', 'meena', QUESTION]));
    expect(doc.appliedMemories).toEqual([{ id, kind: 'preference', text: 'Only customers from India' }]);
    expect(doc.recalledMemories).toEqual([]);
    const human = await cli(['ask', '--user', 'meena', QUESTION]);
    expect(human).toContain(`Applied: Only customers from India [${id.slice(0, 8)}]`);
    expect(human).not.toMatch(/^Recalled:/m);

    const listed = JSON.parse(await cli(['memory', 'list', '--json', '--user', 'meena'])).memories as {
      id: string;
      lastAppliedAt: string | null;
    }[];
    const applied = listed.find((m) => m.id === id);
    expect(applied?.lastAppliedAt).toEqual(expect.any(String));
    expect(Date.now() - Date.parse(applied!.lastAppliedAt!)).toBeLessThan(5 * 60_000);
    expect(await cli(['memory', 'list', '--user', 'meena'])).toMatch(/last applied \d{4}-\d{2}-\d{2}/);

    // memory show: where it came from and when it was last applied.
    const shown = await cli(['memory', 'show', '--user', 'meena', id.slice(0, 8)]);
    expect(shown).toContain(`[${id.slice(0, 8)}] preference: Only customers from India`);
    expect(shown).toMatch(/^ {2}From: added by hand on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/m);
    expect(shown).toMatch(/^ {2}Last applied: \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/m);
    expect(shown).toMatch(/^ {4}.* ADD {7}Only customers from India/m);
    // Another user cannot read it, by full id or prefix: not found, and the text is never shown.
    for (const given of [id, id.slice(0, 8)]) {
      const other = await runSqlrecall(['memory', 'show', '--user', 'priya', given], {
        env,
        timeoutMs: 90_000,
      });
      expect(other.code).not.toBe(0);
      expect(other.stderr).toMatch(/No memory with id/);
      expect(`${other.stdout}${other.stderr}`).not.toContain('Only customers from India');
    }
  }, 240_000);
});
