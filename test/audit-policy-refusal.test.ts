/**
 * Refusals the audit trail must hold: a question asked while the policy file is invalid (never
 * valid in the process, so nobody reads unrestricted) on each front end — CLI `ask`, HTTP
 * `POST /api/ask`, MCP `ask` — with the question and no statement; and a statement of the model
 * that does not parse (repaired, then run). Each refusal's reason ends with the rule that refused
 * it, which `sqlrecall audit` shows.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { UserDirectory } from '../src/app/users.js';
import { AuditStore } from '../src/audit/store.js';
import { loadConfig } from '../src/config/config.js';
import type { AuditRecord } from '../src/core/audit.js';
import { DEFAULT_MCP_MAX_BYTES } from '../src/mcp/bounds.js';
import { RuntimeLease } from '../src/mcp/lease.js';
import { createMcpServer } from '../src/mcp/server.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { pgliteShop } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

let home: string;
let databaseUrl: string;
let broken: string;
let model: ScriptedOllama;
/** SQL replies of the model, in order; the last one repeats. */
let replies: string[] = ['SELECT count(*) AS n FROM customers'];
let sqlRequests = 0;

beforeAll(async () => {
  home = tempDir('sqlrecall-audit-refusal-');
  databaseUrl = (await pgliteShop()).url;
  broken = join(home, 'broken.yaml');
  // A typo (`deny_column`) makes the whole file invalid: it is never valid in these processes.
  writeFileSync(broken, 'teams:\n  sales:\n    deny_column: [public.customers.email]\n');
  model = await startScriptedOllama({
    chat: (request) => {
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
        const reply = replies[Math.min(sqlRequests, replies.length - 1)]!;
        sqlRequests += 1;
        return fence(reply);
      }
      return 'Here is what I found.';
    },
  });
}, 180_000);

afterAll(async () => {
  await model?.close();
});

function settings(extra: Record<string, string> = {}): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    SQLRECALL_USER: 'sam',
    SQLRECALL_HOME: join(home, 'home'),
    OLLAMA_HOST: model.url,
    SQLRECALL_MEMORY: 'off',
    SQLRECALL_LOG_LEVEL: 'silent',
    ...extra,
  };
}

/** sam's audit records as `sqlrecall audit --json` lists them (every journal moved first). */
async function auditOf(env: Record<string, string>): Promise<AuditRecord[]> {
  const run = await runCliInProcess(['audit', '--json', '--user', 'sam', '--limit', '1000'], { env });
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as { records: AuditRecord[] }).records;
}

const INVALID = /is invalid, so no statement runs/;
const RULE = /\(rule policy-file-invalid\)$/;

