/**
 * Versioned schema of the memory store: the `memory` series of the shared migration runner
 * (`databases/postgres/migrate.ts`), which applies the missing steps in one transaction under the
 * global migration advisory lock and records them in `sqlrecall_migrations`. Never edit a released
 * migration: append a new one.
 *
 * The vector column is created without a dimension; {@link setupEmbedding} fixes it to
 * `vector(N)` and builds the HNSW index the first time `init` learns the dimension (it is probed
 * from the embedding model, not hard-coded).
 */
import { SqlrecallError } from '../../core/errors.js';
import { MEMORY_KINDS } from '../../core/memory.js';
import {
  lockMigrations,
  type Migration,
  type MigrationSeries,
  runMigrations,
} from '../../databases/postgres/migrate.js';
import type { SqlClient, SqlSession } from './sql-client.js';

const kinds = MEMORY_KINDS.map((kind) => `'${kind}'`).join(', ');
const scopeColumns = `
  scope_key text NOT NULL,
  scope_user text,
  scope_team text,
  CHECK (num_nonnulls(scope_user, scope_team) = 1)`;

/** Every migration of the memory store, in order. */
export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: 'memories, history, conversations, meta, pending writes, settings',
    statements: [
      'CREATE EXTENSION IF NOT EXISTS vector',
      `CREATE TABLE sqlrecall_memory_meta (
        key text PRIMARY KEY,
        value text NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
      `CREATE TABLE sqlrecall_memories (
        id uuid PRIMARY KEY,
        seq bigint GENERATED ALWAYS AS IDENTITY,${scopeColumns},
        kind text NOT NULL CHECK (kind IN (${kinds})),
        text text NOT NULL,
        sql text,
        tables text[] NOT NULL DEFAULT '{}',
        columns text[] NOT NULL DEFAULT '{}',
        embedding vector NOT NULL,
        embedding_model text NOT NULL,
        content_hash text NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'superseded', 'deleted')),
        supersedes uuid,
        source_message_id text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        expires_at timestamptz)`,
      'CREATE INDEX sqlrecall_memories_scope_status ON sqlrecall_memories (scope_key, status, kind)',
      `CREATE UNIQUE INDEX sqlrecall_memories_active_hash ON sqlrecall_memories (scope_key, content_hash)
        WHERE status = 'active'`,
      `CREATE TABLE sqlrecall_memory_history (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        memory_id uuid,${scopeColumns},
        action text NOT NULL CHECK (action IN ('ADD', 'UPDATE', 'SUPERSEDE', 'DELETE', 'RESTORE', 'NOOP')),
        old_text text,
        new_text text,
        reason text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
      'CREATE INDEX sqlrecall_memory_history_scope ON sqlrecall_memory_history (scope_key, memory_id)',
      `CREATE TABLE sqlrecall_conversations (
        id text NOT NULL,${scopeColumns},
        summary text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (scope_key, id))`,
      'CREATE INDEX sqlrecall_conversations_recent ON sqlrecall_conversations (scope_key, updated_at DESC)',
      `CREATE TABLE sqlrecall_conversation_turns (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id text NOT NULL,${scopeColumns},
        question text NOT NULL,
        sql text,
        row_count bigint,
        summary text,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
      `CREATE INDEX sqlrecall_conversation_turns_recent
        ON sqlrecall_conversation_turns (scope_key, conversation_id, id DESC)`,
      `CREATE TABLE sqlrecall_pending_writes (
        id uuid PRIMARY KEY,${scopeColumns},
        payload jsonb NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'running', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        error text,
        claimed_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
      'CREATE INDEX sqlrecall_pending_writes_queue ON sqlrecall_pending_writes (status, created_at)',
      'CREATE INDEX sqlrecall_pending_writes_scope ON sqlrecall_pending_writes (scope_key, created_at)',
      `CREATE TABLE sqlrecall_memory_settings (
        scope_key text PRIMARY KEY,
        scope_user text,
        scope_team text,
        CHECK (num_nonnulls(scope_user, scope_team) = 1),
        enabled boolean NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT clock_timestamp())`,
    ],
  },
  {
    version: 2,
    description: 'pinned memories (always recalled); history records the pinned state it set',
    statements: [
      'ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS pinned boolean NOT NULL DEFAULT false',
      'ALTER TABLE sqlrecall_memory_history ADD COLUMN IF NOT EXISTS pinned boolean',
    ],
  },
  {
    // Exact term recall in SQL. `term_words` holds the stemmed content words of the term
    // a memory defines ('{}' when it defines none; NULL until filled in by `fillTermWords`); a
    // question recalls the rows whose words are all among its own (`term_words <@ $words`, GIN).
    version: 3,
    description: 'term_words of each memory, GIN-indexed, for exact term recall in SQL',
    statements: [
      'ALTER TABLE sqlrecall_memories ADD COLUMN term_words text[]',
      `CREATE INDEX sqlrecall_memories_term_words ON sqlrecall_memories USING gin (term_words)
        WHERE status = 'active' AND cardinality(term_words) > 0`,
      // Rows still to fill (written before this migration): found without a scan at each start.
      'CREATE INDEX sqlrecall_memories_term_words_todo ON sqlrecall_memories (id) WHERE term_words IS NULL',
      // Standing preferences and term candidates are read per scope and kind among active rows.
      `CREATE INDEX sqlrecall_memories_active_scope_kind ON sqlrecall_memories (scope_key, kind, seq)
        WHERE status = 'active'`,
    ],
  },
  {
    version: 4,
    description: 'conversation titles (rename in the web UI); SQL before/after in memory history',
    statements: [
      'ALTER TABLE sqlrecall_conversations ADD COLUMN IF NOT EXISTS title text',
      'ALTER TABLE sqlrecall_memory_history ADD COLUMN IF NOT EXISTS old_sql text',
      'ALTER TABLE sqlrecall_memory_history ADD COLUMN IF NOT EXISTS new_sql text',
    ],
  },
  {
    // Recall reads a scope's pinned memories on every question; a partial index holds
    // only those rows, so the read no longer visits every active memory of the scope. The term
    // index's pending list (GIN fastupdate) is merged only by VACUUM, which PGlite never runs: every
    // term read scanned it whole (8 ms at 10,000 memories, 0.1 ms once merged), so it is merged and
    // turned off (each insert updates the index itself: a term has a handful of words).
    version: 5,
    description: 'partial index of the pinned active memories per scope; term index without a pending list',
    statements: [
      `CREATE INDEX sqlrecall_memories_pinned ON sqlrecall_memories (scope_key, seq)
        WHERE status = 'active' AND pinned`,
      'ALTER INDEX sqlrecall_memories_term_words SET (fastupdate = off)',
      "SELECT gin_clean_pending_list('sqlrecall_memories_term_words'::regclass)",
    ],
  },
  {
    // Memory terms are stemmed with the shared stemmer of `core/text.ts` (it also undoes
    // `-ed`/`-ing` and irregular forms, and keeps `-us`/`-is`), so words stored by the older memory
    // stemmer would no longer equal a question's words. NULL makes `fillTermWords` recompute them
    // at the next start, in batches, with the stemmer that questions now use.
    version: 6,
    description: 'term_words recomputed with the shared stemmer',
    statements: ['UPDATE sqlrecall_memories SET term_words = NULL WHERE term_words IS NOT NULL'],
  },
  {
    // Provenance (where a memory came from: how, the conversation, the user's words), when an answer
    // last applied it, and the evidence of each conversation turn (the memories applied to it and
    // those only recalled, as `[{id, kind, text}]` snapshots: a reopened conversation shows what
    // the answer used then). Memories stored before have no recorded origin (NULL).
    version: 7,
    description: 'memory provenance and last applied time; applied/recalled memories of each turn',
    statements: [
      'ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS origin text',
      'ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS origin_conversation_id text',
      'ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS origin_words text',
      'ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS last_applied_at timestamptz',
      'ALTER TABLE sqlrecall_conversation_turns ADD COLUMN IF NOT EXISTS applied_memories jsonb',
      'ALTER TABLE sqlrecall_conversation_turns ADD COLUMN IF NOT EXISTS recalled_memories jsonb',
    ],
  },
  {
    // The last day an expiring memory holds, as the user typed it, beside the instant: the instant
    // read back in another zone (a colleague, the browser of a laptop that travelled) falls on
    // another day. Rows stored before keep NULL and show the day derived from the instant.
    version: 8,
    description: 'expires_on: the day an expiry was typed as, beside the instant',
    statements: ['ALTER TABLE sqlrecall_memories ADD COLUMN IF NOT EXISTS expires_on date'],
  },
];

