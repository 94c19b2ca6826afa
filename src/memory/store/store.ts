/**
 * {@link createMemoryStore}: the memory store on PostgreSQL + pgvector — embedded PGlite in a data
 * directory by default, a server PostgreSQL when given a postgres:// URL. Same SQL on both.
 *
 * Scope rule: every statement that reads or changes a scope's rows has `scope_key = $k AND
 * scope_user|scope_team = $i` in its WHERE clause as bound parameters, applied before any ranking.
 * Search is exact for small scopes and walks the HNSW index for large ones (`search.ts`, with the
 * rule and its measured recall); `bench/memory-search.ts` measures the exact path against global
 * HNSW on many small scopes. On the embedded store the planner statistics are refreshed after
 * writes that grew the table (`statistics.ts`: PGlite has no autovacuum).
 */
import { SqlrecallError } from '../../core/errors.js';
import type {
  Memory,
  MemoryHistoryEntry,
  MemoryListOptions,
  MemoryOp,
  MemoryScope,
  MemorySearchOptions,
  MemoryWriteResult,
  RecallReads,
  RecallReadsQuery,
  ScoredMemory,
} from '../../core/memory.js';
import { DEFAULT_MEMORY_TOP_K } from '../../core/memory.js';
import { sameModelName } from '../../core/model-names.js';
import { toVectorSql } from '../../core/vector.js';
import { conversationMethods } from './conversations.js';
import { lockSchema, migrate, readEmbeddingMeta, setupEmbedding, writeEmbeddingMeta } from './migrations.js';
import { consumePending, pendingMethods, releaseRunningPending } from './pending.js';
import { readRecall } from './recall-reads.js';
import { reembedAll } from './reembed.js';
import { HISTORY_COLUMNS, historyFromRow, isUuid, MEMORY_COLUMNS, memoryFromRow } from './rows.js';
import { scopeColumns, scopeCondition, scopeRef } from './scope.js';
import {
  DEFAULT_SEARCH_POLICY,
  PathCache,
  type SearchPath,
  type SearchPolicy,
  type SearchQuery,
  searchScope,
} from './search.js';
import { createPgliteClient } from './shared-pglite.js';
import { createPostgresClient, type SqlClient, storeError } from './sql-client.js';
import { analyzeIfStale } from './statistics.js';
import { fillTermWords } from './term-words.js';
import { deleteScope, exportScope, importScope, purgeEntries } from './transfer.js';
import type { EmbeddingInfo, SqlMemoryStore, WriteOptions } from './types.js';
import { applyOps, lockScope } from './write.js';

/** Options of {@link createMemoryStore}. */
export interface MemoryStoreOptions {
  /** postgres:// (or postgresql://) URL of a server with pgvector (MEMORY_DATABASE_URL); wins over `dataDir`. */
  url?: string;
  /** Embedded data directory (e.g. `<SQLRECALL_HOME>/memory`); omitted with no `url`: in-memory (tests). */
  dataDir?: string;
  /** Pool size for a server; default 4. */
  maxConnections?: number;
  /**
   * An already created client (benchmarks and tests that also need raw SQL on the same database);
   * wins over `url` and `dataDir`. `close()` closes it.
   */
  client?: SqlClient;
  /**
   * When `search` may walk the HNSW index instead of scanning the scope exactly (see
   * `search.ts`); default {@link DEFAULT_SEARCH_POLICY}. Tests force the approximate path with
   * `{ exactUpTo: 0, minShare: 0 }`.
   */
  search?: Partial<SearchPolicy>;
  /** Told which path each `search` took (benchmarks and tests). */
  onSearchPath?: (path: SearchPath) => void;
}

/** Largest `topK` of a search. */
const MAX_TOP_K = 1000;

/** The refusal when the configured embedding model differs from the store's. */
export function embeddingMismatchError(stored: EmbeddingInfo, configured: EmbeddingInfo): SqlrecallError {
  return new SqlrecallError(
    'memory_embedding_mismatch',
    `The memory store was built with ${stored.model} (${stored.dimensions} dimensions) but the configured embedding model is ${configured.model} (${configured.dimensions} dimensions). Run \`sqlrecall memory reembed\` to migrate your memories, or switch SQLRECALL_EMBED_MODEL back.`,
    { details: { hint: 'sqlrecall memory reembed', stored, configured } },
  );
}