describe('a question refused because the policy file is invalid', () => {
  it('CLI ask: exit 2, and the refusal is recorded with the question, no statement and the rule', async () => {
    const env = settings({ SQLRECALL_POLICY: broken, SQLRECALL_HOME: join(home, 'cli') });
    const before = sqlRequests;
    const run = await runCliInProcess(['ask', 'how many customers are there?', '--no-answer'], { env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(INVALID);
    // Refused before the model was asked: nothing ran, nothing was written.
    expect(sqlRequests).toBe(before);
    const records = await auditOf(env);
    expect(records).toEqual([
      expect.objectContaining({
        question: 'how many customers are there?',
        sql: '',
        outcome: 'refused',
        origin: 'model',
        code: 'config',
        frontEnd: 'cli',
        reason: expect.stringMatching(RULE),
      }),
    ]);
    expect(records[0]!.reason).toMatch(INVALID);
    const text = await runCliInProcess(['audit', '--user', 'sam'], { env });
    expect(text.stdout).toMatch(/refused: .*\(rule policy-file-invalid\)/);
    expect(text.stdout).toMatch(/\(no statement was written\)/);
  });

  it('HTTP POST /api/ask: refused, and recorded for the signed-in user with the front end http', async () => {
    const config = loadConfig({
      env: settings({ SQLRECALL_POLICY: broken, SQLRECALL_HOME: join(home, 'http') }),
      cwd: home,
      flags: {},
    });
    const client = memoryClient(config);
    const runtime = new Runtime(config);
    try {
      const users = new UserDirectory(client);
      const token = await users.add('sam');
      const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'users', users }, client }));
      const res = await app.request('/api/ask', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify({ question: 'which customers are in India?' }),
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(JSON.stringify(await res.json())).toMatch(INVALID);
      await runtime.attachAudit(client);
      await runtime.audit().flush();
      const records = await new AuditStore(client).list({ user: 'sam' });
      expect(records).toEqual([
        expect.objectContaining({
          question: 'which customers are in India?',
          sql: '',
          outcome: 'refused',
          code: 'config',
          frontEnd: 'http',
          reason: expect.stringMatching(RULE),
        }),
      ]);
    } finally {
      await runtime.close();
      await client.close().catch(() => undefined);
    }
  });

  it('MCP ask: a tool error, and recorded with the front end mcp', async () => {
    const env = settings({ SQLRECALL_POLICY: broken, SQLRECALL_HOME: join(home, 'mcp') });
    const config = loadConfig({ env, cwd: home, flags: {} });
    const lease = new RuntimeLease(() => new Runtime(config), false);
    const server = createMcpServer({
      config,
      runtime: lease,
      maxBytes: DEFAULT_MCP_MAX_BYTES,
      log: () => {},
      version: 'test',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'audit-policy-refusal', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      const result = (await client.callTool({
        name: 'ask',
        arguments: { question: 'what is the total of all orders?', answer: false },
      })) as CallToolResult;
      expect(result.isError).toBe(true);
      expect(JSON.stringify(result.content)).toMatch(INVALID);
    } finally {
      await client.close();
      await server.close();
      await lease.close();
    }
    const records = await auditOf(env);
    expect(records).toEqual([
      expect.objectContaining({
        question: 'what is the total of all orders?',
        sql: '',
        outcome: 'refused',
        code: 'config',
        frontEnd: 'mcp',
        reason: expect.stringMatching(RULE),
      }),
    ]);
  });

  it('a valid policy file: the same question runs and no refusal is recorded (the test can tell)', async () => {
    const valid = join(home, 'valid.yaml');
    writeFileSync(valid, 'teams:\n  sales:\n    deny_columns: [public.customers.email]\n');
    const env = settings({ SQLRECALL_POLICY: valid, SQLRECALL_HOME: join(home, 'valid') });
    replies = ['SELECT count(*) AS n FROM customers'];
    sqlRequests = 0;
    const run = await runCliInProcess(['ask', 'how many customers are there?', '--no-answer'], { env });
    expect(run.code, run.stderr).toBe(0);
    const records = await auditOf(env);
    expect(records.map((r) => r.outcome)).toEqual(['ran']);
  });
});

describe('a statement of the model that does not parse', () => {
  it('is recorded as refused with its rule, before the repaired statement that ran', async () => {
    const env = settings({ SQLRECALL_HOME: join(home, 'repair') });
    replies = ['SELECT count(*) AS n FROM customers WHERE', 'SELECT count(*) AS n FROM customers'];
    sqlRequests = 0;
    const run = await runCliInProcess(['ask', 'count the customers', '--no-answer', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    expect(sqlRequests).toBe(2);
    const records = await auditOf(env);
    // Newest first: the repaired statement ran after the refused one.
    expect(records).toEqual([
      expect.objectContaining({
        sql: 'SELECT count(*) AS n FROM customers',
        outcome: 'ran',
        origin: 'repair',
      }),
      expect.objectContaining({
        sql: 'SELECT count(*) AS n FROM customers WHERE',
        outcome: 'refused',
        origin: 'model',
        code: 'guard_refused',
        question: 'count the customers',
        reason: expect.stringMatching(/\(rule parse-error\)$/),
      }),
    ]);
  });
});
