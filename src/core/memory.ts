/**
 * The memory model: one row per fact, scoped to a user (or a team), with
 * an append-only history. The scope is a required argument of every call: there is no way to read
 * or change memories without one.
 */

/** Kinds of memory. */
export type MemoryKind = 'preference' | 'term' | 'metric' | 'entity' | 'example' | 'context';

/** Kinds of message: what one user message asks of the assistant. */
export type MessageKind = 'question' | 'instruction' | 'both' | 'command' | 'neither';

/** All kinds, in display order. */
export const MEMORY_KINDS = [
  'preference',
  'term',
  'metric',
  'entity',
  'example',
  'context',
] as const satisfies readonly MemoryKind[];

/** Lifecycle of a memory. */
export type MemoryStatus = 'active' | 'superseded' | 'deleted';

/**
 * Whose memories: a user, or a team's shared memories. Ids are opaque text compared literally
 * (`*`, `%`, quotes are ordinary characters, never wildcards).
 */
export type MemoryScope = { user: string; team?: undefined } | { team: string; user?: undefined };

/**
 * How a memory came to be: `chat` (taught in a conversation: a message of the user), `hand`
 * (added by hand: `memory add`, the memory bank, MCP `remember`, `POST /api/memories`), `import`
 * (from an export document) or `confirmed` (a confirmed answer: thumbs up, or a corrected SQL).
 */
export type MemoryOriginKind = 'chat' | 'hand' | 'import' | 'confirmed';

/** Where a memory came from (provenance); the time is the memory's `createdAt`. */
export interface MemoryOrigin {
  how: MemoryOriginKind;
  /** The conversation it was taught in (`chat`), when known. */
  conversationId?: string | null;
  /** The user's own words it came from: the message (`chat`) or the confirmed question. */
  words?: string | null;
}

/** One remembered fact. */
export interface Memory {
  /** Opaque id (a UUID). */
  id: string;
  scope: MemoryScope;
  kind: MemoryKind;
  /** The fact in the user's own words and language. */
  text: string;
  /**
   * Compiled SQL checked against the schema, when there is one: a predicate for preferences and
   * terms (`customers.country = 'India'`), an expression for metrics.
   */
  sql: string | null;
  /** Tables the fact touches, as `schema.table` (lower-case names unless quoted). */
  tables: string[];
  /** Columns the fact touches, as `schema.table.column`. */
  columns: string[];
  /** Embedding model id that produced the stored vector. */
  embeddingModel: string;
  /** SHA-256 of the normalised text (dedup). */
  contentHash: string;
  status: MemoryStatus;
  /** The memory this one superseded, if any. */
  supersedes: string | null;
  /** The user message the fact came from, if any. */
  sourceMessageId: string | null;
  createdAt: string;
  updatedAt: string;
  expiresAt: string | null;
  /**
   * The last day it holds as the user typed it (`YYYY-MM-DD` in the zone they typed it in), kept
   * beside the instant so every viewer sees that day; null when not recorded (stored before the
   * day was kept, or no expiry). Stores always set it; absent on hand-built values.
   */
  expiresOn?: string | null;
  /**
   * Pinned memories are always recalled, whatever the question. Stores always set it;
   * absent (hand-built values) means false.
   */
  pinned?: boolean;
  /**
   * Where it came from; null when not recorded (stored before provenance was kept). Stores
   * always set it; absent on hand-built values.
   */
  origin?: MemoryOrigin | null;
  /** When an answer last applied it (its predicate verified in the SQL); null: never. */
  lastAppliedAt?: string | null;
}

/** A memory found by similarity, with `similarity` = 1 − cosine distance, in [-1, 1]. */
export interface ScoredMemory extends Memory {
  similarity: number;
}

/** History actions (append-only). */
export type HistoryAction = 'ADD' | 'UPDATE' | 'SUPERSEDE' | 'DELETE' | 'RESTORE' | 'NOOP';

/** One history entry. */
export interface MemoryHistoryEntry {
  id: string;
  memoryId: string;
  action: HistoryAction;
  /** Text before and after the change (null where not applicable). */
  oldText: string | null;
  newText: string | null;
  /** Why: e.g. "similarity 0.97 ≥ 0.95", "model decided SUPERSEDE", "user deleted". */
  reason: string | null;
  /** The memory's SQL condition before and after an ADD or UPDATE (null when none or not recorded). */
  oldSql?: string | null;
  newSql?: string | null;
  /** The pinned state a pin/unpin entry set (null or absent for other entries). */
  pinned?: boolean | null;
  createdAt: string;
}

/** A new fact to store. */
export interface NewMemory {
  kind: MemoryKind;
  text: string;
  sql?: string | null;
  tables?: string[];
  columns?: string[];
  sourceMessageId?: string | null;
  expiresAt?: string | null;
  /** The day of `expiresAt` as the user typed it (`YYYY-MM-DD`); default: not recorded. */
  expiresOn?: string | null;
  /** Store it pinned (always recalled); default false. */
  pinned?: boolean;
  /** Where it came from (provenance); default: not recorded. An update keeps the old one unless given. */
  origin?: MemoryOrigin | null;
}

/**
 * One change of a write batch, applied atomically per scope (serialized per scope, so concurrent
 * identical writes produce one memory).
 * - `add`: insert unless an active memory with the same content hash exists (then NOOP).
 * - `update`: replace text/sql of an active memory in place (history keeps the old text).
 * - `supersede`: mark `target` superseded and insert the new fact with `supersedes = target`.
 * - `delete` / `restore`: status changes, recorded in history.
 * - `pin`: pin (always recalled) or unpin a memory; recorded in history as an UPDATE whose reason
 *   is "pinned" / "unpinned" and whose `pinned` column holds the new state.
 * - `noop`: only a history entry with the reason.
 */
