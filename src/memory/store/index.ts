/**
 * The memory store (the storage layer of the memory model): PostgreSQL + pgvector, embedded
 * PGlite by default, a server PostgreSQL via MEMORY_DATABASE_URL.
 */

export { HNSW_INDEX, MIGRATIONS, migrate } from './migrations.js';
export { contentHash, normalizeText } from './rows.js';
export {
  DEFAULT_EXACT_UP_TO,
  DEFAULT_SEARCH_POLICY,
  type SearchPath,
  type SearchPolicy,
} from './search.js';
export { createPgliteClient } from './shared-pglite.js';
export {
  createPostgresClient,
  LOCK_FILE_NAME,
  type SqlClient,
  type SqlSession,
} from './sql-client.js';
export { createMemoryStore, embeddingMismatchError, type MemoryStoreOptions } from './store.js';
export { EMBED_BATCH_SIZE } from './transfer.js';
export type {
  ConversationInfo,
  ConversationTurn,
  DeleteAllOptions,
  EmbeddingInfo,
  EmbedTexts,
  MemoryExport,
  MemoryImportResult,
  NewConversationTurn,
  PendingStatus,
  PendingWrite,
  ReembedProgress,
  SqlMemoryStore,
  TakePendingOptions,
} from './types.js';
export { MAX_CONVERSATION_ID_LENGTH } from './types.js';
