/**
 * Scale-out (issue 15): two `sqlrecall serve` processes on one server memory database (its own
 * database on TEST_DATABASE_URL): a memory added through one is applied through the other; 20
 * concurrent identical adds spread over both give one memory; a conversation continued on the
 * other replica keeps its turns. The memory database is its own database on TEST_DATABASE_URL when
 * that server has pgvector; otherwise (the Debian server here has none) a PGlite with pgvector
 * served over a Unix socket by sqlrecall's own wire multiplexer, which both replicas reach as a
 * plain `postgres://` server through `pg` (same code path: pool, transactions, advisory locks).
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { Gate, startWireMux } from '../src/databases/pglite/wire-mux.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { BIN, ROOT, runSqlrecall } from './support/cli.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './support/scripted/server.js';

const SERVER = process.env.TEST_DATABASE_URL;
const INDIA = "customers.country = 'India'";

async function serverHasVector(url: string | undefined): Promise<boolean> {
  if (!url) return false;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const rows = await client.query("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'");
    return rows.rowCount === 1;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

describe('two serve replicas on one server memory database', () => {
  const dbName = `sqlrecall_scaleout_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  let dir: string;
  let model: ScriptedOllama;
  let env: Record<string, string>;
  const replicas: { child: ChildProcessWithoutNullStreams; url: string }[] = [];
  let token = '';
  let onServer = false;
  let memoryUrl = '';
  let closeMemory: () => Promise<void> = async () => {};

  const admin = () => new pg.Client({ connectionString: SERVER });

  async function startServe(shop: string): Promise<{ child: ChildProcessWithoutNullStreams; url: string }> {
    const child = spawn(process.execPath, [BIN, 'serve', '--users', '--port', '0'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: dir, ...env, DATABASE_URL: `pglite:${shop}` },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`serve did not start:\n${out}`)), 120_000);
      const onData = (d: Buffer) => {
        out += d;
        const match = /Listening on (http:\/\/\S+)/.exec(out);
        if (match) {
          clearTimeout(timer);
          resolve(match[1] as string);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('close', () => reject(new Error(`serve exited:\n${out}`)));
    });
    return { child, url };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-scaleout-'));
    onServer = await serverHasVector(SERVER);
    if (onServer) {
      const client = admin();
      await client.connect();
      await client.query(`CREATE DATABASE ${dbName}`);
      await client.end();
      const url = new URL(SERVER as string);
      url.pathname = `/${dbName}`;
      memoryUrl = url.toString();
    } else {
      const { PGlite } = await import('@electric-sql/pglite');
      const { vector } = await import('@electric-sql/pglite-pgvector');
      const db = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
      await db.waitReady;
      const runDir = join(dir, 'memory-server');
      const mux = await startWireMux(db, new Gate(), runDir);
      memoryUrl = `postgres://postgres@localhost/postgres?host=${encodeURIComponent(runDir)}`;
      closeMemory = async () => {
        await mux.close();
        await db.close();
      };
    }
    model = await startScriptedOllama({
      models: ['qwen2.5-coder:7b', 'all-minilm'],
      chat: (request): ScriptedReply => {
        if (request.purpose === 'memory-extract') return JSON.stringify({ facts: [] });
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
        const prompt = request.messages.map((m) => m.content).join('\n');
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          // The SQL depends on what the prompt shows: proof that the memory reached this replica.
          return prompt.includes(INDIA)
            ? "```sql\nSELECT count(*) AS n FROM customers WHERE country = 'India'\n```"
            : '```sql\nSELECT count(*) AS n FROM customers\n```';
        }
        return 'Here is the answer.';
      },
    });
    env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: model.url, MEMORY_DATABASE_URL: memoryUrl };
    const user = await runSqlrecall(['users', 'add', 'alice', '--json'], { env, timeoutMs: 120_000 });
    expect(user.code, user.stderr).toBe(0);
    token = (JSON.parse(user.stdout) as { token: string }).token;
    await createDemoDatabase(join(dir, 'shop-a'));
    await createDemoDatabase(join(dir, 'shop-b'));
    replicas.push(await startServe(join(dir, 'shop-a')));
    replicas.push(await startServe(join(dir, 'shop-b')));
  }, 300_000);

  afterAll(async () => {
    for (const r of replicas) r.child.kill('SIGTERM');
    await Promise.all(replicas.map((r) => new Promise((ok) => r.child.once('close', ok))));
    await model?.close();
    await closeMemory();
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (onServer) {
      const client = admin();
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`);
      await client.end();
    }
  }, 60_000);

  const call = async (replica: number, path: string, body?: unknown) => {
    const response = await fetch(`${replicas[replica]?.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, doc: (await response.json()) as Record<string, unknown> };
  };

  it('a memory added through one replica is applied through the other', async () => {
    const added = await call(0, '/api/memories', {
      kind: 'preference',
      text: 'Always show me customers from India',
      sql: INDIA,
    });
    expect(added.status, JSON.stringify(added.doc)).toBe(200);
    const asked = await call(1, '/api/ask', { question: 'how many customers are there?' });
    expect(asked.status, JSON.stringify(asked.doc)).toBe(200);
    expect(asked.doc.sql).toContain("country = 'India'");
    expect((asked.doc.appliedMemories as { text: string }[]).map((m) => m.text)).toEqual([
      'Always show me customers from India',
    ]);
  }, 120_000);

  it('20 concurrent identical adds spread over both replicas give one memory', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call(i % 2, '/api/memories', { kind: 'preference', text: 'Only paid orders count' }),
      ),
    );
    for (const r of results) expect(r.status, JSON.stringify(r.doc)).toBe(200);
    const list = await call(1, '/api/memories');
    const texts = (list.doc.memories as { text: string }[]).map((m) => m.text);
    expect(texts.filter((t) => t === 'Only paid orders count')).toHaveLength(1);
  }, 120_000);

  it('a conversation continued on the other replica keeps its turns', async () => {
    const conversationId = `conv-${randomUUID()}`;
    const first = await call(0, '/api/ask', { question: 'how many customers?', conversationId });
    expect(first.status, JSON.stringify(first.doc)).toBe(200);
    const second = await call(1, '/api/ask', { question: 'and in India?', conversationId });
    expect(second.status, JSON.stringify(second.doc)).toBe(200);
    const read = await call(0, `/api/conversations/${conversationId}`);
    expect(read.status).toBe(200);
    expect((read.doc.turns as { question: string }[]).map((t) => t.question)).toEqual([
      'how many customers?',
      'and in India?',
    ]);
  }, 120_000);
});