function kindsParam(kinds: readonly string[] | undefined): string[] | null {
  return kinds === undefined ? null : [...kinds];
}

/**
 * Creates a memory store. Nothing connects until the first call; migrations run once, on first use.
 * @throws SqlrecallError `config` when `url` is not a postgres:// URL
 */
export function createMemoryStore(options: MemoryStoreOptions = {}): SqlMemoryStore {
  let client: SqlClient;
  if (options.client) {
    client = options.client;
  } else if (options.url) {
    if (!/^postgres(ql)?:\/\//i.test(options.url)) {
      throw new SqlrecallError(
        'config',
        'MEMORY_DATABASE_URL must be a postgres:// URL of a server with pgvector.',
      );
    }
    client = createPostgresClient(options.url, { maxConnections: options.maxConnections });
  } else {
    client = createPgliteClient(options.dataDir);
  }
  const searchPolicy: SearchPolicy = { ...DEFAULT_SEARCH_POLICY, ...options.search };
  const searchPaths = new PathCache();
  let migrated: Promise<void> | undefined;
  let embedding: EmbeddingInfo | undefined;

  const ready = (): Promise<void> => {
    migrated ??= (async () => {
      await migrate(client);
      await fillTermWords(client);
      if (client.engine === 'pglite') await analyzeIfStale(client);
      // Only the process that owns the embedded store (opened its data directory) may take
      // `running` rows for dead: with a shared store, another live process may be running them.
      if (client.engine === 'pglite' && (await client.ownsStore?.()) !== false)
        await releaseRunningPending(client);
    })();
    return migrated.catch((error: unknown) => {
      migrated = undefined;
      throw storeError(error, client.displayName);
    });
  };

  /** Wraps a public method: runs migrations first, maps driver errors to `memory_store`. */
  const guarded =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        await ready();
        return await fn(...args);
      } catch (error) {
        throw storeError(error, client.displayName);
      }
    };

  const currentEmbedding = async (): Promise<EmbeddingInfo> => {
    if (embedding) return embedding;
    const meta = await readEmbeddingMeta(client);
    if (!meta) {
      throw new SqlrecallError(
        'memory_store',
        'The memory store has no embedding model recorded yet; it is set up on first use with an embedding model.',
      );
    }
    return meta;
  };

  const conversations = conversationMethods(client, ready);
  const pending = pendingMethods(client, ready);

  const store: SqlMemoryStore = {
    engine: client.engine,
    sql: async () => {
      await ready();
      return client;
    },

    init: guarded(async (configured: EmbeddingInfo) => {
      await client.transaction(async (tx) => {
        await lockSchema(tx);
        const stored = await readEmbeddingMeta(tx);
        if (!stored) {
          await setupEmbedding(tx, configured.dimensions);
          await writeEmbeddingMeta(tx, configured.model, configured.dimensions);
          return;
        }
        if (stored.dimensions !== configured.dimensions || !sameModelName(stored.model, configured.model)) {
          throw embeddingMismatchError(stored, configured);
        }
      });
      embedding = { model: configured.model, dimensions: configured.dimensions };
    }),

    embeddingInfo: guarded(() => readEmbeddingMeta(client)),

    markApplied: guarded(async (scope: MemoryScope, ids: readonly string[]): Promise<void> => {
      const ref = scopeRef(scope);
      const valid = [...new Set(ids.filter(isUuid).map((id) => id.toLowerCase()))];
      if (valid.length === 0) return;
      // Only this column changes: no history entry, `updated_at` and the embedding stay as they are.
      await client.query(
        `UPDATE sqlrecall_memories SET last_applied_at = clock_timestamp()
         WHERE id = ANY($1::uuid[]) AND ${scopeCondition(ref, 2, 3)}`,
        [valid, ref.key, ref.id],
      );
    }),

    write: guarded(
      async (scope: MemoryScope, ops: MemoryOp[], write: WriteOptions = {}): Promise<MemoryWriteResult[]> => {
        const ref = scopeRef(scope);
        const info = await currentEmbedding();
        if (ops.length === 0 && write.pendingId === undefined) return [];
        const results = await client.transaction(async (tx) => {
          await lockScope(tx, ref);
          if (write.pendingId !== undefined) await consumePending(tx, ref, write.pendingId);
          return applyOps({ tx, ref, model: info.model, dimensions: info.dimensions }, ops);
        });
        if (client.engine === 'pglite') await analyzeIfStale(client);
        return results;
      },
    ),

    search: guarded(async (scope: MemoryScope, search: MemorySearchOptions): Promise<ScoredMemory[]> => {
      const ref = scopeRef(scope);
      const topK = search.topK ?? DEFAULT_MEMORY_TOP_K;
      if (!Number.isInteger(topK) || topK < 0 || topK > MAX_TOP_K) {
        throw new SqlrecallError('usage', `topK must be a whole number from 0 to ${MAX_TOP_K}.`);
      }
      const info = await currentEmbedding();
      const vector = toVectorSql(search.embedding, { dimensions: info.dimensions, model: info.model });
      if (topK === 0) return [];
      // Only (id, seq, distance) is ranked; the full rows are read for the top k alone.
      return searchScope(
        client,
        {
          ref,
          vector,
          topK,
          dimensions: info.dimensions,
          kinds: kindsParam(search.kinds),
          minSimilarity: search.minSimilarity ?? null,
        },
        searchPolicy,
        searchPaths,
        options.onSearchPath,
      );
    }),

    recallReads: guarded(async (scope: MemoryScope, query: RecallReadsQuery): Promise<RecallReads> => {
      const ref = scopeRef(scope);
      // The same checks, in the same order, as `search` and `list` make for these calls.
      const topK = query.search.topK ?? DEFAULT_MEMORY_TOP_K;
      if (!Number.isInteger(topK) || topK < 0 || topK > MAX_TOP_K) {
        throw new SqlrecallError('usage', `topK must be a whole number from 0 to ${MAX_TOP_K}.`);
      }
      const limit = query.preferences.limit;
      if (!Number.isInteger(limit) || limit < 0) {
        throw new SqlrecallError('usage', 'A limit must be a whole number ≥ 0.');
      }
      const info = await currentEmbedding();
      const vector = toVectorSql(query.search.embedding, { dimensions: info.dimensions, model: info.model });
      const searched: SearchQuery = {
        ref,
        vector,
        topK,
        dimensions: info.dimensions,
        kinds: kindsParam(query.search.kinds),
        minSimilarity: query.search.minSimilarity ?? null,
      };
      // The exact search joins the same statement; a scope large enough for the HNSW walk is
      // searched apart by `searchScope` (its own transaction and settings).
      const exact = topK === 0 || (await searchPaths.path(client, searched, searchPolicy)) === 'exact';
      const reads = await readRecall(client, {
        ref,
        tables: query.preferences.tablesAny.map((t) => t.toLowerCase()),
        preferenceLimit: limit,
        definitions: query.definitions
          ? { kinds: [...query.definitions.kinds], words: [...query.definitions.termWordsWithin] }
          : null,
        searchKinds: searched.kinds,
        vector,
        minSimilarity: searched.minSimilarity,
        topK: exact ? topK : 0,
      });
      if (exact) {
        if (topK > 0) options.onSearchPath?.('exact');
        return reads;
      }
      const similar = await searchScope(client, searched, searchPolicy, searchPaths, options.onSearchPath);
      return { ...reads, similar };
    }),

    list: guarded(async (scope: MemoryScope, list: MemoryListOptions = {}): Promise<Memory[]> => {
      const ref = scopeRef(scope);
      const limit = list.limit ?? null;
      if (limit !== null && (!Number.isInteger(limit) || limit < 0)) {
        throw new SqlrecallError('usage', 'A limit must be a whole number ≥ 0.');
      }
      const tables = list.tablesAny ? list.tablesAny.map((t) => t.toLowerCase()) : null;
      const words = list.termWordsWithin ?? null;
      const rows = await client.query(
        `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories
         WHERE ${scopeCondition(ref, 1, 2)} AND status = ANY($3::text[])
           AND ($4::text[] IS NULL OR kind = ANY($4::text[]))
           AND ($6::text[] IS NULL OR cardinality(tables) = 0
                OR EXISTS (SELECT 1 FROM unnest(tables) AS t(name) WHERE lower(t.name) = ANY($6::text[])))
           AND ($7::text[] IS NULL OR (status = 'active' AND cardinality(term_words) > 0
                AND term_words <@ $7::text[]))
           AND ($8::boolean IS NULL OR pinned = $8::boolean)
           AND (NOT $9::boolean OR expires_at IS NULL OR expires_at > clock_timestamp())
           AND ($10::text[] IS NULL OR lower(text) LIKE ANY($10::text[]))
         ORDER BY seq LIMIT $5`,
        [
          ref.key,
          ref.id,
          list.statuses ?? ['active'],
          kindsParam(list.kinds),
          limit,
          tables,
          words,
          list.pinned ?? null,
          list.unexpired === true,
          list.textWordsAny
            ? list.textWordsAny.map((w) => `%${w.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`)
            : null,
        ],
      );
      return rows.map(memoryFromRow);
    }),

    get: guarded(async (scope: MemoryScope, id: string): Promise<Memory | null> => {
      const ref = scopeRef(scope);
      if (!isUuid(id)) return null;
      const rows = await client.query(
        `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories WHERE id = $1 AND ${scopeCondition(ref, 2, 3)}`,
        [id, ref.key, ref.id],
      );
      return rows[0] ? memoryFromRow(rows[0]) : null;
    }),

    history: guarded(async (scope: MemoryScope, id?: string): Promise<MemoryHistoryEntry[]> => {
      const ref = scopeRef(scope);
      if (id !== undefined && !isUuid(id)) return [];
      const rows = await client.query(
        `SELECT ${HISTORY_COLUMNS} FROM sqlrecall_memory_history
         WHERE ${scopeCondition(ref, 1, 2)} AND ($3::uuid IS NULL OR memory_id = $3::uuid)
         ORDER BY id`,
        [ref.key, ref.id, id ?? null],
      );
      return rows.map(historyFromRow);
    }),

    appendTurn: guarded(conversations.appendTurn),
    recentTurns: guarded(conversations.recentTurns),
    setSummary: guarded(conversations.setSummary),
    getConversation: guarded(conversations.getConversation),
    listConversations: guarded(conversations.listConversations),
    renameConversation: guarded(conversations.renameConversation),
    deleteConversation: guarded(conversations.deleteConversation),
    lastConversation: guarded(
      async (scope: MemoryScope) => (await conversations.listConversations(scope, 1))[0] ?? null,
    ),

    enqueuePending: guarded(pending.enqueuePending),
    pendingScopes: guarded(pending.pendingScopes),
    takePending: guarded(pending.takePending),
    completePending: guarded(pending.completePending),
    failPending: guarded(pending.failPending),
    listPending: guarded(pending.listPending),
    withdrawPending: guarded(pending.withdrawPending),

    setEnabled: guarded(async (scope: MemoryScope, enabled: boolean): Promise<void> => {
      const ref = scopeRef(scope);
      await client.query(
        `INSERT INTO sqlrecall_memory_settings (scope_key, scope_user, scope_team, enabled) VALUES ($1, $2, $3, $4)
         ON CONFLICT (scope_key) DO UPDATE SET enabled = EXCLUDED.enabled, updated_at = clock_timestamp()`,
        [...scopeColumns(ref), enabled === true],
      );
    }),

    isEnabled: guarded(async (scope: MemoryScope): Promise<boolean> => {
      const ref = scopeRef(scope);
      const rows = await client.query<{ enabled: boolean }>(
        `SELECT enabled FROM sqlrecall_memory_settings WHERE ${scopeCondition(ref, 1, 2)}`,
        [ref.key, ref.id],
      );
      return rows[0]?.enabled !== false;
    }),

    export: guarded((scope: MemoryScope) => exportScope(client, scopeRef(scope))),

    import: guarded(async (scope, doc, embed) => {
      const ref = scopeRef(scope);
      const result = await importScope(client, ref, doc, embed, await currentEmbedding());
      if (client.engine === 'pglite') await analyzeIfStale(client);
      return result;
    }),

    deleteAll: guarded((scope, deleteOptions) => deleteScope(client, scopeRef(scope), deleteOptions)),

    purge: guarded((scope, memoryIds, historyIds) =>
      purgeEntries(client, scopeRef(scope), memoryIds, historyIds),
    ),

    reembed: guarded(async (model, dimensions, embed, onProgress) => {
      const result = await reembedAll(client, model, dimensions, embed, onProgress);
      embedding = { model, dimensions };
      return result;
    }),

    async close(): Promise<void> {
      migrated = undefined;
      embedding = undefined;
      await client.close();
    },
  };
  return store;
}
