/**
 * Where the schema index lives: an interface with two implementations, in memory (no store
 * configured; rebuilt per process) and PostgreSQL + pgvector (`pg-store.ts`, the same database as
 * the memories, its own table).
 */
import type { ValueHint } from './documents.js';

/** One indexed relation. */
export interface IndexEntry {
  /** `schema.name` (see `displayKey`). */
  tableKey: string;
  /** Catalog hash of the table when it was indexed (see `catalogHash`). */
  catalogHash: string;
  /** The embedded document text. */
  document: string;
  /** Document embedding, or `null` when no embedding model was available at build time. */
  embedding: number[] | null;
  /** Id of the model that made `embedding`, or `null`. */
  embeddingModel: string | null;
  /** Value hints (sampled distinct values and enum labels). */
  valueHints: ValueHint[];
}

/** What the index knows of a table without loading its document. */
export interface EntryState {
  catalogHash: string;
  embeddingModel: string | null;
}

/** A table and its similarity (1 − cosine distance) to a query vector. */
export interface Neighbour {
  tableKey: string;
  similarity: number;
}

/** Persistence of the schema index; every call is scoped by the database fingerprint. */
export interface SchemaIndexStore {
  /** Creates the table (idempotent). */
  init(): Promise<void>;
  /** Hash and embedding model of every indexed table of the database. */
  states(fingerprint: string): Promise<Map<string, EntryState>>;
  /** Every entry of the database (embeddings included only when `withEmbeddings`). */
  load(fingerprint: string, options?: { withEmbeddings?: boolean }): Promise<IndexEntry[]>;
  /** Inserts or replaces entries (one transaction or statement per batch). */
  upsert(fingerprint: string, entries: readonly IndexEntry[]): Promise<void>;
  /** Removes entries of dropped tables. */
  remove(fingerprint: string, tableKeys: readonly string[]): Promise<void>;
  /** The `topK` entries nearest to `embedding` made by `model`, most similar first. */
  nearest(
    fingerprint: string,
    embedding: readonly number[],
    model: string,
    topK: number,
  ): Promise<Neighbour[]>;
}

/** A store in process memory: for runs without a configured store, and for tests. */
export class InMemorySchemaIndexStore implements SchemaIndexStore {
  private readonly data = new Map<string, Map<string, IndexEntry>>();
  /** Number of entries written so far (tests use it to prove what was re-indexed). */
  writes = 0;

  async init(): Promise<void> {}

  private of(fingerprint: string): Map<string, IndexEntry> {
    let map = this.data.get(fingerprint);
    if (!map) {
      map = new Map();
      this.data.set(fingerprint, map);
    }
    return map;
  }

  async states(fingerprint: string): Promise<Map<string, EntryState>> {
    return new Map(
      [...this.of(fingerprint)].map(([key, entry]) => [
        key,
        { catalogHash: entry.catalogHash, embeddingModel: entry.embeddingModel },
      ]),
    );
  }

  async load(fingerprint: string, options: { withEmbeddings?: boolean } = {}): Promise<IndexEntry[]> {
    return [...this.of(fingerprint).values()].map((entry) =>
      options.withEmbeddings ? structuredClone(entry) : { ...structuredClone(entry), embedding: null },
    );
  }

  async upsert(fingerprint: string, entries: readonly IndexEntry[]): Promise<void> {
    const map = this.of(fingerprint);
    for (const entry of entries) {
      map.set(entry.tableKey, structuredClone(entry));
      this.writes += 1;
    }
  }

  async remove(fingerprint: string, tableKeys: readonly string[]): Promise<void> {
    const map = this.of(fingerprint);
    for (const key of tableKeys) map.delete(key);
  }

  async nearest(
    fingerprint: string,
    embedding: readonly number[],
    model: string,
    topK: number,
  ): Promise<Neighbour[]> {
    const scored: Neighbour[] = [];
    for (const entry of this.of(fingerprint).values()) {
      if (!entry.embedding || entry.embeddingModel !== model || entry.embedding.length !== embedding.length)
        continue;
      scored.push({ tableKey: entry.tableKey, similarity: cosineSimilarity(entry.embedding, embedding) });
    }
    return scored.sort((a, b) => b.similarity - a.similarity).slice(0, topK);
  }
}

/** Cosine similarity of two vectors of equal length (0 when either is all zeros). */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i] ?? 0;
    const y = b[i] ?? 0;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
