/**
 * `sqlrecall memory …` in process (same code path as the binary): each subcommand on one scope,
 * model-free additions, id prefixes, export/import between users, team scope, hostile ids.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { type Fixture, pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

describe('sqlrecall memory', () => {
  let server: ScriptedOllama;
  let fixture: Fixture;
  let env: Record<string, string>;
  let dir: string;
  const prompts: string[] = [];

  beforeAll(async () => {
    fixture = await pgliteShop();
    dir = tempDir('sqlrecall-memcmd-');
    server = await startScriptedOllama({
      chat: (request) => {
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'SUPERSEDE', id: 1 });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          prompts.push(prompt);
          // A model that obeys its memories: every remembered customer predicate goes into the WHERE clause.
          const predicates = [...prompt.matchAll(/^ {3}SQL: (customers\..*)$/gm)].map((m) => m[1]);
          const where = predicates.length > 0 ? ` WHERE ${predicates.join(' AND ')}` : '';
          return `\`\`\`sql\nSELECT name FROM customers${where} ORDER BY name\n\`\`\``;
        }
        return 'Asha and Dev.';
      },
    });
    env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: server.url, DATABASE_URL: fixture.url };
  });
  afterAll(async () => {
    await server?.close();
    await fixture?.close();
  });

  const run = (...args: string[]) => runCliInProcess(args, { env });
  const json = async (...args: string[]) => {
    const result = await run(...args, '--json');
    expect(result.code, result.stderr).toBe(0);
    return JSON.parse(result.stdout);
  };

  it('add stores without the model (embedding only), checks SQL against the schema, dedups', async () => {
    server.reset();
    const added = await json(
      'memory',
      'add',
      '--user',
      'priya',
      '--kind',
      'preference',
      '--sql',
      "customers.country = 'India'",
      'only customers from India',
    );
    expect(added.changes).toMatchObject([
      { action: 'ADD', kind: 'preference', text: 'only customers from India' },
    ]);
    expect(server.chatRequests()).toHaveLength(0);
    expect(server.requests.some((r) => r.endpoint === 'embed')).toBe(true);
    const again = await run('memory', 'add', '--user', 'priya', 'Only customers from India');
    expect(again.stdout).toMatch(/Already remembered/);
    const bad = await run(
      'memory',
      'add',
      '--user',
      'priya',
      '--kind',
      'term',
      '--sql',
      'customers.vip = true',
      'VIP means a very important customer',
    );
    // A condition the user wrote is checked, not silently dropped: exit 2, nothing stored.
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/customers\.vip does not exist.*Nothing was stored/);
    const misspelt = await run(
      'memory',
      'add',
      '--user',
      'priya',
      '--sql',
      "customers.countri = 'India'",
      'only Indian customers',
    );
    expect(misspelt.code).toBe(2);
    expect(misspelt.stderr).toMatch(/did you mean customers\.country\?/);
    // Without --sql the model is asked to write it; this one cannot, so it is kept as a definition.
    const definition = await run(
      'memory',
      'add',
      '--user',
      'priya',
      '--kind',
      'term',
      'VIP means a very important customer',
    );
    expect(definition.code, definition.stderr).toBe(0);
    expect(definition.stderr).toMatch(/definition without SQL/);
    const list = await json('memory', 'list', '--user', 'priya');
    expect(list.memories.map((m: { text: string; sql: string | null }) => [m.text, m.sql])).toEqual(
      expect.arrayContaining([
        ['only customers from India', "customers.country = 'India'"],
        ['VIP means a very important customer', null],
      ]),
    );
    expect(list.memories.map((m: { text: string }) => m.text)).not.toContain('only Indian customers');
  });

  it('ask lists the applied memories with the short ids --without takes', async () => {
    const list = await json('memory', 'list', '--user', 'priya', '--kind', 'preference');
    const id: string = list.memories[0].id;
    const asked = await run('ask', '--user', 'priya', 'which customers?');
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toContain(`Applied: only customers from India [${id.slice(0, 8)}]`);
    const without = await json('ask', '--user', 'priya', '--without', id.slice(0, 8), 'which customers?');
    expect(without.appliedMemories).toEqual([]);
    expect(prompts[prompts.length - 1]).not.toContain("customers.country = 'India'");
  });

  it('search, edit (by id prefix), delete, restore and history', async () => {
    const found = await json('memory', 'search', '--user', 'priya', 'customers from India');
    expect(found.results[0]).toMatchObject({
      text: 'only customers from India',
      similarity: expect.any(Number),
    });
    const id: string = found.results[0].id;
    const edited = await json(
      'memory',
      'edit',
      '--user',
      'priya',
      id.slice(0, 6),
      'only customers from India or Nepal',
      '--sql',
      "customers.country IN ('India', 'Nepal')",
    );
    expect(edited.memory).toMatchObject({
      id,
      text: 'only customers from India or Nepal',
      sql: "customers.country IN ('India', 'Nepal')",
    });
    await json('memory', 'delete', '--user', 'priya', id.slice(0, 8));
    expect(
      (await json('memory', 'list', '--user', 'priya')).memories.map((m: { id: string }) => m.id),
    ).not.toContain(id);
    const all = await json('memory', 'list', '--user', 'priya', '--all');
    expect(all.memories.find((m: { id: string }) => m.id === id)?.status).toBe('deleted');
    await json('memory', 'restore', '--user', 'priya', id);
    const history = await json('memory', 'history', '--user', 'priya', id.slice(0, 8));
    expect(history.history.map((h: { action: string }) => h.action)).toEqual([
      'ADD',
      'NOOP', // the duplicate add of the first test
      'UPDATE',
      'DELETE',
      'RESTORE',
    ]);
    expect((await run('memory', 'delete', '--user', 'rahul', id)).code).toBe(2); // not rahul's: not found
    expect((await run('memory', 'history', '--user', 'rahul', id)).code).toBe(2);
  });

  it('export and import between users; deleting all of one user never touches another', async () => {
    const file = join(dir, 'priya.json');
    const exported = await run('memory', 'export', '--user', 'priya', '--out', file);
    expect(exported.code, exported.stderr).toBe(0);
    // `*` is no wildcard: it is not a user name at all (usage error), so it reaches nobody's memories.
    const wildcard = await run('memory', 'delete', '--all', '--user', '*');
    expect(wildcard.code).toBe(2);
    expect(wildcard.stderr).toMatch(/--user is invalid/);
    const imported = await json('memory', 'import', '--user', 'asha', file);
    expect(imported.imported).toBeGreaterThanOrEqual(2);
    const asha = await json('memory', 'list', '--user', 'asha');
    expect(asha.memories.map((m: { text: string }) => m.text)).toContain(
      'only customers from India or Nepal',
    );
    const purged = await json('memory', 'delete', '--all', '--user', 'asha');
    expect(purged.deleted).toBe(asha.memories.length);
    expect((await json('memory', 'list', '--user', 'asha')).memories).toEqual([]);
    expect((await json('memory', 'list', '--user', 'priya')).memories.length).toBe(asha.memories.length);
    writeFileSync(join(dir, 'bad.json'), '{"format": "nope"}');
    expect((await run('memory', 'import', '--user', 'x', join(dir, 'bad.json'))).code).toBe(2);
  });

  it('team scope is separate from the user scope', async () => {
    await json('memory', 'add', '--team', 'sales', '--kind', 'term', 'TPV means total paid value');
    const team = await json('memory', 'list', '--team', 'sales');
    expect(team.scope).toEqual({ team: 'sales' });
    expect(team.memories.map((m: { text: string }) => m.text)).toEqual(['TPV means total paid value']);
    const user = await json('memory', 'list', '--user', 'sales');
    expect(user.memories).toEqual([]);
  });

  it('off and on', async () => {
    expect(await json('memory', 'off', '--user', 'priya')).toMatchObject({ enabled: false });
    const off = await run('memory', 'list', '--user', 'priya');
    expect(off.stdout).toMatch(/Memory is off for user priya/);
    const asked = await json('ask', '--user', 'priya', 'which customers?');
    expect(asked.appliedMemories).toEqual([]);
    expect(prompts[prompts.length - 1]).not.toMatch(/^<memories>$/m);
    expect(await json('memory', 'on', '--user', 'priya')).toMatchObject({ enabled: true });
    expect((await json('ask', '--user', 'priya', 'which customers?')).appliedMemories).toHaveLength(1);
  });

  it('contradiction through chat: "show all statuses again" supersedes "only delivered orders"', async () => {
    const chat = await runCliInProcess(['chat', '--user', 'dora'], {
      env,
      input: 'only delivered orders\nshow all statuses again\n/memory\nexit\n',
    });
    expect(chat.code, chat.stderr).toBe(0);
    expect(chat.stdout).toMatch(/Remembered \[[0-9a-f]{8}\]: only delivered orders/);
    // Issue 12: a supersession names the memory it replaced.
    expect(chat.stdout).toMatch(
      /Replaced \[[0-9a-f]{8}\] only delivered orders\nRemembered \[[0-9a-f]{8}\]: show all statuses again/,
    );
    const all = await json('memory', 'list', '--all', '--user', 'dora');
    expect(
      all.memories.map((m: { status: string; text: string }) => `${m.status}: ${m.text}`).sort(),
    ).toEqual(['active: show all statuses again', 'superseded: only delivered orders']);
    const history = await json('memory', 'history', '--user', 'dora');
    expect(
      history.history.map((h: { action: string; newText: string | null }) => `${h.action}: ${h.newText}`),
    ).toEqual([
      'ADD: only delivered orders',
      'SUPERSEDE: show all statuses again', // the old memory, superseded by the new text
      'ADD: show all statuses again',
    ]);
  });

  it('usage errors exit 2', async () => {
    expect((await run('memory', 'frobnicate', '--user', 'priya')).code).toBe(2);
    expect((await run('memory', 'add', '--user', 'priya', '--kind', 'wish', 'a pony')).code).toBe(2);
    expect((await run('memory', 'restore', '--user', 'priya', 'ab')).code).toBe(2);
  });
});
