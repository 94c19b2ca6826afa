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
  embedder: EmbeddingModel;
  service: MemoryService;
  /** The embedding model and dimension the store was opened with. */
  embedding: EmbeddingInfo;
  /** False when the embedding model could not be probed and the recorded one was used (read-only use). */
  canEmbed: boolean;
}

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
    const service = new MemoryService({
      store,
      embedder: canEmbed ? embedder : unavailableEmbedder(config, probeError),
      chat: options.chat,
      thresholds: thresholdsFor(config.embedModel, table),
      maxFacts: config.memoryMaxFacts,
      topK: config.memoryTopK,
      minSimilarity: config.memoryMinSimilarity,
      log: options.log,
    });
    return { store, embedder, service, embedding, canEmbed };
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
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
