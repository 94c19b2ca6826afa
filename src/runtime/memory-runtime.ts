/**
 * The memory part of the composition root: the store (embedded PGlite under
 * `<SQLRECALL_HOME>/memory`, or the server PostgreSQL of MEMORY_DATABASE_URL), the configured
 * embedding model whose dimension is probed at startup (never hard-coded), and the memory service.
 * A store built with another embedding model or dimension is refused (`memory_embedding_mismatch`,
 * exit 2) until `sqlrecall memory reembed` migrates it.
 */
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { processEnv } from '../config/env.js';
import { isSqlrecallError, SqlrecallError } from '../core/errors.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { parseDatabaseUrl } from '../databases/open.js';
import { MemoryService } from '../memory/service.js';
import {
  createMemoryStore,
  createPgliteClient,
  createPostgresClient,
  type MemoryStoreOptions,
  type SqlClient,
} from '../memory/store/index.js';
import type { EmbeddingInfo, SqlMemoryStore } from '../memory/store/types.js';
import { parseThresholdTable, thresholdsFor } from '../memory/thresholds.js';
import { rememberEmbeddings } from '../models/embedding-memo.js';
import { modelProviderFor } from './models.js';

/** Where the embedded memory store lives. */
export function memoryDataDir(config: Config): string {
  return join(config.home, 'memory');
}

/** Default pool size of a server memory database (per process; see docs/scale-out.md). */
export const DEFAULT_MEMORY_POOL_SIZE = 4;

/**
 * Pool size of a server memory database: `SQLRECALL_MEMORY_POOL_SIZE` (1–200), default
 * {@link DEFAULT_MEMORY_POOL_SIZE}. Read from the environment, next to the validated config.
 * @throws SqlrecallError `config` when it is not a whole number from 1 to 200
 */
export function memoryPoolSize(env: NodeJS.ProcessEnv = processEnv()): number {
  const raw = env.SQLRECALL_MEMORY_POOL_SIZE?.trim();
  if (!raw) return DEFAULT_MEMORY_POOL_SIZE;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > 200) {
    throw new SqlrecallError('config', 'SQLRECALL_MEMORY_POOL_SIZE must be a whole number from 1 to 200.');
  }
  return value;
}

/**
 * Store options from the configuration: MEMORY_DATABASE_URL (postgres:// or pglite:DIR), else the home folder.
 * @throws SqlrecallError `config` for `pglite:` without a directory (or `pglite:memory:`): memories
 *   must outlive the process, and an empty path would have meant the working directory
 */
export function memoryStoreOptions(config: Config): MemoryStoreOptions {
  const url = config.memoryDatabaseUrl;
  if (url && /^pglite:/i.test(url)) {
    const target = parseDatabaseUrl(url);
    const dataDir = target.engine === 'pglite' ? target.dataDir : undefined;
    if (dataDir === undefined)
      throw new SqlrecallError(
        'config',
        'MEMORY_DATABASE_URL=pglite: names no directory: memories must be kept on disk.',
        {
          details: {
            hint: 'Use pglite:DIR (e.g. pglite:./memory), or leave it unset for the store under SQLRECALL_HOME.',
          },
        },
      );
    return { dataDir };
  }
  if (url) return { url, maxConnections: memoryPoolSize() };
  return { dataDir: memoryDataDir(config) };
}

/** An SQL client on the memory store's database of `config` (embedded PGlite or server PostgreSQL). */
export function memoryClient(config: Config): SqlClient {
  const options = memoryStoreOptions(config);
  return options.url
    ? createPostgresClient(options.url, { maxConnections: options.maxConnections })
    : createPgliteClient(options.dataDir);
}

/** The live memory objects. */
export interface MemoryRuntime {
  store: SqlMemoryStore;
  /**
   * The embedder of memory and of the question pipeline (few-shot examples, dense schema
   * linking): the configured model while embedding works; while it is off because the model could
   * not be probed, each call first re-probes (see {@link recoverEmbedding}) and fails fast in
   * between, so every user of it recovers together once the model server is back.
   */
  embedder: EmbeddingModel;
  service: MemoryService;
  /** The embedding model and dimension the store was opened with (or recovered to: see `canEmbed`). */
  readonly embedding: EmbeddingInfo;
  /**
   * False when the embedding model could not be probed and the recorded one was used (read-only
   * use, what is taught is queued). Turns true again when a later re-probe finds the model server
   * back ({@link recoverEmbedding}).
   */
  readonly canEmbed: boolean;
  /**
   * Whether embedding may come back by itself: on now, or off only because the model could not be
   * probed (false for a store recorded with another model, which needs `memory reembed`).
   */
  readonly embeddingRecoverable: boolean;
  /**
   * When embedding is off because the model could not be probed: probes it again, at most once
   * per back-off ({@link DEFAULT_REPROBE_AFTER_MS}; calls in between answer false at once).
   * When it answers with the store's model and dimension (a fresh store is set up with them),
   * embedding is on again and the queued writes of every scope start being applied
   * ({@link queueApplied}). The service's embedder calls it by itself before each embedding, so
   * a long-running server recovers on its next request without a restart.
   * @returns whether embedding works now; never throws (a failed probe is logged)
   */
  recoverEmbedding(): Promise<boolean>;
  /** The application of the queue started by the last recovery (resolved when none). */
  queueApplied(): Promise<{ applied: number; failed: number }>;
}