/** The memory store's series: memories, their history, conversations, pending writes, settings. */
export const MEMORY_SERIES: MigrationSeries = { component: 'memory', migrations: MIGRATIONS };

/** Name of the HNSW index on the embedding column (cosine distance). */
export const HNSW_INDEX = 'sqlrecall_memories_embedding_hnsw';

/** Most dimensions pgvector's HNSW indexes for `vector` (pgvector 0.8); larger ones are searched exactly. */
export const HNSW_MAX_DIMENSIONS = 2000;

/**
 * Takes the global migration lock for the current transaction: changes of the embedding column
 * and its recorded model wait for migrations, and the reverse.
 */
export async function lockSchema(tx: SqlSession): Promise<void> {
  await lockMigrations(tx);
}

function missingVector(error: unknown, displayName: string): SqlrecallError | undefined {
  const message = error instanceof Error ? error.message : String(error);
  if (!/extension "vector"|vector\.control|type "vector" does not exist/i.test(message)) return undefined;
  return new SqlrecallError(
    'memory_store',
    `The memory database at ${displayName} lacks the pgvector extension; install pgvector there (CREATE EXTENSION vector) or leave MEMORY_DATABASE_URL empty to use the embedded store.`,
    { cause: error },
  );
}

/**
 * Applies every memory-store migration not yet recorded, in one transaction. Idempotent.
 * @returns the versions applied by this call
 * @throws SqlrecallError `memory_store` when pgvector is missing on a server
 */
