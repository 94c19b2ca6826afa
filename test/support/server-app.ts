/**
 * An in-process HTTP API for tests: the small shop on PGlite, a scripted model (memory rules of
 * `memory-pipeline.ts`), the embedded memory store in a temp home, and `createApp` over the real
 * Runtime wiring. SQL replies: a revenue-per-customer query, filtered to India when the prompt
 * carries the India preference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { createParser } from 'eventsource-parser';
import { SQL_PROMPT_MARKER } from '../../src/agent/prompts.js';
import { UserDirectory } from '../../src/app/users.js';
import { loadConfig } from '../../src/config/config.js';
import { memoryClient } from '../../src/runtime/memory-runtime.js';
import { Runtime } from '../../src/runtime/runtime.js';
import { createApp } from '../../src/server/app.js';
import type { AppEnv } from '../../src/server/context.js';
import type { AccessLogEntry, AuthMode } from '../../src/server/deps.js';
import { depsFromRuntime } from '../../src/server/runtime-deps.js';
import { type Fixture, pgliteShop } from './fixtures.js';
import { messageOf } from './memory-fixtures.js';
import { compileFor, extractionFor } from './memory-pipeline.js';
import type { ScriptedOllama, ScriptedReply } from './scripted/server.js';
import { startScriptedOllama } from './scripted/server.js';

/** Revenue per customer, with or without the India filter. */
export function revenueSql(india: boolean): string {
  return [
    'SELECT c.name, sum(o.total_amount) AS revenue FROM customers c JOIN orders o ON o.customer_id = c.id',
    india ? "WHERE c.country = 'India'" : '',
    'GROUP BY c.name ORDER BY c.name',
  ]
    .filter(Boolean)
    .join(' ');
}

/** A running test server. */
export interface TestServer {
  app: OpenAPIHono<AppEnv>;
  model: ScriptedOllama;
  users: UserDirectory;
  runtime: Runtime;
  logs: AccessLogEntry[];
  /** SQL prompts seen by the model, in order. */
  sqlPrompts: string[];
  /** Another app on the same runtime and store with other authentication (e.g. local mode). */
  appFor(auth: AuthMode): OpenAPIHono<AppEnv>;
  /** Overrides the SQL reply (default: {@link revenueSql} by the India preference). */
  sqlReply?: (prompt: string) => ScriptedReply;
  close(): Promise<void>;
}

/** Starts a test server in `mode` (`users`: token auth; `local`: user `me`). */
export async function startTestServer(
  mode: 'users' | 'local' = 'users',
  /** A server memory database (MEMORY_DATABASE_URL); default the embedded store under a temp home. */
  memoryDatabaseUrl?: string,
): Promise<TestServer> {
  const fixture: Fixture = await pgliteShop();
  const home = mkdtempSync(join(tmpdir(), 'sqlrecall-server-'));
  const sqlPrompts: string[] = [];
  const holder: { sqlReply?: (prompt: string) => ScriptedReply } = {};
  const model = await startScriptedOllama({
    chat: (request) => {
      const prompt = request.messages.map((m) => m.content).join('\n');
      if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
      if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD' });
      if (request.purpose === 'memory-compile') return compileFor(request.lastUserMessage);
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
        sqlPrompts.push(prompt);
        if (holder.sqlReply) return holder.sqlReply(prompt);
        return `\`\`\`sql\n${revenueSql(/customers from India/i.test(prompt))}\n\`\`\``;
      }
      return 'Here is the revenue per customer.';
    },
  });
  const config = loadConfig({
    env: {},
    cwd: home,
    flags: {
      databaseUrl: fixture.url,
      ollamaHost: model.url,
      home,
      user: 'me',
      logLevel: 'silent',
      ...(memoryDatabaseUrl ? { memoryDatabaseUrl } : {}),
    },
  });
  const client = memoryClient(config);
  const runtime = new Runtime(config);
  const users = new UserDirectory(client);
  const auth: AuthMode = mode === 'users' ? { mode: 'users', users } : { mode: 'local', user: 'me' };
  const logs: AccessLogEntry[] = [];
  const deps = depsFromRuntime(runtime, { auth, client, log: (e) => logs.push(e) });
  await deps.assistant();
  const server: TestServer = {
    app: createApp(deps),
    model,
    users,
    runtime,
    logs,
    sqlPrompts,
    appFor: (other) => createApp(depsFromRuntime(runtime, { auth: other, client })),
    get sqlReply() {
      return holder.sqlReply;
    },
    set sqlReply(fn) {
      holder.sqlReply = fn;
    },
    async close() {
      await runtime.close();
      await client.close().catch(() => undefined);
      await model.close();
      await fixture.close();
      rmSync(home, { recursive: true, force: true });
    },
  };
  return server;
}

/** Parses an SSE body into events (name + parsed data), in order, through `eventsource-parser`. */
export function parseSse(text: string): { event: string; data: unknown }[] {
  const events: { event: string; data: unknown }[] = [];
  const parser = createParser({
    onEvent: (message) => events.push({ event: message.event ?? 'message', data: JSON.parse(message.data) }),
  });
  parser.feed(text);
  parser.reset({ consume: true });
  return events;
}

/** An in-process app over the real Runtime in local mode (user `me`, memory off), for HTTP tests. */
export interface LocalApp {
  app: OpenAPIHono<AppEnv>;
  /** `POST /api/ask` with `question` and the given `Accept`. */
  ask(question: string, accept: string, signal?: AbortSignal): Promise<Response>;
  close(): Promise<void>;
}

/**
 * Builds {@link LocalApp} on `databaseUrl` with the model at `ollamaHost` and the data under `home`;
 * `flags` adds or overrides settings (e.g. `statementTimeoutMs`).
 */
export function createLocalApp(options: {
  databaseUrl: string;
  ollamaHost: string;
  home: string;
  flags?: Record<string, string>;
}): LocalApp {
  const config = loadConfig({
    env: {},
    cwd: options.home,
    flags: {
      databaseUrl: options.databaseUrl,
      ollamaHost: options.ollamaHost,
      home: options.home,
      user: 'me',
      logLevel: 'silent',
      memoryEnabled: 'off',
      ...options.flags,
    },
  });
  const client = memoryClient(config);
  const runtime = new Runtime(config);
  const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'local', user: 'me' }, client }));
  return {
    app,
    ask: async (question, accept, signal) =>
      app.request('/api/ask', {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept },
        body: JSON.stringify({ question }),
        ...(signal ? { signal } : {}),
      }),
    close: async () => {
      await runtime.close();
      await client.close().catch(() => undefined);
    },
  };
}