/** Least time between two probes of a model server that was down: 30 s. */
export const DEFAULT_REPROBE_AFTER_MS = 30_000;

/** Options of {@link openMemory}. */
export interface OpenMemoryOptions {
  /** Chat model for extraction and grey-zone decisions (absent: model-free use only). */
  chat?: ChatModel;
  /**
   * When the embedding model cannot be probed (server down, model not pulled), open the store with
   * the model recorded in it instead of failing: for commands that only read or change statuses.
   */
  allowWithoutEmbeddings?: boolean;
  /**
   * When the model server cannot be reached (`model_unreachable`), open the store anyway with
   * embedding disabled, even one whose dimension is not yet known (a fresh store, then left
   * unset): what is taught is queued as a pending write (`memory add`, the teaching paths) and
   * applied when the server answers. A reachable server is checked as usual.
   */
  queueWhenDown?: boolean;
  /** Skip the embedding check entirely (for `memory reembed`, which migrates). */
  skipInit?: boolean;
  /** Least time between two re-probes of a model server that was down; default {@link DEFAULT_REPROBE_AFTER_MS}. */
  reprobeAfterMs?: number;
  /**
   * The user's database schema, for applying the queue after a recovery (SQL given or written
   * for a queued fact is checked against it); default none (only the parse and the guard).
   */
  queueSchema?: () => Promise<Schema | undefined>;
  log?: (message: string, details: Record<string, unknown>) => void;
  /**
   * An SQL client on the memory store's database created by the caller (e.g. `serve`, which keeps
   * its access-token table in the same database); default: one from {@link memoryStoreOptions}.
   */
  client?: SqlClient;
}

/**
 * Opens the store, probes the embedding dimension and checks it against the store.
 * @throws SqlrecallError `memory_embedding_mismatch` (exit 2, hint `sqlrecall memory reembed`),
 *   `memory_store`, `model_*` (embedding model unavailable and `allowWithoutEmbeddings` not set).
 */
