/**
 * {@link ServerDeps} from a {@link Runtime}: the production wiring of `sqlrecall serve`. The memory
 * store is opened on the caller's SQL client, which also holds the users and tokens tables.
 */
import type { Assistant } from '../agent/assistant.js';
import { sqlLimitsOf } from '../app/run-sql.js';
import { maskUrl } from '../core/redact.js';
import type { SqlClient } from '../memory/store/index.js';
import type { Runtime } from '../runtime/runtime.js';
import type { AccessLogEntry, AuthMode, ComponentHealth, ServerDeps } from './deps.js';

/** Resolves within `ms` or reports that the component did not answer in time. */
async function probe(ms: number, check: () => Promise<unknown>): Promise<ComponentHealth> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
      }),
    ]);
    return { ok: true };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return { ok: false, message: message.replace(/\.?$/, '.') };
  } finally {
    clearTimeout(timer);
  }
}

/** Options of {@link depsFromRuntime}. */
export interface RuntimeDepsOptions {
  auth: AuthMode;
  /** The client the memory store (and the users tables) use. */
  client: SqlClient;
  log?: (entry: AccessLogEntry) => void;
  webRoot?: string;
  allowedHosts?: string[];
}

/** Server dependencies over a runtime. */
export function depsFromRuntime(runtime: Runtime, options: RuntimeDepsOptions): ServerDeps {
  const config = runtime.config;
  const memory = () => runtime.memory({ client: options.client });
  let assistant: Promise<Assistant> | undefined;
  const deps: ServerDeps = {
    auth: options.auth,
    log: options.log,
    webRoot: options.webRoot,
    allowedHosts: options.allowedHosts,
    maxRequestsPerUser: config.maxRequestsPerUser,
    async memory() {
      const m = await memory();
      return { store: m.store, service: m.service, embedder: m.embedder };
    },
    assistant() {
      if (!assistant) {
        // The memory store must be opened on our client before the Assistant opens it.
        const opening = (config.memoryEnabled ? memory().catch(() => undefined) : Promise.resolve()).then(
          () => runtime.assistant(),
        );
        assistant = opening;
        opening.catch(() => {
          if (assistant === opening) assistant = undefined;
        });
      }
      return assistant;
    },
    sql: {
      database: () => runtime.database(),
      // The question pipeline's catalog (read once, renewed by a schema refresh): edited SQL and
      // questions see the same tables.
      catalog: async () => (await (await deps.assistant()).schema()).schema,
      limits: sqlLimitsOf(config),
    },
    async health() {
      const [model, database, mem] = await Promise.all([
        probe(3000, async () => {
          if (!(await runtime.provider().hasModel(config.model)))
            throw new Error(`The chat model ${config.model} is not ${runtime.provider().hints.presentVerb}`);
        }),
        probe(5000, async () => {
          const db = await runtime.database();
          await db.execute('SELECT 1', { maxRows: 1, timeoutMs: 3000 });
        }),
        probe(5000, async () => (await memory()).store.embeddingInfo()),
      ]);
      return { ok: model.ok && database.ok && mem.ok, model, database, memory: mem };
    },
    settings() {
      return {
        model: config.model,
        embedModel: config.embedModel,
        ollamaHost: maskUrl(config.ollamaHost),
        database: config.databaseUrl ? maskUrl(config.databaseUrl) : null,
        memoryStore: options.client.displayName,
        maxRows: config.maxRows,
        memoryEnabled: config.memoryEnabled,
      };
    },
  };
  return deps;
}