export type MemoryOp =
  | { op: 'add'; memory: NewMemory; embedding: number[]; reason?: string }
  | { op: 'update'; id: string; memory: NewMemory; embedding: number[]; reason?: string }
  | { op: 'supersede'; target: string; memory: NewMemory; embedding: number[]; reason?: string }
  | { op: 'delete'; id: string; reason?: string }
  | { op: 'restore'; id: string; reason?: string }
  | { op: 'pin'; id: string; pinned: boolean; reason?: string }
  | { op: 'noop'; id?: string; text: string; reason: string };

/** What a write did, per op, in order. */
export interface MemoryWriteResult {
  op: MemoryOp['op'];
  /** The memory created or changed (absent for a pure noop). */
  memory?: Memory;
  /** True when an `add` turned into a NOOP because of an exact duplicate. */
  duplicate?: boolean;
}

/**
 * Default number of memories a similarity search or recall returns (5: the issue-3 v1 value; the
 * `SQLRECALL_MEMORY_TOP_K` setting, the HTTP `topK` and MCP `top_k` parameters and
 * `sqlrecall memory search --top-k` fall back to it).
 */
export const DEFAULT_MEMORY_TOP_K = 5;

/** Options of {@link MemoryStore.search}. */
export interface MemorySearchOptions {
  embedding: number[];
  /** Most results; default {@link DEFAULT_MEMORY_TOP_K}. */
  topK?: number;
  /** Least similarity (1 − cosine distance) to return; default 0 (no floor). */
  minSimilarity?: number;
  kinds?: MemoryKind[];
}

/** Options of {@link MemoryStore.list}. */
export interface MemoryListOptions {
  kinds?: MemoryKind[];
  /** Statuses to include; default `['active']`. */
  statuses?: MemoryStatus[];
  limit?: number;
  /**
   * Only memories that name no table or at least one of these (`schema.table`, compared
   * case-insensitively): the standing preferences of a question.
   */
  tablesAny?: string[];
  /**
   * Only memories that define a term whose stemmed content words are all among these (see
   * `contentWords` in src/memory/text.ts): exact term recall, answered by an index.
   */
  termWordsWithin?: string[];
  /**
   * Only memories whose pinned state is this (`true`: the pinned memories that recall always
   * includes, read from a partial index instead of every memory of the scope).
   * Default: both.
   */
  pinned?: boolean;
  /**
   * Leave out memories whose expiry time has passed (`expires_at <= now` on the store's clock),
   * as recall does; default false (listings show expired memories too).
   */
  unexpired?: boolean;
  /**
   * Only memories whose text contains at least one of these words (case-insensitive substring;
   * `%`, `_` and backslash are literal): the word search used when the question's embedding is
   * degenerate (all zeros) and similarity cannot rank. Default: no word condition.
   */
  textWordsAny?: string[];
}

/**
 * The reads of one scope that recall makes for a question (`memory/recall.ts`), asked at once so a
 * store can answer them with one statement (one round trip per scope instead of four).
 * Each part is defined as the {@link MemoryStore.list} / {@link MemoryStore.search} call named on it;
 * {@link RecallReads} holds exactly what those calls return.
 */
export interface RecallReadsQuery {
  /**
   * `list(scope, { kinds: ['preference'], statuses: ['active'], tablesAny, unexpired: true, limit })`:
   * the standing preferences on the tables in play (`schema.table`, case-insensitive).
   */
  preferences: { tablesAny: string[]; limit: number };
  /**
   * `list(scope, { kinds, statuses: ['active'], termWordsWithin, unexpired: true })`: the
   * definitions whose term words all occur in the question. Omitted: not read (empty).
   */
  definitions?: { kinds: MemoryKind[]; termWordsWithin: string[] };
  /** `search(scope, search)`: similarity recall. */
  search: MemorySearchOptions;
  /** `list(scope, { statuses: ['active'], pinned: true, unexpired: true })` is always read. */
}

/** What {@link RecallReadsQuery} reads, each part in the order of the call it stands for. */
export interface RecallReads {
  preferences: Memory[];
  definitions: Memory[];
  similar: ScoredMemory[];
  pinned: Memory[];
}

/**
 * Durable memory storage (PostgreSQL + pgvector; embedded PGlite by default). Every method takes
 * the scope as a required argument and applies it in SQL before any ranking.
 */
export interface MemoryStore {
  /**
   * Runs migrations and checks the embedding model and dimension recorded in the store.
   * @throws SqlrecallError `memory_embedding_mismatch` when they differ (run `sqlrecall memory reembed`).
   */
  init(embedding: { model: string; dimensions: number }): Promise<void>;
  write(scope: MemoryScope, ops: MemoryOp[]): Promise<MemoryWriteResult[]>;
  /**
   * Nearest neighbours among the scope's active memories, best first; the scope is applied in SQL
   * on every path. Exact for small scopes; a store may walk an approximate index for large ones
   * (the SQL store: above 2,000 active memories, recall@5 measured by `bench/search-recall.ts`).
   */
  search(scope: MemoryScope, options: MemorySearchOptions): Promise<ScoredMemory[]>;
  list(scope: MemoryScope, options?: MemoryListOptions): Promise<Memory[]>;
  /** A memory by id, only if it belongs to `scope`; otherwise null (never another scope's). */
  get(scope: MemoryScope, id: string): Promise<Memory | null>;
  /** History of one memory (if it belongs to `scope`), or of the whole scope when `id` is omitted. */
  history(scope: MemoryScope, id?: string): Promise<MemoryHistoryEntry[]>;
  close(): Promise<void>;
}
