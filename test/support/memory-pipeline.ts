/**
 * An in-process question pipeline with memory for tests: the small shop on PGlite, an in-memory
 * memory store, and a scripted model whose memory replies follow simple rules:
 * - extraction: "… customers from X" → preference `customers.country = 'X'`; "only <status> orders"
 *   → preference `orders.status = '<status>'`; "… all statuses …" → preference without SQL on
 *   orders.status; "<term> means total amount over N" → term `orders.total_amount > N`;
 * - reconciliation: `reconcileReply` (default SUPERSEDE of candidate 1);
 * - SQL: `sqlReply(prompt)` set by each test (default a count of orders);
 * - answers: "ok."
 * Every SQL prompt is recorded in `sqlPrompts`.
 */
import { Assistant } from '../../src/agent/assistant.js';
import { createMemoryHook } from '../../src/agent/memory-hook.js';
import { SQL_PROMPT_MARKER } from '../../src/agent/prompts.js';
import type { DatabaseConnector } from '../../src/core/ports.js';
import type { AskOutcome, Step } from '../../src/core/steps.js';
import { openDatabase } from '../../src/databases/open.js';
import { MemoryService } from '../../src/memory/service.js';
import { createMemoryStore, type SqlMemoryStore } from '../../src/memory/store/index.js';
import { createOllamaChatModel } from '../../src/models/ollama/chat-model.js';
import { createOllamaEmbeddingModel } from '../../src/models/ollama/embedding-model.js';
import { type Fixture, pgliteShop } from './fixtures.js';
import { factsReply, messageOf } from './memory-fixtures.js';
import type { ScriptedChatRequest, ScriptedOllama, ScriptedReply } from './scripted/server.js';
import { startScriptedOllama } from './scripted/server.js';

/** Extraction reply for a message, by the rules in the module documentation. */
export function extractionFor(message: string): string {
  const facts: { kind: string; text: string; sql?: string | null; columns?: string[] }[] = [];
  const country = /customers from ([\p{L}' -]+?)(?:[.!?]|$)/iu.exec(message)?.[1];
  if (country)
    facts.push({
      kind: 'preference',
      text: message,
      sql: `customers.country = '${country.replace(/'/g, "''")}'`,
    });
  const status = /only (\w+) orders/i.exec(message)?.[1];
  if (status) facts.push({ kind: 'preference', text: message, sql: `orders.status = '${status}'` });
  if (/all statuses/i.test(message))
    facts.push({ kind: 'preference', text: message, columns: ['orders.status'] });
  const term = /^(.+?) means total amount over (\d+)/i.exec(message);
  if (term) facts.push({ kind: 'term', text: message, sql: `orders.total_amount > ${term[2]}` });
  return factsReply(...facts);
}

/**
 * Compile reply (`memory-compile` purpose) for a taught fact, by the same rules as
 * {@link extractionFor}: the SQL of the first fact those rules find, else `null`.
 */
export function compileFor(prompt: string): string {
  const fact = /<fact>\n([\s\S]*?)\n<\/fact>/.exec(prompt)?.[1] ?? '';
  const facts = JSON.parse(extractionFor(fact)).facts as { sql: string | null }[];
  return JSON.stringify({ sql: facts.find((f) => f.sql)?.sql ?? null });
}

/** A running in-process pipeline. */
export interface MemoryPipeline {
  server: ScriptedOllama;
  store: SqlMemoryStore;
  service: MemoryService;
  assistant: Assistant;
  db: DatabaseConnector;
  /** Every SQL prompt (system + user text), in order. */
  sqlPrompts: string[];
  /** Replies to SQL prompts; default a count of orders. */
  sqlReply: (prompt: string, request: ScriptedChatRequest) => ScriptedReply;
  /** Reply to reconciliation prompts; default SUPERSEDE 1. */
  reconcileReply: () => ScriptedReply;
  ask(
    user: string,
    message: string,
    options?: { conversationId?: string; without?: string[]; team?: string; confirmDeletes?: boolean },
  ): Promise<{ steps: Step[]; outcome: AskOutcome }>;
  close(): Promise<void>;
}

/**
 * Starts the pipeline (shop database, in-memory store, scripted model). `embed` replaces the
 * scripted server's embedding of a text (default its hash embedding).
 */
export async function startMemoryPipeline(
  options: { embed?: (text: string) => number[] } = {},
): Promise<MemoryPipeline> {
  const fixture: Fixture = await pgliteShop();
  const state = {
    sqlReply: (_prompt: string, _request: ScriptedChatRequest): ScriptedReply =>
      '```sql\nSELECT count(*) AS n FROM orders\n```',
    reconcileReply: (): ScriptedReply => JSON.stringify({ action: 'SUPERSEDE', id: 1 }),
  };
  const sqlPrompts: string[] = [];
  const server = await startScriptedOllama({
    ...(options.embed ? { embed: options.embed } : {}),
    chat: (request) => {
      const prompt = request.messages.map((m) => m.content).join('\n');
      if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
      if (request.purpose === 'memory-reconcile') return state.reconcileReply();
      if (request.purpose === 'memory-compile') return compileFor(request.lastUserMessage);
      if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
        sqlPrompts.push(prompt);
        return state.sqlReply(prompt, request);
      }
      return 'ok.';
    },
  });
  const db = await openDatabase(fixture.url);
  const store = createMemoryStore();
  const embedder = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
  await store.init({ model: 'all-minilm', dimensions: await embedder.dimensions() });
  const chat = createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' });
  const service = new MemoryService({ store, embedder, chat });
  const assistant = new Assistant({
    chat,
    db,
    loadSchema: () => db.introspect(),
    memory: createMemoryHook({ service, chat }),
  });
  const pipeline: MemoryPipeline = {
    server,
    store,
    service,
    assistant,
    db,
    sqlPrompts,
    get sqlReply() {
      return state.sqlReply;
    },
    set sqlReply(fn) {
      state.sqlReply = fn;
    },
    get reconcileReply() {
      return state.reconcileReply;
    },
    set reconcileReply(fn) {
      state.reconcileReply = fn;
    },
    async ask(user, message, options = {}) {
      const steps: Step[] = [];
      const generator = assistant.ask({ user, message, ...options });
      for (;;) {
        const next = await generator.next();
        if (next.done) return { steps, outcome: next.value };
        steps.push(next.value);
      }
    },
    async close() {
      await store.close().catch(() => undefined);
      await db.close().catch(() => undefined);
      await server.close();
      await fixture.close();
    },
  };
  return pipeline;
}
