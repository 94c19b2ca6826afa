/**
 * The schema index: one document per relation, embedded and stored with its value hints, keyed by
 * the database fingerprint and a per-table catalog hash. `sync(schema)` re-indexes only the tables
 * whose hash changed (or that were never embedded with the current model) and drops dropped ones;
 * an unchanged catalog costs one small query.
 */
import type { EmbeddingModel } from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';
import { catalogHash, displayKey, incomingNeighbours, tableDocument, type ValueHint } from './documents.js';
import type { IndexEntry, Neighbour, SchemaIndexStore } from './store.js';
import { enumHints, type ValueSampler } from './value-hints.js';

/** A relation as the linker sees it after a sync. */
export interface IndexedTable {
  /** `schema.name`. */
  key: string;
  table: Table;
  /** Sampled values and enum labels. */
  hints: ValueHint[];
  /** Tables with a declared FK to this one. */
  incoming: string[];
}

/** Options of {@link SchemaIndex}. */
export interface SchemaIndexOptions {
  store: SchemaIndexStore;
  /** Database fingerprint (see `databaseFingerprint`). */
  fingerprint: string;
  /** Embedding model for documents and questions; without one the index is lexical only. */
  embedding?: EmbeddingModel;
  /** Reads value hints of a table; default: enum labels only (no database reads). */
  sampler?: ValueSampler;
  /** Progress of a (re)build: tables done of tables to index. Called after each batch. */
  onProgress?: (done: number, total: number) => void;
  /** Non-fatal problems (embedding model unreachable, …), one sentence each. */
  onWarning?: (message: string) => void;
  /** Tables per batch (sample, embed, write); default 32. */
  batchSize?: number;
  /**
   * After the embedding model failed, how long the index stays lexical before it tries the model
   * again; default {@link EMBEDDING_RETRY_AFTER_MS}.
   */
  retryAfterMs?: number;
  /** The clock, in milliseconds (tests); default `Date.now`. */
  now?: () => number;
}

/** Default time the index stays lexical after the embedding model failed: 30 s. */
export const EMBEDDING_RETRY_AFTER_MS = 30_000;

/** What one {@link SchemaIndex.sync} did. */
export interface SyncReport {
  /** Tables (re)indexed: sampled, documented, embedded, written. */
  indexed: string[];
  /** Tables only re-embedded (catalog unchanged, embedding missing or from another model). */
  reembedded: string[];
  /** Entries removed because their table is gone. */
  removed: string[];
  /** Tables left as they were. */
  unchanged: number;
  durationMs: number;
}

/** Builds, refreshes and queries the schema index of one database. */
export class SchemaIndex {
  private synced:
    | { schema: Schema; embedded: boolean; tables: IndexedTable[]; report: SyncReport }
    | undefined;
  /** Until when (clock ms) embedding is off after a failure; undefined while it works. */
  private disabledUntil: number | undefined;
  /** The sync in progress, joined by a call for the same schema that it satisfies. */
  private running: { schema: Schema; embed: boolean; report: Promise<SyncReport> } | undefined;

  constructor(private readonly options: SchemaIndexOptions) {}

  /**
   * Whether embedding is off after a failure. Once the back-off is over it is on again (the next
   * call tries the model), so a model server that comes back is used without a restart.
   */
  private get embeddingDisabled(): boolean {
    if (this.disabledUntil === undefined) return false;
    if ((this.options.now ?? Date.now)() < this.disabledUntil) return true;
    this.disabledUntil = undefined;
    return false;
  }

  /** Turns embedding off for the back-off after a failure, with one warning per failure. */
  private disableEmbedding(model: EmbeddingModel, error: unknown): void {
    const retryAfterMs = this.options.retryAfterMs ?? EMBEDDING_RETRY_AFTER_MS;
    this.disabledUntil = (this.options.now ?? Date.now)() + retryAfterMs;
    this.options.onWarning?.(
      `The embedding model ${model.id} is unavailable (${(error as Error)?.message ?? error}); schema linking uses names and values only, and tries the model again in ${Math.round(retryAfterMs / 1000)} s.`,
    );
  }

  /** The embedding model id used for documents, or `null` when lexical only. */
  get embeddingModelId(): string | null {
    return this.options.embedding && !this.embeddingDisabled ? this.options.embedding.id : null;
  }

  /**
   * Brings the index in line with `schema`. The same `Schema` object twice is a no-op (the
   * Assistant keeps one per lifetime). Never fails because of the embedding model: documents are
   * then stored without embeddings and retrieval is lexical.
   * With `embed: false` (small schemas sent whole) documents and hints are stored without
   * embeddings; a later sync with embeddings fills them in without sampling again.
   * @throws whatever the store throws (`memory_store` from the shared SQL client).
   */
  async sync(schema: Schema, options: { embed?: boolean } = {}): Promise<SyncReport> {
    const embed = options.embed ?? true;
    // A sync whose embeddings failed is done again, for the same schema, once the model may be back.
    if (this.synced?.schema === schema && (this.synced.embedded || !embed || this.embeddingDisabled))
      return this.synced.report;
    // Questions arriving together (a server's first wave of users) share one sync of the same
    // catalog instead of each sampling, embedding and writing every table.
    const running = this.running;
    if (running && running.schema === schema && (running.embed || !embed)) return running.report;
    const report = this.syncNow(schema, embed);
    this.running = { schema, embed, report };
    try {
      return await report;
    } finally {
      if (this.running?.report === report) this.running = undefined;
    }
  }

