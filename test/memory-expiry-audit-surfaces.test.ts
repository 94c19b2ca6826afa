/**
 * The day a memory lasts, as the user typed it, on every surface, and the credential audit over
 * MCP. `memory add --until 2099-12-31` stores an instant (the end of that day in the user's time
 * zone) and every surface hands back `expiresOn: "2099-12-31"` next to it: CLI `--json` and text,
 * HTTP (the browser's zone from its header) and the MCP `recall` tool. The MCP `audit_memory` tool
 * finds credentials stored in the caller's memories only, and removes them on request.
 * Real binary on the demo shop, the SDK's MCP client over stdio, a scripted model server.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../src/demo/load.js';
import { createMemoryStore } from '../src/memory/store/index.js';
import { BIN, ROOT, runSqlrecall } from './support/cli.js';
import { testVector } from './support/memory-store.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { startTestServer, type TestServer } from './support/server-app.js';
import { tempDir } from './support/temp-dir.js';

const SECRET_URL = 'the reporting database is postgres://report:S3cretPw@db.internal/prod';
const SECRET_KEY = 'the billing api key is sk-live-4f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c';

// biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
function doc(result: CallToolResult): Record<string, any> {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text);
}

describe('expiry day and credential audit (CLI and MCP, demo shop)', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;
  let home: string;

  beforeAll(async () => {
    const dir = tempDir('sqlrecall-expiry-audit-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({ chat: () => JSON.stringify({ sql: null }) });
    home = join(dir, 'home');
    env = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/tmp',
      SQLRECALL_HOME: home,
      OLLAMA_HOST: server.url,
      DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
      // West of UTC: the end of 2099-12-31 here is 2100-01-01 08:00 UTC.
      SQLRECALL_TZ: 'America/Los_Angeles',
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

  async function mcp(user: string) {
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
      tools: async () => (await client.listTools()).tools.map((t) => t.name),
      close: () => client.close(),
    };
  }

  it('memory add --until 2099-12-31: --json and list give the typed day, the text says "until 2099-12-31"', async () => {
    const added = JSON.parse(
      await cli([
        'memory',
        'add',
        '--user',
        'alice',
        '--kind',
        'context',
        '--until',
        '2099-12-31',
        '--json',
        'Quarter figures are in euros',
      ]),
    );
    expect(added.expiresAt).toBe('2100-01-01T08:00:00.000Z');
    expect(added.expiresOn).toBe('2099-12-31');

    const listed = JSON.parse(await cli(['memory', 'list', '--user', 'alice', '--json']));
    expect(listed.memories).toHaveLength(1);
    expect(listed.memories[0]).toMatchObject({
      text: 'Quarter figures are in euros',
      expiresAt: '2100-01-01T08:00:00.000Z',
      expiresOn: '2099-12-31',
    });
    const text = await cli(['memory', 'list', '--user', 'alice']);
    expect(text).toContain('(until 2099-12-31)');
    expect(text).not.toContain('2100-01-01');

    const shown = JSON.parse(
      await cli(['memory', 'show', '--user', 'alice', '--json', listed.memories[0].id]),
    );
    expect(shown.memory.expiresOn).toBe('2099-12-31');
  });

  it('the MCP recall tool lists the typed day too', async () => {
    const alice = await mcp('alice');
    try {
      const listed = doc(await alice.call('recall'));
      expect(listed.memories).toEqual([
        expect.objectContaining({
          text: 'Quarter figures are in euros',
          expiresAt: '2100-01-01T08:00:00.000Z',
          expiresOn: '2099-12-31',
        }),
      ]);
    } finally {
      await alice.close();
    }
  });

  it('audit_memory finds the credentials of the caller only and removes them on request', async () => {
    // Stored before credentials were refused: written to the store directly, bypassing every
    // teaching path (which refuse them).
    const store = createMemoryStore({ dataDir: join(home, 'memory') });
    const info = await store.embeddingInfo();
    expect(info).not.toBeNull();
    await store.init(info!);
    for (const [user, text, seed] of [
      ['alice', SECRET_URL, 1],
      ['bob', SECRET_KEY, 2],
    ] as const)
      await store.write({ user }, [
        { op: 'add', memory: { kind: 'context', text }, embedding: testVector(seed, info!.dimensions) },
      ]);
    await store.close();

    const alice = await mcp('alice');
    try {
      expect(await alice.tools()).toContain('audit_memory');
      const found = doc(await alice.call('audit_memory'));
      expect(found.user).toBe('alice');
      expect(found.removed).toBeNull();
      expect(found.found).toHaveLength(1);
      expect(JSON.stringify(found)).not.toContain('S3cretPw');
      expect(JSON.stringify(found)).not.toContain('sk-live');
      expect(found.found[0].found[0].label).toMatch(/password/i);

      const removed = doc(await alice.call('audit_memory', { delete: true }));
      // The memory and its own history (the ADD entry) are gone for good.
      expect(removed.removed).toEqual({ memories: 1, history: 1, pending: 0 });
      expect(doc(await alice.call('audit_memory')).found).toEqual([]);
      // The expiring memory of alice that holds no credential is kept.
      expect(doc(await alice.call('recall')).memories.map((m: { text: string }) => m.text)).toEqual([
        'Quarter figures are in euros',
      ]);
    } finally {
      await alice.close();
    }

    const bob = await mcp('bob');
    try {
      const found = doc(await bob.call('audit_memory'));
      expect(found.found).toHaveLength(1);
      expect(found.found[0].found[0].label).toMatch(/key/i);
    } finally {
      await bob.close();
    }
  });
});

describe('expiry day over HTTP (the browser’s time zone)', () => {
  let s: TestServer;
  let token: string;
  beforeAll(async () => {
    s = await startTestServer('users');
    token = await s.users.add('alice');
  }, 180_000);
  afterAll(async () => {
    await s?.close();
  });

  const call = async (path: string, init: { method?: string; body?: unknown; zone?: string } = {}) => {
    const res = await s.app.request(path, {
      method: init.method ?? 'GET',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        ...(init.zone ? { 'x-sqlrecall-time-zone': init.zone } : {}),
      },
      ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
    });
    // biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
    return { status: res.status, json: (await res.json()) as Record<string, any> };
  };

  it('POST, list and show give expiresOn as typed, in the zone of the request', async () => {
    // East of UTC: the end of 2099-12-31 in Auckland (UTC+13 in summer) is 2099-12-31 11:00 UTC.
    const added = await call('/api/memories', {
      method: 'POST',
      body: { kind: 'context', text: 'Fiscal year figures are net', until: '2099-12-31' },
      zone: 'Pacific/Auckland',
    });
    expect(added.status).toBe(200);
    expect(added.json).toMatchObject({ expiresAt: '2099-12-31T11:00:00.000Z', expiresOn: '2099-12-31' });
    const listed = await call('/api/memories', { zone: 'Pacific/Auckland' });
    expect(listed.json.memories).toEqual([
      expect.objectContaining({ expiresAt: '2099-12-31T11:00:00.000Z', expiresOn: '2099-12-31' }),
    ]);
    const id = (listed.json.memories as { id: string }[])[0]!.id;
    const shown = await call(`/api/memories/${id}`, { zone: 'Pacific/Auckland' });
    expect(shown.json).toMatchObject({ memory: { expiresOn: '2099-12-31' } });
    // A memory that never expires says so.
    await call('/api/memories', { method: 'POST', body: { kind: 'context', text: 'Amounts are in cents' } });
    const all = (await call('/api/memories', { zone: 'Pacific/Auckland' })).json.memories as {
      text: string;
      expiresOn: string | null;
    }[];
    expect(all.find((m) => m.text === 'Amounts are in cents')?.expiresOn).toBeNull();
  });
});
