/**
 * Composition root: turns a {@link Config} into concrete models, connectors and the Assistant.
 * Only this layer picks adapters; everything else receives interfaces.
 */
import { join } from 'node:path';
import type { Assistant } from '../agent/assistant.js';
import { type AuditContext, AuditLog } from '../audit/log.js';
import type { Config } from '../config/config.js';
import type { StatementListener } from '../core/audit.js';
import { isSqlrecallError, SqlrecallError } from '../core/errors.js';
import type { ChatModel, DatabaseConnector, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { openDatabase } from '../databases/open.js';
import type { SqlClient } from '../memory/store/index.js';
import { withFirstTokenTimeout } from '../models/first-token-timeout.js';
import type { PolicyUserContext } from '../policy/resolve.js';
import type { PolicyEvent, PolicySource } from '../policy/source.js';
import { type EffectivePolicy, restrictsData, unrestrictedPolicy } from '../policy/types.js';
import { onlyAllowedTables } from '../sql/allowlist.js';
import type { MemoryRuntime, OpenMemoryOptions } from './memory-runtime.js';
import { type ContextLengthSource, type ModelProvider, modelProviderFor } from './models.js';
import type { SchemaLinking, SchemaLinkingHooks } from './schema-linking.js';

// The question pipeline, the memory store and schema linking are imported when first needed
// (to keep process start short): a command that fails on its configuration, or never asks a
// question, does not load the SQL parser, the memory store or the linker.

/**
 * `source` with the context length of `model` already requested: the first
 * `contextLength(model)` call gets that early request's outcome (value or error, so no call is
 * added), later calls ask `source` again.
 */
function withEarlyContextLength(source: ContextLengthSource, model: string): ContextLengthSource {
  let early: Promise<number | undefined> | undefined = source.contextLength(model);
  early.catch(() => {}); // handled by the caller that takes it (schema linking: "unknown")
  return {
    contextLength(wanted) {
      if (early && wanted === model) {
        const taken = early;
        early = undefined;
        return taken;
      }
      return source.contextLength(wanted);
    },
  };
}

/**
 * A new audit log of `config`: its journal under the home folder's `audit`, its retention. A
 * command that opens no memory store leaves its records in the journal for the next one that does.
 */
export function auditLogFor(config: Config): AuditLog {
  return new AuditLog({ dir: join(config.home, 'audit'), retentionDays: config.auditRetentionDays });
}

/** Where `sqlrecall demo` keeps its embedded shop database. */
export function demoDatabaseDir(config: Config): string {
  return join(config.home, 'demo-shop');
}

/** Decides one user's data policy (see {@link Runtime.setPolicyResolver}). */
export type PolicyResolver = (user: string, options: { team?: string; admin?: boolean }) => EffectivePolicy;

/** Live objects built from a configuration; `close()` releases them. */
export class Runtime {
  private db: Promise<DatabaseConnector> | undefined;
  private policyResolver: PolicyResolver | undefined;
  /** The data-policy catalog facts of the open database, shared by every user's view of it. */
  private policyCatalogs:
    | { db: DatabaseConnector; cache: import('../databases/policed.js').PolicyCatalogCache }
    | undefined;
  private chatModel: ChatModel | undefined;
  private memoryRuntime: Promise<MemoryRuntime> | undefined;
  private policies: Promise<PolicySource> | undefined;
  private policyEvents: ((event: PolicyEvent) => void) | undefined;
  private auditLog: AuditLog | undefined;

  /**
   * `warn` receives one-line notices for the user (e.g. on stderr); `thinking` every piece of a
   * thinking model's reasoning as it streams (chat `--show-thinking`), never part of an answer.
   */
  constructor(
    readonly config: Config,
    private readonly hooks: { warn?: (message: string) => void; thinking?: (text: string) => void } = {},
  ) {}

  /**
   * The memory store, embedding model and memory service, opened once (see `memory-runtime.ts`).
   * When it was opened while the model server was down, each later call lets it re-probe the
   * embedding model (at most once per back-off, in the background), so a long-running server or
   * MCP process applies its queue once the model server is back, without a restart.
   * @throws SqlrecallError `memory_embedding_mismatch` (exit 2), `memory_store`, `model_*`
   */
  memory(options: Omit<OpenMemoryOptions, 'chat'> = {}): Promise<MemoryRuntime> {
    const open = this.memoryRuntime;
    if (open)
      return open.then((memory) => {
        if (!memory.canEmbed) void memory.recoverEmbedding();
        return memory;
      });
    const verbose = this.config.logLevel === 'info' || this.config.logLevel === 'debug';
    const log = (message: string, details: Record<string, unknown>) => {
      if (verbose) this.hooks.warn?.(`memory: ${message} ${JSON.stringify(details)}`);
    };
    const chat = this.chat();
    const opening = import('./memory-runtime.js').then(({ openMemory }) =>
      openMemory(this.config, {
        chat,
        log,
        // The queue applied after a recovery is checked against the database when there is one.
        queueSchema: () => (this.config.databaseUrl ? this.catalog() : Promise.resolve(undefined)),
        ...options,
      }),
    );
    this.memoryRuntime = opening;
    // The audit table lives beside the memories: records wait in the journal until it is open.
    opening.then(
      (memory) => memory.store.sql().then((client) => this.attachAudit(client)),
      () => undefined,
    );
    opening.catch(() => {
      if (this.memoryRuntime === opening) this.memoryRuntime = undefined;
    });
    return this.memoryRuntime;
  }

  /**
   * The memory for the question pipeline, or undefined when memory is switched off (`--no-memory`)
   * or the embedding model is not pulled (then a warning says how to get it; answers still work).
   */
  private async pipelineMemory(
    warn: ((message: string) => void) | undefined = this.hooks.warn,
  ): Promise<MemoryRuntime | undefined> {
    if (!this.config.memoryEnabled) return undefined;
    try {
      return await this.memory();
    } catch (error) {
      // Model server down: open the store anyway (its saved examples answer without the
      // model); the question itself then fails over to examples and rules.
      if (isSqlrecallError(error, 'model_unreachable'))
        return await this.memory({ allowWithoutEmbeddings: true }).catch(() => undefined);
      if (!isSqlrecallError(error, 'model_missing')) throw error;
      warn?.(
        `Long-term memory is off for this run: the embedding model ${this.config.embedModel} is not available (${this.provider().hints.install(this.config.embedModel)}).`,
      );
      return undefined;
    }
  }

  /** The chat model (created lazily; no network until used). */
  chat(): ChatModel {
    // A model that gives no first token in time fails with model_timeout (fallback path).
    this.chatModel ??= showThinking(
      withFirstTokenTimeout(
        this.provider().chatModel(),
        this.config.modelTimeoutMs,
        this.config.modelIdleTimeoutMs,
      ),
      this.hooks.thinking,
    );
    return this.chatModel;
  }

  /**
   * The configured model backend (Ollama or an OpenAI-compatible server): health, models, context
   * window, administration and the hints naming it. Chosen once from the configuration.
   */
  provider(): ModelProvider {
    return modelProviderFor(this.config);
  }

  /**
   * The user's database, opened once.
   * @throws SqlrecallError `config` when no database is configured; `db_unreachable`.
   */
  database(): Promise<DatabaseConnector> {
    const url = this.config.databaseUrl;
    if (!url) {
      return Promise.reject(
        new SqlrecallError(
          'config',
          'No database is configured: set DATABASE_URL or pass --db postgres://user@host/dbname (or pglite:DIR).',
          { details: { hint: 'Try the embedded demo shop with `sqlrecall demo`.' } },
        ),
      );
    }
    if (!this.db) {
      // Every statement is judged against this database's catalog first.
      const opening = Promise.all([
        openDatabase(url, { schemas: this.config.schemas, allowTables: this.config.allowTables }),
        import('../sql/function-policy.js'),
      ]).then(([db, { withFunctionPolicy }]) =>
        // The function policy reads PostgreSQL's catalog; MySQL's guard judges functions itself.
        db.dialect === 'postgres'
          ? withFunctionPolicy(db, { allowFunctions: this.config.allowFunctions })
          : db,
      );
      this.db = opening;
      opening.catch(() => {
        if (this.db === opening) this.db = undefined;
      });
    }
    return this.db;
  }

  /**
   * Replaces the policy file as the source of each user's data policy (an embedding application,
   * or a test); `undefined` goes back to the policy file.
   */
  setPolicyResolver(resolver: PolicyResolver | undefined): void {
    this.policyResolver = resolver;
  }

  /**
   * The database as `user` may read it: every statement rewritten for their data policy and
   * checked again, the catalog without what the policy hides (`databases/policed.ts`). The
   * database itself when the policy restricts nothing.
   * @throws as {@link database}
   */
  async databaseFor(
    user: string,
    options: { team?: string; admin?: boolean } = {},
  ): Promise<DatabaseConnector> {
    const db = await this.database();
    const policy = await this.policyFor(user, options);
    if (!restrictsData(policy)) return db;
    const { policyCatalogCache, withDataPolicy } = await import('../databases/policed.js');
    if (this.policyCatalogs?.db !== db) this.policyCatalogs = { db, cache: policyCatalogCache(db) };
    return withDataPolicy(db, policy, this.policyCatalogs.cache);
  }

  /**
   * The catalog of the user's database, in the configured schemas, read now (each call reads it
   * again; the Assistant keeps the one its questions use).
   * @throws SqlrecallError `config` (no database), `db_*`
   */
  async catalog(): Promise<Schema> {
    const schemas = this.config.schemas;
    const db = await this.database();
    const schema = onlyAllowedTables(
      await db.introspect({ schemas: schemas.length ? schemas : undefined }),
      this.config.allowTables,
    );
    // Under a data policy, each user's view of this catalog hides what enforcement refuses (views
    // over restricted tables, …): that needs the catalog facts enforcement reads.
    if ((this.config.policy || this.policyResolver) && db.dialect === 'postgres') {
      const { attachPolicyFacts, policyCatalogCache } = await import('../databases/policed.js');
      if (this.policyCatalogs?.db !== db) this.policyCatalogs = { db, cache: policyCatalogCache(db) };
      await attachPolicyFacts(schema, this.policyCatalogs.cache);
    }
    return schema;
  }

  /**
   * Schema linking wired exactly as the question pipeline's (see {@link assistant}): its index
   * beside the memories when memory is on and the store opens, so every front end and every later
   * run reuse it, else in process memory; dense similarity only when the memory store can embed;
   * the context window from the configured provider. `hooks` get this linking's index-build
   * progress and warnings (a memory store that stays closed included); default warnings go to the
   * runtime's `warn`.
   * @throws SqlrecallError `config` (no database), `db_unreachable`, `memory_*` (as `assistant()`)
   */
  async schemaLinking(hooks: SchemaLinkingHooks = {}): Promise<SchemaLinking> {
    const warn = hooks.onWarning ?? this.hooks.warn;
    const [db, memory, { createSchemaLinking }] = await Promise.all([
      this.database(),
      this.pipelineMemory(warn),
      import('./schema-linking.js'),
    ]);
    return this.linkingOver(createSchemaLinking, db, memory, this.provider(), {
      ...(hooks.onProgress ? { onProgress: hooks.onProgress } : {}),
      ...(warn ? { onWarning: warn } : {}),
    });
  }

  /** The one wiring of schema linking, shared by the question pipeline and {@link schemaLinking}. */
  private async linkingOver(
    create: typeof import('./schema-linking.js').createSchemaLinking,
    db: DatabaseConnector,
    memory: MemoryRuntime | undefined,
    admin: ContextLengthSource,
    hooks: SchemaLinkingHooks,
  ): Promise<SchemaLinking> {
    return create({
      config: this.config,
      db,
      admin,
      sql: memory ? await memory.store.sql() : undefined,
      embedding: pipelineEmbedder(memory),
      ...hooks,
    });
  }

  /**
   * An Assistant over the configured database and chat model, with long-term memory unless it is
   * off. Writes left pending by an earlier run (a crash between answer and memory write) are
   * applied first.
   *
   * `options.prefetchContextLength` (a one-shot question, `ask`): the model's context length —
   * the first model call a question makes, from schema linking — is requested at once, before the
   * databases open, instead of once the catalog is read. Default off: a long-lived
   * runtime (`chat`, `serve`) would otherwise call the model server before any question, and keep
   * a failure from a server that comes up later.
   */
  async assistant(options: { prefetchContextLength?: boolean } = {}): Promise<Assistant> {
    if (!this.config.databaseUrl) await this.database(); // fails fast with the how-to, before opening memory
    // With `prefetchContextLength`, the model's context length (schema linking's first model call,
    // made once the catalog is read) is requested now, before the databases open: the
    // HTTP client compiles its parser (WebAssembly, synchronously) on its first connection, and
    // doing that while V8 compiles PGlite's 9 MB module stalled the process for ≈ 350 ms.
    const contextSource = this.provider();
    const contextLength = options.prefetchContextLength
      ? withEarlyContextLength(contextSource, this.config.model)
      : contextSource;
    this.chat(); // its adapter module loads now, not while PGlite compiles (see `createChatModelFor`)
    const pipeline = Promise.all([
      import('../agent/assistant.js'),
      import('../agent/memory-hook.js'),
      import('./schema-linking.js'),
    ]);
    // Every question's SQL goes through the guard, whose parser is WebAssembly too: its load (file
    // read, compile) starts now, beside the databases', instead of after them.
    // A failed load is retried, and reported, by the guard's own call.
    import('../sql/parse-tree.js').then(({ loadSqlParser }) => loadSqlParser()).catch(() => {});
    pipeline.catch(() => {}); // awaited below, unless opening a database fails first
    // Both open a PGlite data directory (a second or two each): in parallel.
    const [db, memory] = await Promise.all([this.database(), this.pipelineMemory()]);
    const [{ Assistant }, { createMemoryHook }, { createSchemaLinking }] = await pipeline;
    // Schema linking: its index lives beside the memories when the store is open, so it
    // survives the process; otherwise it is kept in process memory.
    const linking = await this.linkingOver(createSchemaLinking, db, memory, contextLength, {
      onWarning: (message) => this.hooks.warn?.(message),
    });
    const assistant = new Assistant({
      modelStartHint: this.provider().hints.start,
      planContext: linking.planner,
      memory: memory ? createMemoryHook({ service: memory.service, chat: this.chat() }) : undefined,
      chat: this.chat(),
      db,
      databaseFor: (user, options) => this.databaseFor(user, options),
      loadSchema: () => this.catalog(),
      maxRows: this.config.maxRows,
      statementTimeoutMs: this.config.statementTimeoutMs,
      maxResultBytes: this.config.maxResultBytes,
      maxRepairs: this.config.maxRepairs,
      allowTables: this.config.allowTables,
      sqlMaxTokens: this.config.maxSqlTokens,
      // Saved examples answer without the model when it is down or `--no-model`.
      examples: memory?.store,
      // Answers without the model never skip a standing preference.
      ...(memory ? { preferences: memory.store } : {}),
      // Few-shot: the user's similar examples go into the SQL prompt.
      ...(memory?.embeddingRecoverable ? { exampleEmbedder: memory.embedder } : {}),
      exampleMatch: {
        minEmbeddingSimilarity: this.config.exampleMinSimilarity,
        minWordSimilarity: this.config.exampleMinWordSimilarity,
      },
      fewShotMax: this.config.fewShotMax,
    });
    if (memory) {
      const { schema } = await assistant.schema();
      const recovered = await memory.service.recoverPending({ schema });
      if (recovered.applied > 0)
        this.hooks.warn?.(`Applied ${recovered.applied} memory write(s) left pending by an earlier run.`);
      if (recovered.failed > 0)
        this.hooks.warn?.(
          `${recovered.failed} pending memory write(s) could not be applied yet; will retry.`,
        );
    }
    return assistant;
  }

  /**
   * The configured policy file (`SQLRECALL_POLICY`, `--policy`), opened once; undefined when none
   * is configured. Loading modules only: the file is read by the first `current()` or `reload()`.
   */
  async policySource(): Promise<PolicySource | undefined> {
    const path = this.config.policy;
    if (!path) return undefined;
    this.policies ??= import('../policy/source.js').then(
      ({ PolicySource }) =>
        new PolicySource(path, (event) =>
          (this.policyEvents ?? ((e: PolicyEvent) => this.hooks.warn?.(e.message)))(event),
        ),
    );
    return this.policies;
  }

  /**
   * What `user` may read: the policy file's rules for them (see `policy/resolve.ts`), or
   * everything the connection role can read when no policy file is configured. `context.team` is
   * the user's registered team (users table or `--team`), used when the file has no entry for them.
   * @throws SqlrecallError `config` when a policy file is configured but has not been valid since
   *   this process started (nobody reads unrestricted because of a broken file)
   */
  async policyFor(user: string, context: PolicyUserContext = {}): Promise<EffectivePolicy> {
    if (this.policyResolver) return this.policyResolver(user, context);
    const source = await this.policySource();
    if (!source) return unrestrictedPolicy(user, context.admin ?? false);
    const [document, { effectivePolicy }] = await Promise.all([
      source.current(),
      import('../policy/resolve.js'),
    ]);
    return effectivePolicy(document, user, context);
  }

  /**
   * A long-running front end (`serve`): loads the policy file now and reloads it whenever it
   * changes, sending each load, reload and failure to `onEvent` (its log). No-op without a policy
   * file. Never throws: an invalid file at start is reported through `onEvent` and
   * {@link PolicySource.status}, and statements are refused until it is fixed.
   */
  async watchPolicy(onEvent: (event: PolicyEvent) => void): Promise<void> {
    this.policyEvents = onEvent;
    const source = await this.policySource();
    if (!source) return;
    await source.reload().catch(() => {});
    source.watch();
  }

  /**
   * The audit trail of this process (created on first use): every statement run or refused for a
   * user goes to its journal at once and to the audit table once one is attached.
   */
  audit(): AuditLog {
    this.auditLog ??= auditLogFor(this.config);
    return this.auditLog;
  }

  /** The listener that records the statements of one question or request for `context`. */
  auditListener(context: AuditContext): StatementListener {
    return this.audit().listener(context);
  }

  /**
   * Moves audit records to the table on `client` (the memory store's database) from now on:
   * prunes past the retention and takes over the journals of finished processes. Never throws.
   */
  async attachAudit(client: SqlClient): Promise<void> {
    const { AuditStore } = await import('../audit/store.js');
    await this.audit().attach(new AuditStore(client));
  }

  /** Closes the database connection and the memory store, if they were opened. */
  async close(): Promise<void> {
    // Audit records go to the table before the store closes (those that cannot stay in the journal).
    await this.auditLog?.close();
    const db = this.db;
    this.db = undefined;
    if (db) await db.then((d) => d.close()).catch(() => {});
    const memory = this.memoryRuntime;
    this.memoryRuntime = undefined;
    if (memory) await memory.then((m) => m.store.close()).catch(() => {});
    const policies = this.policies;
    this.policies = undefined;
    if (policies) await policies.then((p) => p.close()).catch(() => {});
  }
}

/**
 * The embedder the question pipeline passes to few-shot examples and dense schema linking: the
 * memory runtime's own, which re-probes a model server that was down, so both recover with memory
 * instead of staying without embeddings until a restart; none when memory is off or its store is
 * recorded with another model (embedding cannot come back without `memory reembed`).
 */
export function pipelineEmbedder(memory: MemoryRuntime | undefined): EmbeddingModel | null {
  return memory?.embeddingRecoverable ? memory.embedder : null;
}

/** `chat` whose streamed reasoning also goes to `onThinking` (when given). */
function showThinking(chat: ChatModel, onThinking: ((text: string) => void) | undefined): ChatModel {
  if (!onThinking) return chat;
  return {
    id: chat.id,
    async *stream(request, options) {
      for await (const part of chat.stream(request, options)) {
        if (part.type === 'reasoning-delta') onThinking(part.text);
        yield part;
      }
    },
  };
}
