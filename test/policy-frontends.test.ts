/**
 * The whole hostile corpus of the data policy (`fixtures/policy-hostile.jsonl`) through every
 * front end, as the user sam under a real policy file: `POST /api/ask` (the scripted model replies
 * with the corpus statement as its SQL), the CLI `sql` (in-process), `POST /api/sql`, and the MCP
 * `sql` tool (in-process client and server). Each statement must be refused (exit 3, HTTP 403 or
 * 422, an MCP error, naming sam's policy for a policy refusal) or return exactly what it returns on
 * the database with the denied data removed; no outcome, and no prompt the model saw, may hold a
 * hidden value. One database and one server or MCP runtime per front end serve the whole corpus.
 * The statements each front end ran and refused reach the audit trail with the front end, the
 * question, the final SQL, the policies and the row count.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { UserDirectory } from '../src/app/users.js';
import { AuditStore } from '../src/audit/store.js';
import { type Config, loadConfig } from '../src/config/config.js';
import type { AuditRecord } from '../src/core/audit.js';
import { DEFAULT_MCP_MAX_BYTES } from '../src/mcp/bounds.js';
import { RuntimeLease } from '../src/mcp/lease.js';
import { createMcpServer } from '../src/mcp/server.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import {
  CORPUS,
  type Entry,
  FULL_SQL,
  leaks,
  type Outcome,
  outcomeOf,
  REDUCED_SQL,
} from './fixtures/policy-hostile.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { freshPgliteDataDir } from './support/pglite-template.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

/** sam's rules as the policy file writes them (the same policy as `samPolicy()` of the fixture). */
const POLICY_YAML = `
users:
  sam: { teams: [sales], attributes: { region: EMEA } }
teams:
  sales:
    deny_columns: [public.employees.salary, public.customers.email]
    rows:
      public.orders: "region = :region"
      public.customers: "region = :region"
      public.employees: "region = :region"
`;

/** Names of sam's policy as a refusal may give them. */
const SAM_POLICIES = /team sales|user sam/;

const fence = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

/** What a front end answered, folded into the outcome the hostile test uses. */
interface FrontOutcome {
  outcome: Outcome;
  /** The whole answer as text (searched for hidden values). */
  raw: string;
  /** The exit code or HTTP status of a refusal (checked against the error table). */
  status?: number;
}

/** Rows in a canonical order, as JSON (statements without ORDER BY may return any order). */
function sorted(rows: unknown[][]): string[] {
  return rows.map((row) => JSON.stringify(row)).sort();
}

/** `text` without the statement (as written, and as escaped in JSON). */
function withoutStatement(text: string, sql: string): string {
  return text.split(sql).join('').split(JSON.stringify(sql).slice(1, -1)).join('');
}

/** An outcome from an error document `{code, message, rule?}`. */
function fromError(error: { code: string; message: string; rule?: string }): Outcome {
  return error.code === 'policy_refused' || error.code === 'guard_refused'
    ? { kind: 'refused', code: error.code, rule: error.rule ?? '', message: error.message }
    : { kind: 'error', message: `${error.code}: ${error.message}` };
}

let reduced: TestDatabase;
let databaseUrl: string;
let home: string;
let policyFile: string;
let model: ScriptedOllama;
/** The statement the scripted model answers with (set per question). */
let modelSql = 'SELECT 1';
/** SQL prompts the model saw. */
const prompts: string[] = [];
const expected = new Map<string, Outcome>();
/** Counts per front end, printed at the end. */
const counts = new Map<string, { refused: number; rows: number; error: number }>();

