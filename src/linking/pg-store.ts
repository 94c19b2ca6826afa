/**
 * The schema index in PostgreSQL + pgvector: table `schema_index` in the same database as the
 * memories (embedded PGlite with the vector extension, or a server PostgreSQL with pgvector).
 * Written against a minimal query-and-transaction interface that the memory store's `SqlClient`
 * satisfies as is. Its layout is the `schema_index` series of the shared migration runner,
 * applied when the store is first used.
 */
import { fromVectorSql, toVectorSql } from '../core/vector.js';
import { type MigrationSeries, type MigrationSession, runMigrations } from '../databases/postgres/migrate.js';
import type { ValueHint } from './documents.js';
import type { EntryState, IndexEntry, Neighbour, SchemaIndexStore } from './store.js';

/**
 * What the store needs: run one statement with `$n` parameters and return its rows, and run its
 * migrations in one transaction. `createPgliteClient` (`src/memory/store/shared-pglite.ts`) and
 * `createPostgresClient` (`sql-client.ts`) fit.
 */
export interface SchemaIndexSql extends MigrationSession {
  /** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: MigrationSession) => Promise<T>): Promise<T>;
}

/** Layout version written in each row's `layout_version` by this code. */
export const SCHEMA_INDEX_TABLE_VERSION = 1;

/**
 * The schema index's series. Step 1 is the table the store used to create on every start, kept
 * with `IF NOT EXISTS` so a database that already has it adopts it with its rows. The embedding
 * column is `vector` without a dimension, so one table serves every embedding model; a search
 * compares only rows of the query's model and dimension. No ANN index: a database has at most a
 * few thousand tables, an exact scan is milliseconds. A later layout appends a step.
 */
export const SCHEMA_INDEX_SERIES: MigrationSeries = {
  component: 'schema_index',
  migrations: [
    {
      version: 1,
      description: 'schema_index: one document, embedding and value hints per table and database',
      statements: [
        'CREATE EXTENSION IF NOT EXISTS vector',
        `CREATE TABLE IF NOT EXISTS schema_index (
  fingerprint text NOT NULL,
  table_key text NOT NULL,
  catalog_hash text NOT NULL,
  document text NOT NULL,
  embedding vector,
  embedding_model text,
  value_hints jsonb NOT NULL DEFAULT '[]'::jsonb,
  layout_version integer NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (fingerprint, table_key)
)`,
      ],
    },
  ],
};

/** Rows per INSERT statement when upserting. */
const UPSERT_BATCH = 100;

interface Row extends Record<string, unknown> {
  table_key: string;
  catalog_hash: string;
  document: string;
  embedding: string | null;
  embedding_model: string | null;
  value_hints: unknown;
}

function parseHints(value: unknown): ValueHint[] {
  const parsed = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  return Array.isArray(parsed) ? (parsed as ValueHint[]) : [];
}

/** {@link SchemaIndexStore} on a PostgreSQL connection with pgvector. */
export class PgSchemaIndexStore implements SchemaIndexStore {
  private ready: Promise<void> | undefined;

  constructor(private readonly sql: SchemaIndexSql) {}

  /** Runs the table's migrations once per instance (a failure is retried on the next call). */
  init(): Promise<void> {
    this.ready ??= (async () => {
      await runMigrations(this.sql, SCHEMA_INDEX_SERIES);
    })().catch((error: unknown) => {
      this.ready = undefined;
      throw error;
    });
    return this.ready;
  }

  async states(fingerprint: string): Promise<Map<string, EntryState>> {
    await this.init();
    const rows = await this.sql.query<{
      table_key: string;
      catalog_hash: string;
      embedding_model: string | null;
    }>('SELECT table_key, catalog_hash, embedding_model FROM schema_index WHERE fingerprint = $1', [
      fingerprint,
    ]);
    return new Map(
      rows.map((row) => [
        row.table_key,
        { catalogHash: row.catalog_hash, embeddingModel: row.embedding_model },
      ]),
    );
  }

  async load(fingerprint: string, options: { withEmbeddings?: boolean } = {}): Promise<IndexEntry[]> {
    await this.init();
    const embedding = options.withEmbeddings ? 'embedding::text AS embedding' : 'NULL::text AS embedding';
    const rows = await this.sql.query<Row>(
      `SELECT table_key, catalog_hash, document, ${embedding}, embedding_model, value_hints::text AS value_hints
       FROM schema_index WHERE fingerprint = $1 ORDER BY table_key`,
      [fingerprint],
    );
    return rows.map((row) => ({
      tableKey: row.table_key,
      catalogHash: row.catalog_hash,
      document: row.document,
      embedding: options.withEmbeddings ? fromVectorSql(row.embedding) : null,
      embeddingModel: row.embedding_model,
      valueHints: parseHints(row.value_hints),
    }));
  }

  async upsert(fingerprint: string, entries: readonly IndexEntry[]): Promise<void> {
    await this.init();
    for (let start = 0; start < entries.length; start += UPSERT_BATCH) {
      const batch = entries.slice(start, start + UPSERT_BATCH);
      const params: unknown[] = [fingerprint];
      const tuples = batch.map((entry) => {
        const base = params.length;
        params.push(
          entry.tableKey,
          entry.catalogHash,
          entry.document,
          entry.embedding ? toVectorSql(entry.embedding) : null,
          entry.embeddingModel,
          JSON.stringify(entry.valueHints),
        );
        return `($1, $${base + 1}, $${base + 2}, $${base + 3}, $${base + 4}::vector, $${base + 5}, $${base + 6}::jsonb, now())`;
      });
      await this.sql.query(
        `INSERT INTO schema_index (fingerprint, table_key, catalog_hash, document, embedding, embedding_model, value_hints, updated_at)
         VALUES ${tuples.join(', ')}
         ON CONFLICT (fingerprint, table_key) DO UPDATE SET catalog_hash = EXCLUDED.catalog_hash,
           document = EXCLUDED.document, embedding = EXCLUDED.embedding, embedding_model = EXCLUDED.embedding_model,
           value_hints = EXCLUDED.value_hints, layout_version = ${SCHEMA_INDEX_TABLE_VERSION}, updated_at = now()`,
        params,
      );
    }
  }

  async remove(fingerprint: string, tableKeys: readonly string[]): Promise<void> {
    if (tableKeys.length === 0) return;
    await this.init();
    await this.sql.query('DELETE FROM schema_index WHERE fingerprint = $1 AND table_key = ANY($2::text[])', [
      fingerprint,
      [...tableKeys],
    ]);
  }

  async nearest(
    fingerprint: string,
    embedding: readonly number[],
    model: string,
    topK: number,
  ): Promise<Neighbour[]> {
    await this.init();
    const rows = await this.sql.query<{ table_key: string; similarity: number | string }>(
      `SELECT table_key, 1 - (embedding <=> $2::vector) AS similarity FROM schema_index
       WHERE fingerprint = $1 AND embedding_model = $3 AND embedding IS NOT NULL AND vector_dims(embedding) = $4
       ORDER BY embedding <=> $2::vector LIMIT $5`,
      [fingerprint, toVectorSql(embedding), model, embedding.length, topK],
    );
    return rows.map((row) => ({ tableKey: row.table_key, similarity: Number(row.similarity) }));
  }
}
