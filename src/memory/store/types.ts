/**
 * What the PostgreSQL memory store offers beyond the core {@link MemoryStore} contract:
 * conversations, the durable pending-write queue, per-scope on/off, export/import, purge and
 * re-embedding. Every method that touches one person's data takes the scope as a required
 * argument; the only cross-scope calls are the pending-write queue's `pendingScopes` (a worker
 * draining the queue after a restart does not know the users in advance: it learns which scopes
 * have queued writes, never their content, then claims them scope by scope) and `reembed`.
 */
import type {
  Memory,
  MemoryHistoryEntry,
  MemoryKind,
  MemoryOp,
  MemoryScope,
  MemoryStore,
  MemoryWriteResult,
  RecallReads,
  RecallReadsQuery,
} from '../../core/memory.js';
import type { SqlClient } from './sql-client.js';

/** Embedding function used by `import` and `reembed`: one vector per input text, same order. */
export type EmbedTexts = (texts: string[]) => Promise<number[][]>;

/** The embedding model and dimension recorded in the store (table `memory_meta`). */
export interface EmbeddingInfo {
  model: string;
  dimensions: number;
}

/** A memory as a turn recorded it: its id, kind and text at the time of the answer. */
export interface TurnMemory {
  id: string;
  kind: MemoryKind;
  text: string;
}

/** One turn of a conversation, as persisted. */
export interface ConversationTurn {
  /** Sequential id (as text), increasing within the store. */
  id: string;
  conversationId: string;
  question: string;
  /** The SQL that ran, if any. */
  sql: string | null;
  /** Rows returned, if a query ran. */
  rowCount: number | null;
  /** A short summary of the answer/result. */
  summary: string | null;
  /** Memories applied to the answer (verified in its SQL); [] when none or not recorded. */
  appliedMemories: TurnMemory[];
  /** Memories shown to the model but not verified in the SQL; [] when none or not recorded. */
  recalledMemories: TurnMemory[];
  createdAt: string;
}

/** A turn to append. */
export interface NewConversationTurn {
  question: string;
  sql?: string | null;
  rowCount?: number | null;
  summary?: string | null;
  appliedMemories?: TurnMemory[];
  recalledMemories?: TurnMemory[];
}

/** One conversation of a scope. */
export interface ConversationInfo {
  /** Caller-chosen id (opaque text, at most {@link MAX_CONVERSATION_ID_LENGTH} characters). */
  id: string;
  /** Rolling summary, null until set. */
  summary: string | null;
  /** Name the person gave it (rename), null until set. */
  title?: string | null;
  /** The first question asked in it (a default name), null when it has no turns. */
  firstQuestion?: string | null;
  turnCount: number;
  createdAt: string;
  /** Time of the last appended turn or summary change. */
  updatedAt: string;
}

/** Longest conversation title (characters); longer titles are a `usage` error. */
export const MAX_CONVERSATION_TITLE_LENGTH = 200;

/** Longest accepted conversation id (characters); longer ids are a `usage` error. */
export const MAX_CONVERSATION_ID_LENGTH = 200;

/** Status of a queued write: `pending` (waiting), `running` (claimed by a worker), `failed`. */
export type PendingStatus = 'pending' | 'running' | 'failed';