export async function openMemory(config: Config, options: OpenMemoryOptions = {}): Promise<MemoryRuntime> {
  const store = createMemoryStore(options.client ? { client: options.client } : memoryStoreOptions(config));
  try {
    // A question is embedded by schema linking and by recall: the second is answered in process.
    const embedder = rememberEmbeddings(modelProviderFor(config).embeddingModel());
    // The store's start (a PGlite start, or a socket to the process holding it) and the model
    // server's answer on the embedding size run side by side: neither needs the other.
    const probed = embedder.dimensions();
    probed.catch(() => undefined); // awaited below, after the store opened (or failed to)
    await store.embeddingInfo();
    let embedding: EmbeddingInfo = { model: config.embedModel, dimensions: 0 };
    let canEmbed = true;
    let dimensionKnown = true;
    let probeError: unknown;
    try {
      embedding = { model: config.embedModel, dimensions: await probed };
    } catch (error) {
      probeError = error;
      const queue = options.queueWhenDown === true && isSqlrecallError(error, 'model_unreachable');
      if (!options.allowWithoutEmbeddings && !queue) throw error;
      const recorded = await store.embeddingInfo();
      if (!recorded && !queue) throw error;
      // A fresh store keeps its embedding column unset until a model answers: only the queue is used.
      if (recorded) embedding = recorded;
      else dimensionKnown = false;
      canEmbed = false;
    }
    // Only a model that could not be probed is probed again later; a store recorded with another
    // model stays read-only until `memory reembed`.
    const recoverable = !canEmbed && !options.skipInit;
    if (canEmbed && options.allowWithoutEmbeddings) {
      // Listing, history and export need no vectors: a store recorded with another embedding model
      // is opened as it is, with embedding disabled, instead of being refused.
      const recorded = await store.embeddingInfo();
      if (recorded && (recorded.model !== embedding.model || recorded.dimensions !== embedding.dimensions)) {
        embedding = recorded;
        canEmbed = false;
      }
    }
    if (!options.skipInit && dimensionKnown) await store.init(embedding);
    const table = parseThresholdTable(config.memoryThresholds) ?? {};
    const recovery = embeddingRecovery({
      config,
      store,
      embedder,
      state: { canEmbed, embedding, recoverable },
      probeError,
      afterMs: options.reprobeAfterMs ?? DEFAULT_REPROBE_AFTER_MS,
      log: options.log,
      applyQueue: async () =>
        service.recoverPending({ schema: await options.queueSchema?.().catch(() => undefined) }),
    });
    const service = new MemoryService({
      store,
      embedder: recovery.embedder,
      chat: options.chat,
      thresholds: thresholdsFor(config.embedModel, table),
      maxFacts: config.memoryMaxFacts,
      topK: config.memoryTopK,
      minSimilarity: config.memoryMinSimilarity,
      log: options.log,
    });
    return {
      store,
      embedder: recovery.embedder,
      service,
      get embedding() {
        return recovery.state.embedding;
      },
      get canEmbed() {
        return recovery.state.canEmbed;
      },
      get embeddingRecoverable() {
        return recovery.state.canEmbed || recovery.state.recoverable;
      },
      recoverEmbedding: recovery.recover,
      queueApplied: recovery.queueApplied,
    };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
}

/** What {@link embeddingRecovery} keeps: whether embedding works, with which model, and whether to re-probe. */
interface RecoveryState {
  canEmbed: boolean;
  embedding: EmbeddingInfo;
  /** Embedding is off because the model could not be probed (not because the store has another model). */
  recoverable: boolean;
}

/**
 * The embedder the service uses: the configured one while embedding works; while it is off, one
 * that first re-probes the model server (at most once per `afterMs`) and, when it is back, sets a
 * fresh store up with its dimension, turns embedding on and starts applying the queue.
 */
function embeddingRecovery(input: {
  config: Config;
  store: SqlMemoryStore;
  embedder: EmbeddingModel;
  state: RecoveryState;
  /** Why the first probe failed (reported until a later probe says otherwise). */
  probeError?: unknown;
  afterMs: number;
  log?: (message: string, details: Record<string, unknown>) => void;
  applyQueue: () => Promise<{ applied: number; failed: number }>;
}) {
  const { config, store, embedder, state } = input;
  let unavailable = unavailableEmbedder(config, input.probeError);
  let lastProbe = Date.now();
  let probing: Promise<boolean> | undefined;
  let applying: Promise<{ applied: number; failed: number }> = Promise.resolve({ applied: 0, failed: 0 });

  const probe = async (): Promise<boolean> => {
    try {
      const configured = { model: config.embedModel, dimensions: await embedder.dimensions() };
      // Sets a fresh store up with this dimension, or refuses another model than the store's.
      await store.init(configured);
      state.embedding = configured;
      state.canEmbed = true;
      state.recoverable = false;
      input.log?.('embedding model reachable again', { model: configured.model });
      applying = input.applyQueue().catch((error: unknown) => {
        input.log?.('queued memory writes could not be applied', { error: (error as Error).message });
        return { applied: 0, failed: 0 };
      });
      return true;
    } catch (error) {
      // Another model than the store's needs `memory reembed`: probing again would not help.
      if (isSqlrecallError(error, 'memory_embedding_mismatch')) state.recoverable = false;
      unavailable = unavailableEmbedder(config, error);
      input.log?.('embedding model still unavailable', { error: (error as Error).message });
      return false;
    }
  };

  const recover = (): Promise<boolean> => {
    if (state.canEmbed) return Promise.resolve(true);
    if (!state.recoverable) return Promise.resolve(false);
    if (probing) return probing;
    if (Date.now() - lastProbe < input.afterMs) return Promise.resolve(false);
    lastProbe = Date.now();
    const current = probe().finally(() => {
      if (probing === current) probing = undefined;
    });
    probing = current;
    return current;
  };

  const live: EmbeddingModel = {
    id: embedder.id,
    dimensions: async () => ((await recover()) ? embedder.dimensions() : unavailable.dimensions()),
    embed: async (texts, options) =>
      (await recover()) ? embedder.embed(texts, options) : unavailable.embed(texts, options),
  };
  return { state, embedder: live, recover, queueApplied: () => applying };
}

/**
 * An embedder that explains why it cannot embed. A server that could not be reached is reported as
 * such (the probe's own `model_unreachable`: which URL, what to check), never as a missing model;
 * otherwise the embedding model is not available on a server that answers.
 */
function unavailableEmbedder(config: Config, probeError?: unknown): EmbeddingModel {
  const provider = modelProviderFor(config);
  const fail = () =>
    Promise.reject(
      isSqlrecallError(probeError, 'model_unreachable')
        ? probeError
        : new SqlrecallError(
            'model_unreachable',
            `The embedding model ${config.embedModel} is not available at ${provider.url}.`,
            {
              details: { hint: `Start ${provider.label} and ${provider.hints.install(config.embedModel)}.` },
            },
          ),
    );
  return { id: config.embedModel, dimensions: fail, embed: fail };
}