export async function migrate(client: SqlClient): Promise<number[]> {
  try {
    return await runMigrations(client, MEMORY_SERIES);
  } catch (error) {
    throw missingVector(error, client.displayName) ?? error;
  }
}

/** Reads the recorded embedding model and dimension (null before the first `init`). */
export async function readEmbeddingMeta(
  tx: SqlSession,
): Promise<{ model: string; dimensions: number } | null> {
  const rows = await tx.query<{ key: string; value: string }>(
    "SELECT key, value FROM sqlrecall_memory_meta WHERE key IN ('embedding_model', 'embedding_dimensions')",
  );
  const model = rows.find((row) => row.key === 'embedding_model')?.value;
  const dimensions = rows.find((row) => row.key === 'embedding_dimensions')?.value;
  return model === undefined || dimensions === undefined ? null : { model, dimensions: Number(dimensions) };
}

/** Records the embedding model and dimension. */
export async function writeEmbeddingMeta(tx: SqlSession, model: string, dimensions: number): Promise<void> {
  for (const [key, value] of [
    ['embedding_model', model],
    ['embedding_dimensions', String(dimensions)],
  ] as const) {
    await tx.query(
      `INSERT INTO sqlrecall_memory_meta (key, value) VALUES ($1, $2)
       ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, updated_at = clock_timestamp()`,
      [key, value],
    );
  }
}

/**
 * Fixes the embedding column to `vector(dimensions)` and (re)builds the HNSW cosine index. The
 * column must be empty or already hold vectors of that dimension.
 */
export async function setupEmbedding(tx: SqlSession, dimensions: number): Promise<void> {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > 16_000) {
    throw new SqlrecallError(
      'usage',
      `An embedding dimension must be an integer from 1 to 16000, not ${dimensions}.`,
    );
  }
  await tx.query(`DROP INDEX IF EXISTS ${HNSW_INDEX}`);
  await tx.query(`ALTER TABLE sqlrecall_memories ALTER COLUMN embedding TYPE vector(${dimensions})`);
  if (dimensions <= HNSW_MAX_DIMENSIONS) {
    await tx.query(
      `CREATE INDEX ${HNSW_INDEX} ON sqlrecall_memories USING hnsw (embedding vector_cosine_ops)`,
    );
  }
}
