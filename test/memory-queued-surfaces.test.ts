/**
 * Queued memories over HTTP and MCP. HTTP: the in-process API with token auth lists a user's
 * queued facts (`GET /api/memories/pending`, and `pending` in `GET /api/memories`), shows one by
 * queue id or prefix and withdraws it (`DELETE /api/memories/pending/{id}`); another user's queue
 * id is 404 with no text, and stays queued. A memory text over 2,000 characters is 400 with a
 * 120-character preview. MCP (in-process server, model server down): `remember` queues, `recall`
 * lists the queued fact, `show_memory` and `forget` take its queue id, and an over-long text is a
 * tool error with the preview.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { DEFAULT_MCP_MAX_BYTES } from '../src/mcp/bounds.js';
import { RuntimeLease } from '../src/mcp/lease.js';
import { createMcpServer } from '../src/mcp/server.js';
import type { PendingTeach } from '../src/memory/service.js';
import { Runtime } from '../src/runtime/runtime.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { startTestServer, type TestServer } from './support/server-app.js';
import { tempDir } from './support/temp-dir.js';

const LONG = `Revenue means ${'net of returns and discounts, '.repeat(80)}`;

const teaching = (text: string): PendingTeach => ({
  type: 'teach',
  kind: 'context',
  text,
  sql: null,
  expiresAt: null,
  expiresOn: null,
  pinned: false,
});

describe('queued memories over HTTP', () => {
  let s: TestServer;
  let ann: string;
  let bob: string;
  let queued: string;
  beforeAll(async () => {
    s = await startTestServer('users');
    ann = await s.users.add('ann');
    bob = await s.users.add('bob');
    // Queued as a teaching saved while the model server was down.
    const memory = await s.runtime.memory();
    queued = await memory.store.enqueuePending({ user: 'ann' }, teaching('Fiscal years start in April'));
  }, 180_000);
  afterAll(async () => {
    await s?.close();
  });
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await s.app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text) };
  };

  it('lists and shows a queued fact to its owner, by queue id or prefix', async () => {
    const listed = await call(ann, 'GET', '/api/memories/pending');
    expect(listed.status, listed.text).toBe(200);
    expect(listed.json.pending).toEqual([
      expect.objectContaining({ pendingId: queued, text: 'Fiscal years start in April', status: 'pending' }),
    ]);
    const all = await call(ann, 'GET', '/api/memories');
    expect(all.json.pending.map((p: { pendingId: string }) => p.pendingId)).toEqual([queued]);
    const shown = await call(ann, 'GET', `/api/memories/pending/${queued.slice(0, 8)}`);
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json.pending).toMatchObject({ pendingId: queued, text: 'Fiscal years start in April' });
  });

  it("another user's queue id is not found, never its text, and it stays queued", async () => {
    expect((await call(bob, 'GET', '/api/memories/pending')).json.pending).toEqual([]);
    for (const [method, id] of [
      ['GET', queued],
      ['GET', queued.slice(0, 8)],
      ['DELETE', queued],
      ['DELETE', queued.slice(0, 6)],
    ] as const) {
      const res = await call(bob, method, `/api/memories/pending/${id}`);
      expect(res.status, `${method} ${id}: ${res.text}`).toBe(404);
      expect(res.json.error.code).toBe('not_found');
      expect(res.text).not.toContain('April');
    }
    const still = await call(ann, 'GET', '/api/memories/pending');
    expect(still.json.pending.map((p: { pendingId: string }) => p.pendingId)).toEqual([queued]);
  });

  it('the owner withdraws it: gone from the queue, and a second withdrawal is not found', async () => {
    const removed = await call(ann, 'DELETE', `/api/memories/pending/${queued.slice(0, 8)}`);
    expect(removed.status, removed.text).toBe(200);
    expect(removed.json.withdrawn).toMatchObject({ pendingId: queued, text: 'Fiscal years start in April' });
    expect((await call(ann, 'GET', '/api/memories/pending')).json.pending).toEqual([]);
    expect((await call(ann, 'DELETE', `/api/memories/pending/${queued}`)).status).toBe(404);
  });

  it('a memory text over 2,000 characters is 400 with a 120-character preview; nothing stored', async () => {
    const res = await call(ann, 'POST', '/api/memories', { kind: 'term', text: LONG });
    expect(res.status, res.text).toBe(400);
    expect(res.json.error.code).toBe('usage');
    expect(res.json.error.message).toContain('limit is 2,000');
    expect(res.json.error.message).toContain(`It begins: "${LONG.slice(0, 120)}…"`);
    expect(res.text).not.toContain(LONG.slice(0, 200));
    const edited = await call(ann, 'POST', '/api/memories', { kind: 'term', text: 'Revenue is net' });
    expect(edited.status, edited.text).toBe(200);
    const id = edited.json.changes[0].id as string;
    const patch = await call(ann, 'PATCH', `/api/memories/${id}`, { text: LONG });
    expect(patch.status, patch.text).toBe(400);
    const listed = await call(ann, 'GET', '/api/memories');
    expect(listed.json.memories.map((m: { text: string }) => m.text)).toEqual(['Revenue is net']);
  });
});

// biome-ignore lint/suspicious/noExplicitAny: the tests read loosely typed JSON documents
function doc(result: CallToolResult): Record<string, any> {
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('expected a text result');
  return JSON.parse(first.text);
}

describe('queued memories over MCP (model server down)', () => {
  let home: string;
  let ollama: string;
  beforeAll(async () => {
    home = join(tempDir('sqlrecall-queued-mcp-'), 'home');
    const probe = await startScriptedOllama({});
    ollama = `http://127.0.0.1:${new URL(probe.url).port}`;
    await probe.close(); // the port now refuses connections
  }, 120_000);

  async function withMcp<T>(
    user: string,
    use: (call: (tool: string, args?: object) => Promise<CallToolResult>) => Promise<T>,
  ) {
    const config = loadConfig({
      env: { SQLRECALL_HOME: home, OLLAMA_HOST: ollama },
      cwd: home,
      flags: { user, logLevel: 'silent' },
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
    const client = new Client({ name: 'queued-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      return await use(
        async (tool, args = {}) =>
          (await client.callTool({ name: tool, arguments: args as Record<string, unknown> }, undefined, {
            timeout: 90_000,
          })) as CallToolResult,
      );
    } finally {
      await client.close();
      await server.close();
      await lease.close();
    }
  }

  it('remember queues; recall lists it; show_memory and forget take its queue id, for its owner only', async () => {
    const id = await withMcp('ann', async (call) => {
      const remembered = await call('remember', { text: 'Weeks start on Monday', kind: 'context' });
      expect(remembered.isError, JSON.stringify(remembered.content)).toBeFalsy();
      const pendingId = doc(remembered).pending.id as string;
      const recalled = await call('recall');
      const listed = doc(recalled);
      expect(recalled.isError, JSON.stringify(recalled.content)).toBeFalsy();
      expect(listed.pending).toEqual([expect.objectContaining({ pendingId, text: 'Weeks start on Monday' })]);
      const shown = await call('show_memory', { id: pendingId.slice(0, 8) });
      expect(shown.isError, JSON.stringify(shown.content)).toBeFalsy();
      expect(doc(shown).pending).toMatchObject({ pendingId, text: 'Weeks start on Monday' });
      return pendingId;
    });
    await withMcp('bob', async (call) => {
      for (const [tool, args] of [
        ['show_memory', { id }],
        ['forget', { target: id.slice(0, 8) }],
      ] as const) {
        const res = await call(tool, args);
        expect(res.isError, tool).toBe(true);
        expect(doc(res).error.code).toBe('not_found');
        expect(JSON.stringify(res.content)).not.toContain('Monday');
      }
    });
    await withMcp('ann', async (call) => {
      expect(doc(await call('recall')).pending).toHaveLength(1);
      const forgot = await call('forget', { target: id.slice(0, 8) });
      expect(forgot.isError, JSON.stringify(forgot.content)).toBeFalsy();
      expect(doc(forgot).withdrawn).toMatchObject({ pendingId: id, text: 'Weeks start on Monday' });
      expect(doc(await call('recall')).pending).toEqual([]);
    });
  });

  it('an over-long text is a tool error with the 120-character preview; nothing queued', async () => {
    await withMcp('cy', async (call) => {
      const res = await call('remember', { text: LONG, kind: 'term' });
      expect(res.isError).toBe(true);
      const error = doc(res).error;
      expect(error.code).toBe('usage');
      expect(error.message).toContain(`It begins: "${LONG.slice(0, 120)}…"`);
      expect(doc(await call('recall')).pending).toEqual([]);
    });
  });
});