  private async syncNow(schema: Schema, embed: boolean): Promise<SyncReport> {
    const started = performance.now();
    const { store, fingerprint } = this.options;
    await store.init();
    const incoming = incomingNeighbours(schema);
    const wanted = new Map(
      schema.tables.map((table) => {
        const key = displayKey(table);
        const inc = incoming.get(key) ?? [];
        return [key, { table, incoming: inc, hash: catalogHash(table, inc) }];
      }),
    );
    const states = await store.states(fingerprint);
    const model = embed ? this.embeddingModelId : null;
    const toIndex: string[] = [];
    const toEmbed: string[] = [];
    for (const [key, item] of wanted) {
      const state = states.get(key);
      if (!state || state.catalogHash !== item.hash) toIndex.push(key);
      else if (model && state.embeddingModel !== model) toEmbed.push(key);
    }
    const removed = [...states.keys()].filter((key) => !wanted.has(key));
    await store.remove(fingerprint, removed);

    const total = toIndex.length + toEmbed.length;
    let done = 0;
    const batchSize = this.options.batchSize ?? 32;
    if (total > 0) this.options.onProgress?.(0, total);
    for (let start = 0; start < toIndex.length; start += batchSize) {
      const batch = toIndex.slice(start, start + batchSize).map((key) => wanted.get(key)!);
      const entries: IndexEntry[] = [];
      for (const item of batch) {
        const hints = this.options.sampler ? await this.options.sampler(item.table) : enumHints(item.table);
        entries.push({
          tableKey: displayKey(item.table),
          catalogHash: item.hash,
          document: tableDocument(item.table, hints, item.incoming),
          embedding: null,
          embeddingModel: null,
          valueHints: hints,
        });
      }
      if (embed) await this.embedInto(entries);
      await store.upsert(fingerprint, entries);
      done += batch.length;
      this.options.onProgress?.(done, total);
    }
    if (toEmbed.length > 0 && model) {
      const stored = new Map((await store.load(fingerprint)).map((entry) => [entry.tableKey, entry]));
      for (let start = 0; start < toEmbed.length; start += batchSize) {
        const entries = toEmbed
          .slice(start, start + batchSize)
          .map((key) => stored.get(key))
          .filter((entry): entry is IndexEntry => entry !== undefined);
        await this.embedInto(entries);
        if (!this.embeddingModelId) break;
        await store.upsert(fingerprint, entries);
        done += entries.length;
        this.options.onProgress?.(done, total);
      }
    }

    const hintsByKey = new Map(
      (await store.load(fingerprint)).map((entry) => [entry.tableKey, entry.valueHints]),
    );
    const tables: IndexedTable[] = [...wanted].map(([key, item]) => ({
      key,
      table: item.table,
      hints: hintsByKey.get(key) ?? enumHints(item.table),
      incoming: item.incoming,
    }));
    const report: SyncReport = {
      indexed: toIndex,
      reembedded: model && this.embeddingModelId ? toEmbed : [],
      removed,
      unchanged: wanted.size - toIndex.length - toEmbed.length,
      durationMs: performance.now() - started,
    };
    // Embedded only when the model answered (or there is none): otherwise a later sync fills them in.
    const embedded = embed && (!this.options.embedding || this.embeddingModelId !== null);
    this.synced = { schema, embedded, tables, report };
    return report;
  }

  /**
   * Embeds `entries`' documents in place. On failure the index goes lexical for the back-off
   * ({@link SchemaIndexOptions.retryAfterMs}, one warning), so a down model server costs one failed
   * call per back-off, not one per batch, and is used again once it answers.
   */
  private async embedInto(entries: IndexEntry[]): Promise<void> {
    const model = this.options.embedding;
    if (!model || this.embeddingDisabled || entries.length === 0) return;
    try {
      const vectors = await model.embed(entries.map((entry) => entry.document));
      entries.forEach((entry, i) => {
        entry.embedding = vectors[i] ?? null;
        entry.embeddingModel = vectors[i] ? model.id : null;
      });
    } catch (error) {
      this.disableEmbedding(model, error);
    }
  }

  /** Relations of the last synced schema. @throws Error when {@link sync} was never called. */
  tables(): IndexedTable[] {
    if (!this.synced) throw new Error('SchemaIndex.tables() before sync()');
    return this.synced.tables;
  }

  /**
   * The `topK` tables whose documents are nearest to `text`; empty when lexical only or when the
   * embedding model fails (one warning; tried again after the back-off).
   */
  async nearest(text: string, topK: number): Promise<Neighbour[]> {
    const model = this.options.embedding;
    if (!model || this.embeddingDisabled) return [];
    let vector: number[] | undefined;
    try {
      [vector] = await model.embed([text]);
    } catch (error) {
      this.disableEmbedding(model, error);
      return [];
    }
    if (!vector) return [];
    return this.options.store.nearest(this.options.fingerprint, vector, model.id, topK);
  }
}