/** A queued write (table `pending_writes`). Completed writes are deleted from the queue. */
export interface PendingWrite {
  id: string;
  scope: MemoryScope;
  /** Whatever the caller enqueued (JSON). */
  payload: unknown;
  status: PendingStatus;
  /** How many times it was claimed by `takePending`. */
  attempts: number;
  /** Last failure message (from `failPending`). */
  error: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Options of {@link SqlMemoryStore.takePending}. */
export interface TakePendingOptions {
  /** Most rows to claim; default 10. */
  limit?: number;
  /**
   * A `running` row claimed longer ago than this is considered abandoned (its worker died) and is
   * claimed again; default 300000 (5 min). The embedded store resets every `running` row to
   * `pending` when it opens, since only one process can own its data directory.
   */
  staleAfterMs?: number;
}

/** Export document (JSON-able, no embeddings). */
export interface MemoryExport {
  format: 'sqlrecall-memory';
  version: 1;
  exportedAt: string;
  scope: MemoryScope;
  /** Embedding model of the store at export time (informational; import re-embeds). */
  embeddingModel: string | null;
  /** Every memory of the scope, all statuses, oldest first. */
  memories: Memory[];
  /** The scope's history, oldest first. */
  history: MemoryHistoryEntry[];
}

/** What an import did. */
export interface MemoryImportResult {
  /** Memories inserted (new ids). */
  imported: number;
  /** Active memories skipped because an identical active memory already exists in the scope. */
  duplicates: number;
  /** Map from the ids in the document to the ids created. */
  idMap: Record<string, string>;
  /**
   * Active preferences of the scope that an imported active preference superseded by the
   * reconciliation rule (`conflictsByRule` in `memory/reconcile.ts`: same column, different
   * constants — the imported one wins, as the newer word): the old memory's id and text, and the
   * id of the imported memory that replaced it. History keeps both; `restore` undoes it.
   */
  superseded: { id: string; text: string; by: string }[];
}

/** Options of {@link SqlMemoryStore.deleteAll}. */
export interface DeleteAllOptions {
  /**
   * false (default): every active/superseded memory becomes `deleted` (history DELETE, restorable).
   * true: hard purge of the scope's memories, history, conversations, pending writes and settings.
   */
  purge?: boolean;
}

/** Progress of {@link SqlMemoryStore.reembed}. */
export interface ReembedProgress {
  done: number;
  total: number;
}

/** Options of {@link SqlMemoryStore.write}. */
export interface WriteOptions {
  /**
   * The queued write these ops apply: removed from the queue in the same transaction as the ops.
   * When it is gone (withdrawn meanwhile) nothing is written (`PendingWithdrawnError`, code `not_found`).
   */
  pendingId?: string;
}

/**
 * The full store implemented in `src/memory/store/` (embedded PGlite or server PostgreSQL, same SQL).
 * Errors: `memory_store` for storage failures, `memory_embedding_mismatch` for a model/dimension
 * mismatch, `not_found` for an id not in the caller's scope, `usage` for an invalid scope or id.
 */
export interface SqlMemoryStore extends MemoryStore {
  /** {@link MemoryStore.write}, optionally consuming a queued write in the same transaction. */
  write(scope: MemoryScope, ops: MemoryOp[], options?: WriteOptions): Promise<MemoryWriteResult[]>;
  /** `'pglite'` (embedded) or `'postgres'` (server URL). */
  readonly engine: 'pglite' | 'postgres';
  /**
   * The store's SQL client, after migrations (pgvector is installed): for neighbours that keep
   * their own tables in the same database, such as the schema-linking index. Never for memories.
   */
  sql(): Promise<SqlClient>;
  /**
   * The reads recall makes for a question in one scope, in one statement when the scope is
   * searched exactly (else two): exactly what the `list`/`search` calls named on
   * {@link RecallReadsQuery} return. Same errors as those calls.
   */
  recallReads(scope: MemoryScope, query: RecallReadsQuery): Promise<RecallReads>;
  /**
   * Records that an answer applied these memories of the scope (their `lastAppliedAt` becomes the
   * store's clock time); ids of other scopes or not UUIDs are ignored. Changes nothing else.
   */
  markApplied(scope: MemoryScope, ids: readonly string[]): Promise<void>;
  /** Recorded embedding model/dimension, or null before the first `init`. Runs migrations. */
  embeddingInfo(): Promise<EmbeddingInfo | null>;

  /** Appends a turn (creating the conversation on first use). */
  appendTurn(
    scope: MemoryScope,
    conversationId: string,
    turn: NewConversationTurn,
  ): Promise<ConversationTurn>;
  /** The last `limit` turns (default 6), oldest first. Empty for an unknown conversation. */
  recentTurns(scope: MemoryScope, conversationId: string, limit?: number): Promise<ConversationTurn[]>;
  /** Sets the rolling summary (creating the conversation if needed). */
  setSummary(scope: MemoryScope, conversationId: string, summary: string): Promise<void>;
  /** One conversation of the scope, or null. */
  getConversation(scope: MemoryScope, conversationId: string): Promise<ConversationInfo | null>;
  /** The most recently updated conversation of the scope (for `chat --resume`), or null. */
  lastConversation(scope: MemoryScope): Promise<ConversationInfo | null>;
  /** Conversations of the scope, most recently updated first; default limit 20. */
  listConversations(scope: MemoryScope, limit?: number): Promise<ConversationInfo[]>;
  /**
   * Names a conversation of the scope (at most {@link MAX_CONVERSATION_TITLE_LENGTH} characters).
   * @returns false when the scope has no conversation with this id
   * @throws SqlrecallError `usage` for an empty or too long title
   */
  renameConversation(scope: MemoryScope, conversationId: string, title: string): Promise<boolean>;
  /**
   * Deletes a conversation of the scope and its turns.
   * @returns false when the scope has no conversation with this id
   */
  deleteConversation(scope: MemoryScope, conversationId: string): Promise<boolean>;

