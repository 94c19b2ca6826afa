/**
 * Wires schema linking from a {@link Config}: the configured embedding model, the chat
 * model's context window from the model provider, value sampling through the user's database connector, and the
 * index store — the shared memory database when the caller passes its SQL client, else in memory.
 * The index is keyed by the database fingerprint, known after the first introspection.
 */
import { type ContextPlanner, createSchemaLinkingPlanner } from '../agent/context.js';
import type { Config } from '../config/config.js';
import type { DatabaseConnector, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { resolveContextTokens } from '../linking/budget.js';
import { databaseFingerprint } from '../linking/documents.js';
import { PgSchemaIndexStore, type SchemaIndexSql } from '../linking/pg-store.js';
import type { LinkedContext, PlanExtras } from '../linking/planner.js';
import { SchemaIndex } from '../linking/schema-index.js';
import { InMemorySchemaIndexStore, type SchemaIndexStore } from '../linking/store.js';
import { createValueSampler } from '../linking/value-hints.js';
import { type ContextLengthSource, modelProviderFor } from './models.js';

/** Options of {@link createSchemaLinking}. */
export interface SchemaLinkingOptions {
  config: Config;
  /** The user's database (value sampling runs through its READ ONLY `execute`). */
  db: DatabaseConnector;
  /** For the model's context length; without it the window is `config.numCtx` or 4,096. */
  admin?: ContextLengthSource;
  /**
   * The memory store's SQL client (`src/memory/store/sql-client.ts` fits): the index then lives in
   * its `schema_index` table and survives the process. Default: in process memory.
   */
  sql?: SchemaIndexSql;
  /** Embedding model; default the configured one (`SQLRECALL_EMBED_MODEL`). `null`: lexical only. */
  embedding?: EmbeddingModel | null;
  /** Reply reserve in tokens; default 1024 (the Assistant's `sqlMaxTokens` default). */
  answerReserveTokens?: number;
  /** Build progress (tables done of tables to index), e.g. a progress bar on stderr. */
  onProgress?: (done: number, total: number) => void;
  /** Non-fatal problems (embedding model down, a table that cannot be sampled). */
  onWarning?: (message: string) => void;
}

/** Who hears of one linking's index build and its non-fatal problems. */
export type SchemaLinkingHooks = Pick<SchemaLinkingOptions, 'onProgress' | 'onWarning'>;

/** Schema linking for one database. */
export interface SchemaLinking {
  /** The planner with every detail (reasons, tokens, degradations). */
  plan(question: string, schema: Schema, extras?: PlanExtras): Promise<LinkedContext>;
  /** The same as the Assistant's `planContext` hook. */
  planner: ContextPlanner;
  /** The window the prompt must fit, in tokens (resolved once). */
  contextTokens(): Promise<number>;
}

/**
 * Creates the linking for `db`. Nothing runs until the first `plan` call, which syncs the index.
 * The lead wires it as `new Assistant({ …, planContext: linking.planner })`.
 */
export function createSchemaLinking(options: SchemaLinkingOptions): SchemaLinking {
  const { config, db } = options;
  const store: SchemaIndexStore = options.sql
    ? new PgSchemaIndexStore(options.sql)
    : new InMemorySchemaIndexStore();
  const embedding =
    options.embedding === null ? undefined : (options.embedding ?? modelProviderFor(config).embeddingModel());
  const sampler = createValueSampler(db, {
    onError: (table) =>
      options.onWarning?.(
        `Could not sample values of ${table.schema}.${table.name}; it gets no value hints.`,
      ),
  });
  let window: Promise<number> | undefined;
  const contextTokens = (): Promise<number> => {
    window ??= (async () => {
      let trained: number | undefined;
      if (options.admin) {
        try {
          trained = await options.admin.contextLength(config.model);
        } catch {
          trained = undefined; // the chat call reports an unreachable server itself
        }
      }
      return resolveContextTokens(config.numCtx, trained);
    })();
    return window;
  };
  const indexes = new Map<string, ReturnType<typeof createSchemaLinkingPlanner>>();
  const plannerFor = (schema: Schema) => {
    const fingerprint = databaseFingerprint({
      displayName: db.displayName,
      database: schema.database,
      schemas: schema.schemas,
    });
    let planner = indexes.get(fingerprint);
    if (!planner) {
      const index = new SchemaIndex({
        store,
        fingerprint,
        embedding,
        sampler,
        onProgress: options.onProgress,
        onWarning: options.onWarning,
      });
      planner = createSchemaLinkingPlanner({
        index,
        contextTokens,
        answerReserveTokens: options.answerReserveTokens ?? 1024,
      });
      indexes.set(fingerprint, planner);
    }
    return planner;
  };
  const plan = async (question: string, schema: Schema, extras?: PlanExtras) =>
    (await plannerFor(schema)(question, schema, extras)) as LinkedContext;
  return { plan, planner: plan, contextTokens };
}