beforeAll(async () => {
  home = tempDir('sqlrecall-frontends-');
  const dir = freshPgliteDataDir('sqlrecall-frontends-db-');
  const full = new PGlite(dir);
  await full.exec(FULL_SQL);
  await full.close();
  databaseUrl = `pglite:${dir}`;
  policyFile = join(home, 'policy.yaml');
  writeFileSync(policyFile, POLICY_YAML);
  reduced = await createTestDatabase('pglite', 'policy_reduced');
  await reduced.exec(REDUCED_SQL);
  for (const entry of CORPUS) expected.set(entry.id, await outcomeOf(reduced.connector, entry.sql));
  model = await startScriptedOllama({
    chat: (request) => {
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
        prompts.push(request.messages.map((m) => m.content).join('\n'));
        return fence(modelSql);
      }
      return 'Here is what I found.';
    },
  });
}, 180_000);

afterAll(async () => {
  await model?.close();
  await reduced?.dispose();
  const lines = [...counts].map(
    ([front, c]) => `${front}: ${c.refused} refused, ${c.rows} with rows, ${c.error} database errors`,
  );
  if (lines.length > 0)
    console.log(`hostile corpus (${CORPUS.length} statements) per front end:\n  ${lines.join('\n  ')}`);
});

/** The settings every front end runs with: sam, the policy file, the full database. */
function settings(): Record<string, string> {
  return {
    DATABASE_URL: databaseUrl,
    SQLRECALL_POLICY: policyFile,
    SQLRECALL_USER: 'sam',
    SQLRECALL_HOME: join(home, 'home'),
    OLLAMA_HOST: model.url,
    SQLRECALL_MEMORY: 'off',
    SQLRECALL_LOG_LEVEL: 'silent',
  };
}

/** Checks one front end's outcome of `entry` as the hostile test checks the SQL path's. */
function check(front: string, entry: Entry, answer: FrontOutcome): void {
  const { outcome } = answer;
  const label = `${front} ${entry.id}: ${entry.sql}\n${answer.raw.slice(0, 2000)}`;
  const count = counts.get(front) ?? { refused: 0, rows: 0, error: 0 };
  count[outcome.kind] += 1;
  counts.set(front, count);
  // The statement itself may hold a hidden value (`amount - 9191.91`): echoing it leaks nothing.
  expect(leaks(withoutStatement(answer.raw, entry.sql)), label).toBe(false);
  // A denied column is refused in the name of the entry that denies it; structural refusals
  // (bind parameters, a database-qualified name) are the same for every policy.
  if (outcome.kind === 'refused' && /^policy-(column|whole-row)$/.test(outcome.rule))
    expect(outcome.message, label).toMatch(SAM_POLICIES);
  if (entry.expect === 'refused') {
    expect(outcome.kind, label).toBe('refused');
    return;
  }
  if (entry.expect === 'rows') expect(outcome.kind, label).toBe('rows');
  if (outcome.kind !== 'rows') return;
  const want = expected.get(entry.id)!;
  expect(want.kind, `${label}\nreduced: ${JSON.stringify(want)}`).toBe('rows');
  if (want.kind !== 'rows') return;
  expect(outcome.columns, label).toEqual(want.columns);
  // Compared as they travel (JSON), as every front end sends them.
  expect(sorted(outcome.rows), label).toEqual(sorted(JSON.parse(JSON.stringify(want.rows))));
}

describe('CLI sql (in-process)', () => {
  it.each(CORPUS)('$id: $expect', async (entry) => {
    const run = await runCliInProcess(['sql', '--json', '-'], { env: settings(), input: entry.sql });
    const doc = JSON.parse(run.stdout) as {
      columns?: string[];
      rows?: unknown[][];
      error?: { code: string; message: string; rule?: string };
    };
    const outcome: Outcome = doc.error
      ? fromError(doc.error)
      : { kind: 'rows', columns: doc.columns ?? [], rows: doc.rows ?? [] };
    if (outcome.kind === 'refused') expect(run.code).toBe(3);
    if (outcome.kind === 'rows') expect(run.code, run.stderr).toBe(0);
    check('cli sql', entry, { outcome, raw: run.stdout + run.stderr });
  });
});