  /** Stores a write to apply later (durable before the answer is shown); returns its id. */
  enqueuePending(scope: MemoryScope, payload: unknown): Promise<string>;
  /**
   * The scopes that have writes to claim (pending, or running and abandoned), the one with the
   * oldest write first, at most `limit` (default 100). Reads no payload: for a worker that applies
   * the queue of every scope, one scope at a time through {@link takePending}.
   */
  pendingScopes(options?: { limit?: number; staleAfterMs?: number }): Promise<MemoryScope[]>;
  /**
   * Claims up to `limit` pending (or abandoned running) writes of `scope`, oldest first, marking
   * them running. Another scope's writes are never claimed.
   */
  takePending(scope: MemoryScope, options?: TakePendingOptions): Promise<PendingWrite[]>;
  /**
   * Removes a write of `scope` from the queue once applied.
   * @returns false when `scope` has no queued write with this id (unknown, or another scope's: left as it is)
   */
  completePending(scope: MemoryScope, id: string): Promise<boolean>;
  /**
   * Records a failure of a write of `scope`. `retry: true` puts it back to `pending` (taken again
   * later); otherwise it stays `failed` (visible in `listPending`, never taken again).
   * @returns false when `scope` has no queued write with this id (another scope's is left as it is)
   */
  failPending(scope: MemoryScope, id: string, error: string, options?: { retry?: boolean }): Promise<boolean>;
  /** The scope's queued writes (any status), oldest first. */
  listPending(scope: MemoryScope): Promise<PendingWrite[]>;
  /**
   * Takes queued write `id` of `scope` out of the queue for good (one transaction under the
   * scope's write lock, so a flush applying it at the same moment either wrote it first or
   * writes nothing). Returns the row removed, or null (unknown, another scope's, already applied).
   */
  withdrawPending(scope: MemoryScope, id: string): Promise<PendingWrite | null>;

  /** Turns memory on or off for a scope (default: on). */
  setEnabled(scope: MemoryScope, enabled: boolean): Promise<void>;
  isEnabled(scope: MemoryScope): Promise<boolean>;

  /** The scope's memories (all statuses) and history, without embeddings. */
  export(scope: MemoryScope): Promise<MemoryExport>;
  /**
   * Imports an export document into `scope` (any source scope): re-embeds the texts with `embed`,
   * keeps statuses and supersede links (remapped to new ids), skips active duplicates.
   * @throws SqlrecallError `usage` when the document is not a valid export.
   */
  import(scope: MemoryScope, doc: unknown, embed: EmbedTexts): Promise<MemoryImportResult>;
  /** Deletes (soft) or purges (hard) everything of `scope` only; returns the number of memories affected. */
  deleteAll(scope: MemoryScope, options?: DeleteAllOptions): Promise<number>;
  /**
   * Removes for good the memories `memoryIds` (with all their history) and the history entries
   * `historyIds` of `scope` only (no history entry is written; not restorable).
   */
  purge(
    scope: MemoryScope,
    memoryIds: string[],
    historyIds: string[],
  ): Promise<{ memories: number; history: number }>;

  /**
   * Re-embeds every memory of every scope and status with a new model, changes the vector column
   * to `dimensions`, rebuilds the HNSW index and records the model — in one transaction, so a
   * failure (e.g. the embedder throws) leaves the old state intact. Does not require `init`.
   */
  reembed(
    model: string,
    dimensions: number,
    embed: EmbedTexts,
    onProgress?: (progress: ReembedProgress) => void,
  ): Promise<{ reembedded: number }>;
}