/** One in-process server over a runtime with the policy file; `sam` signs in with a token. */
async function startServer(): Promise<{
  request: (path: string, body: unknown) => Promise<{ status: number; body: Record<string, unknown> }>;
  runtime: Runtime;
  audit: () => Promise<AuditRecord[]>;
  close: () => Promise<void>;
}> {
  const config = loadConfig({ env: settings(), cwd: home, flags: {} });
  const client = memoryClient(config);
  const runtime = new Runtime(config);
  const users = new UserDirectory(client);
  const known = (await users.list()).some((u) => u.user === 'sam');
  const token = known ? await users.rotate('sam') : await users.add('sam');
  const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'users', users }, client }));
  return {
    runtime,
    async request(path, body) {
      const res = await app.request(path, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    async audit() {
      await runtime.attachAudit(client);
      await runtime.audit().flush();
      return new AuditStore(client).list({ user: 'sam', limit: 1000 });
    },
    async close() {
      await runtime.close();
      await client.close().catch(() => undefined);
    },
  };
}

type Server = Awaited<ReturnType<typeof startServer>>;

/** The outcome of an HTTP answer (a document with rows, or `{error}` with its status). */
function httpOutcome(res: { status: number; body: Record<string, unknown> }): FrontOutcome {
  const error = res.body.error as { code: string; message: string; rule?: string } | undefined;
  const raw = JSON.stringify(res.body);
  if (error) {
    const outcome = fromError(error);
    if (outcome.kind === 'refused') expect(res.status, raw).toBe(error.code === 'policy_refused' ? 403 : 422);
    return { outcome, raw, status: res.status };
  }
  expect(res.status, raw).toBe(200);
  return {
    outcome: { kind: 'rows', columns: res.body.columns as string[], rows: res.body.rows as unknown[][] },
    raw,
  };
}

describe('POST /api/sql', () => {
  let server: Server;
  beforeAll(async () => {
    server = await startServer();
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it.each(CORPUS)('$id: $expect', async (entry) => {
    check('POST /api/sql', entry, httpOutcome(await server.request('/api/sql', { sql: entry.sql })));
  });

  it('records every statement, run or refused, with the front end and the policies', async () => {
    const records = (await server.audit()).filter((r) => r.frontEnd === 'http');
    expect(records.length).toBeGreaterThanOrEqual(CORPUS.length);
    const refused = records.find((r) => r.sql === 'SELECT salary FROM employees');
    expect(refused).toMatchObject({ outcome: 'refused', code: 'policy_refused', question: null });
    expect(refused?.policies.join(' ')).toMatch(SAM_POLICIES);
    const ran = records.find((r) => r.outcome === 'ran' && /FROM orders/.test(r.sql));
    expect(ran?.policies.join(' ')).toMatch(SAM_POLICIES);
    expect(ran?.rowCount).toEqual(expect.any(Number));
  });
});

describe('ask (POST /api/ask, the scripted model writes the statement)', () => {
  let server: Server;
  /** Entries whose SQL prompt held a hidden value, with the lines that held it. */
  const leakyPrompts: string[] = [];
  beforeAll(async () => {
    server = await startServer();
  }, 120_000);
  afterAll(async () => {
    await server?.close();
  });

  it.each(CORPUS)('$id: $expect', async (entry) => {
    modelSql = entry.sql;
    const before = prompts.length;
    const res = await server.request('/api/ask', { question: `hostile case ${entry.id}`, skipAnswer: true });
    check('ask', entry, httpOutcome(res));
    const shown = withoutStatement(prompts.slice(before).join('\n'), entry.sql);
    if (leaks(shown)) leakyPrompts.push(`${entry.id}: ${shown.split('\n').filter(leaks).join(' | ')}`);
  });

  // A child table of a policed table (`orders_archive`, INHERITS orders) is hidden from sam's
  // schema with its sampled values: no hidden value may reach any prompt.
  it('the prompts the model saw hold no hidden value', () => {
    expect(leakyPrompts).toEqual([]);
  });

  it('records the question, the final SQL, the policies and the row count', async () => {
    const records = (await server.audit()).filter((r) => r.frontEnd === 'http');
    const question = `hostile case ${CORPUS.find((e) => e.id === 'plain-count')?.id}`;
    const ran = records.find((r) => r.question === question && r.outcome === 'ran');
    expect(ran).toMatchObject({ origin: 'model', rowCount: 1 });
    expect(ran?.sql).toMatch(/count\(\*\)/i);
    expect(ran?.policies.join(' ')).toMatch(SAM_POLICIES);
    // The model's statement names a column sam's schema lacks: refused before it runs and sent
    // back for repair; the scripted model writes it again, and the policy refuses it.
    const refused = records
      .filter((r) => r.question === 'hostile case col-select')
      .map((r) => [r.origin, r.outcome, r.code, r.sql]);
    expect(refused).toEqual(
      expect.arrayContaining([
        ['model', 'refused', 'unknown_name', 'SELECT salary FROM employees'],
        ['repair', 'refused', 'policy_refused', 'SELECT salary FROM employees'],
      ]),
    );
  });
});

describe('MCP sql (in-process client and server)', () => {
  let client: Client;
  let close: () => Promise<void>;
  let config: Config;
  let lease: RuntimeLease;

  beforeAll(async () => {
    config = loadConfig({ env: settings(), cwd: home, flags: {} });
    // Kept open for the whole corpus (a desktop client's server releases it between calls).
    lease = new RuntimeLease(() => new Runtime(config), false);
    const server = createMcpServer({
      config,
      runtime: lease,
      maxBytes: DEFAULT_MCP_MAX_BYTES,
      log: () => {},
      version: 'test',
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    client = new Client({ name: 'policy-frontends', version: '1.0.0' });
    await client.connect(clientSide);
    let closed = false;
    close = async () => {
      if (closed) return;
      closed = true;
      await client.close();
      await server.close();
      await lease.close();
    };
  }, 120_000);
  afterAll(async () => {
    await close?.();
  });

  const call = async (name: string, args: Record<string, unknown>): Promise<FrontOutcome> => {
    const result = (await client.callTool({ name, arguments: args })) as CallToolResult;
    const first = result.content[0];
    const raw = first?.type === 'text' ? first.text : JSON.stringify(result.content);
    const doc = JSON.parse(raw) as Record<string, unknown>;
    if (result.isError) return { outcome: fromError(doc.error as { code: string; message: string }), raw };
    return {
      outcome: { kind: 'rows', columns: doc.columns as string[], rows: doc.rows as unknown[][] },
      raw,
    };
  };

  it.each(CORPUS)('$id: $expect', async (entry) => {
    check('MCP sql', entry, await call('sql', { sql: entry.sql }));
  });

  it('records the statements of the sql and ask tools, with the question', async () => {
    modelSql = 'SELECT count(*) AS n FROM customers';
    const asked = await call('ask', { question: 'how many customers may I see?', answer: false });
    expect(asked.raw).toMatch(/"rows":\[\["2"\]\]/);
    // The runtime's journal moves to the audit table that `sqlrecall audit` opens.
    await close();
    const run = await runCliInProcess(['audit', '--json', '--user', 'sam', '--limit', '1000'], {
      env: settings(),
    });
    expect(run.code, run.stderr).toBe(0);
    const records = (JSON.parse(run.stdout) as { records: AuditRecord[] }).records;
    const mcp = records.filter((r) => r.frontEnd === 'mcp');
    expect(mcp.length).toBeGreaterThanOrEqual(CORPUS.length + 1);
    expect(mcp.find((r) => r.question === 'how many customers may I see?')).toMatchObject({
      outcome: 'ran',
      origin: 'model',
      rowCount: 1,
      policies: expect.arrayContaining([expect.stringMatching(SAM_POLICIES)]),
    });
    expect(mcp.find((r) => r.sql === 'SELECT salary FROM employees')).toMatchObject({
      outcome: 'refused',
      code: 'policy_refused',
      question: null,
    });
  });
});
