/**
 * The memory logic as one small service over the store (DESIGN.md "Memory model"): the durable
 * write path (pending write → extraction → reconciliation → write, serialized per scope), recall,
 * plain-language forgetting and model-free additions. The store is reached only through the
 * methods listed in {@link MemoryBackend}.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import type { Memory, MemoryKind, MemoryOrigin, MemoryScope, MemoryWriteResult } from '../core/memory.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { MemoryChange } from '../core/steps.js';
import type { ConversationStore } from './conversation.js';
import { checkFact, DEFAULT_MAX_FACTS, type ExtractedFact, extractFacts } from './extract.js';
import { type ForgetResult, findForgetTarget } from './forget.js';
import { type RecalledMemory, recallMemories } from './recall.js';
import { reconcileFact } from './reconcile.js';
import type { SqlMemoryStore } from './store/types.js';
import { clip } from './text.js';
import { DEFAULT_THRESHOLDS, type SimilarityThresholds } from './thresholds.js';

/** The store methods the memory logic uses (a subset of `SqlMemoryStore`). */
export type MemoryBackend = Pick<
  SqlMemoryStore,
  | 'write'
  | 'search'
  | 'list'
  | 'get'
  | 'enqueuePending'
  | 'takePending'
  | 'completePending'
  | 'failPending'
  | 'isEnabled'
> &
  /** Recall's reads of a scope at once (the SQL store); without it recall uses `list` and `search`. */
  Partial<Pick<SqlMemoryStore, 'recallReads'>> &
  /** Records when answers applied memories (the SQL store); without it nothing is recorded. */
  Partial<Pick<SqlMemoryStore, 'markApplied'>> &
  ConversationStore;

/** Payload of a queued write: a user message whose facts are still to be learned. */
export const pendingLearnSchema = z.object({
  type: z.literal('learn'),
  /** The user's words to extract facts from (the instruction part of the message). */
  message: z.string(),
  messageId: z.string(),
  conversationId: z.string().nullable().optional(),
  /** When the learned memories expire (ISO timestamp), when the message said so ("for this week"). */
  expiresAt: z.string().nullable().optional(),
  /** The whole message as the user wrote it (provenance); default `message`. */
  words: z.string().optional(),
});
/** See {@link pendingLearnSchema}. */
export type PendingLearn = z.output<typeof pendingLearnSchema>;

/** What one learn did. */
export interface LearnResult {
  changes: MemoryChange[];
  /** Sentences for the user: unreadable facts, dropped SQL, facts over the limit. */
  problems: string[];
}

/** Options of {@link MemoryService}. */
export interface MemoryServiceOptions {
  store: MemoryBackend;
  embedder: EmbeddingModel;
  /** Extraction and grey-zone decisions; without it only model-free additions work. */
  chat?: ChatModel;
  thresholds?: SimilarityThresholds;
  /** Most facts per message (default 2). */
  maxFacts?: number;
  /** Similarity recall: top-k (default 5) and least similarity (default 0.3). */
  topK?: number;
  minSimilarity?: number;
  log?: (message: string, details: Record<string, unknown>) => void;
}

/** The change a write result stands for. */
export function changeOf(
  result: MemoryWriteResult,
  fallbackText: string,
  kind: MemoryKind,
  reason?: string,
): MemoryChange {
  const action =
    result.duplicate || result.op === 'noop'
      ? 'NOOP'
      : (
          {
            add: 'ADD',
            update: 'UPDATE',
            supersede: 'SUPERSEDE',
            delete: 'DELETE',
            restore: 'RESTORE',
            pin: 'UPDATE',
          } as const
        )[result.op];
  return {
    action,
    id: result.memory?.id ?? null,
    kind: result.memory?.kind ?? kind,
    text: result.memory?.text ?? fallbackText,
    ...(reason ? { reason } : {}),
  };
}

const scopeKey = (scope: MemoryScope) => (scope.team !== undefined ? `t:${scope.team}` : `u:${scope.user}`);

/** Memory logic over one store. */
export class MemoryService {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(readonly options: MemoryServiceOptions) {}

  get store(): MemoryBackend {
    return this.options.store;
  }

  /** Runs `task` after every earlier task of the same scope (in this process; the store locks across processes). */
  private serialized<T>(scope: MemoryScope, task: () => Promise<T>): Promise<T> {
    const key = scopeKey(scope);
    const previous = this.locks.get(key) ?? Promise.resolve();
    const run = previous.then(task, task);
    const tail = run.catch(() => undefined);
    this.locks.set(key, tail);
    void tail.then(() => {
      if (this.locks.get(key) === tail) this.locks.delete(key);
    });
    return run;
  }

  /** Whether memory is on for the scope. */
  isEnabled(scope: MemoryScope): Promise<boolean> {
    return this.store.isEnabled(scope);
  }

  /**
   * Extracts the facts of `message` and reconciles and writes each, serialized per scope.
   * @throws SqlrecallError `model_*` (extraction could not run: the caller keeps the pending write)
   */
  learn(
    scope: MemoryScope,
    message: string,
    options: {
      schema?: Schema;
      sourceMessageId?: string;
      signal?: AbortSignal;
      expiresAt?: string | null;
      /** Where the learned memories come from (provenance); default: taught in chat, these words. */
      origin?: MemoryOrigin;
    } = {},
  ): Promise<LearnResult> {
    const chat = this.options.chat;
    if (!chat)
      return Promise.resolve({
        changes: [],
        problems: ['No chat model is configured to learn from messages.'],
      });
    return this.serialized(scope, async () => {
      const extraction = await extractFacts(message, {
        chat,
        schema: options.schema,
        maxFacts: this.options.maxFacts ?? DEFAULT_MAX_FACTS,
        signal: options.signal,
        log: this.options.log,
      });
      const result = await this.storeFacts(scope, extraction.facts, {
        chat,
        sourceMessageId: options.sourceMessageId,
        signal: options.signal,
        expiresAt: options.expiresAt,
        origin: options.origin ?? { how: 'chat', words: message },
      });
      return { changes: result.changes, problems: [...extraction.problems, ...result.problems] };
    });
  }

  /** Reconciles and writes facts one by one (each sees the previous one's write). */
  private async storeFacts(
    scope: MemoryScope,
    facts: ExtractedFact[],
    options: {
      chat?: ChatModel;
      sourceMessageId?: string;
      signal?: AbortSignal;
      expiresAt?: string | null;
      origin?: MemoryOrigin;
    },
  ): Promise<LearnResult> {
    const changes: MemoryChange[] = [];
    const problems: string[] = [];
    if (facts.length === 0) return { changes, problems };
    const embeddings = await this.options.embedder.embed(
      facts.map((f) => f.text),
      { signal: options.signal },
    );
    for (const [index, fact] of facts.entries()) {
      if (fact.sqlNote) problems.push(`Remembered "${clip(fact.text, 100)}" without SQL: ${fact.sqlNote}.`);
      const decision = await reconcileFact({
        scope,
        fact,
        embedding: embeddings[index]!,
        store: this.store,
        thresholds: this.options.thresholds ?? DEFAULT_THRESHOLDS,
        chat: options.chat,
        sourceMessageId: options.sourceMessageId ?? null,
        expiresAt: options.expiresAt ?? null,
        signal: options.signal,
      });
      // Provenance: said by the caller; else a message's facts were taught in chat, others by hand.
      if ('memory' in decision.op)
        decision.op.memory.origin =
          options.origin ?? (options.sourceMessageId ? { how: 'chat' } : { how: 'hand' });
      const [written] = await this.store.write(scope, [decision.op]);
      const change = written
        ? changeOf(written, fact.text, fact.kind, decision.reason)
        : { action: 'NOOP' as const, id: decision.target?.id ?? null, kind: fact.kind, text: fact.text };
      if (decision.op.op === 'supersede' && decision.target)
        change.replaced = { id: decision.target.id, text: decision.target.text };
      if (decision.op.op === 'noop' && decision.target) {
        change.id = decision.target.id;
        change.text = decision.target.text;
      }
      changes.push(change);
    }
    return { changes, problems };
  }

  /** Queues a message for learning (durable before the answer is shown); returns the pending id. */
  enqueue(scope: MemoryScope, payload: PendingLearn): Promise<string> {
    return this.store.enqueuePending(scope, payload);
  }

  /** Applies one queued write and removes it from the queue; on failure it stays queued for a retry. */
  async applyPending(
    id: string,
    scope: MemoryScope,
    payload: PendingLearn,
    options: { schema?: Schema; signal?: AbortSignal } = {},
  ): Promise<LearnResult> {
    try {
      const result = await this.learn(scope, payload.message, {
        schema: options.schema,
        sourceMessageId: payload.messageId,
        signal: options.signal,
        expiresAt: payload.expiresAt ?? null,
        origin: {
          how: 'chat',
          conversationId: payload.conversationId ?? null,
          words: payload.words ?? payload.message,
        },
      });
      await this.store.completePending(id);
      return result;
    } catch (error) {
      await this.store
        .failPending(id, (error as Error).message ?? String(error), { retry: true })
        .catch(() => undefined);
      throw error;
    }
  }

  /**
   * Applies the writes left pending by a crash (every scope: a restart does not know the users).
   * Each write is tried once per call; failures stay queued (logged).
   */
  async recoverPending(
    options: { schema?: Schema; limit?: number } = {},
  ): Promise<{ applied: number; failed: number }> {
    let applied = 0;
    let failed = 0;
    const seen = new Set<string>();
    for (;;) {
      const batch = (await this.store.takePending({ limit: options.limit ?? 20 })).filter(
        (p) => !seen.has(p.id),
      );
      if (batch.length === 0) break;
      for (const pending of batch) {
        seen.add(pending.id);
        const payload = pendingLearnSchema.safeParse(pending.payload);
        if (!payload.success) {
          await this.store.failPending(pending.id, 'unreadable pending write payload', { retry: false });
          failed += 1;
          continue;
        }
        try {
          await this.applyPending(pending.id, pending.scope, payload.data, { schema: options.schema });
          applied += 1;
        } catch (error) {
          this.options.log?.('pending memory write failed', {
            id: pending.id,
            error: (error as Error).message,
          });
          failed += 1;
        }
      }
    }
    return { applied, failed };
  }

  /** The memories for one question (standing preferences, term matches, similar ones). */
  async recall(input: {
    user: string;
    team?: string;
    question: string;
    tablesInPlay: string[];
    without?: string[];
    signal?: AbortSignal;
  }): Promise<RecalledMemory[]> {
    const [embedding] = await this.options.embedder.embed([input.question], { signal: input.signal });
    const without = input.without ?? [];
    const recalled = await recallMemories({
      store: this.store,
      user: input.user,
      team: input.team,
      question: input.question,
      embedding: embedding!,
      tablesInPlay: input.tablesInPlay,
      topK: this.options.topK,
      minSimilarity: this.options.minSimilarity,
    });
    return recalled.filter(
      (r) => !without.some((w) => w.length >= 4 && r.memory.id.startsWith(w.toLowerCase())),
    );
  }

  /**
   * Stores a fact without the model (e.g. `memory add`): SQL checked against `schema` when given,
   * exact duplicates and near-identical facts become NOOP, a preference on the same column with
   * another value supersedes the older one (see `reconcile.ts`), everything else is added.
   * `options.expiresAt` (ISO timestamp) makes the memory expire (`memory add --until`);
   * `options.origin` says where it came from (default: added by hand).
   */
  add(
    scope: MemoryScope,
    fact: { kind: MemoryKind; text: string; sql?: string | null },
    schema?: Schema,
    options: { expiresAt?: string | null; origin?: MemoryOrigin } = {},
  ): Promise<LearnResult> {
    return this.serialized(scope, async () => {
      const checked = await checkFact(fact, schema);
      return this.storeFacts(scope, [checked], {
        expiresAt: options.expiresAt ?? null,
        origin: options.origin ?? { how: 'hand' },
      });
    });
  }

  /**
   * Edits an active memory in place (`memory edit`, `PATCH /api/memories/:id`): kind, text and SQL
   * default to the current ones; the SQL is checked against `schema` like a new fact's, and the
   * history keeps the old text.
   * @returns the updated memory and any problem (e.g. SQL dropped because it did not check out)
   */
  edit(
    scope: MemoryScope,
    current: Memory,
    change: { kind?: MemoryKind; text?: string; sql?: string | null },
    schema?: Schema,
  ): Promise<{ memory: Memory; problems: string[] }> {
    return this.serialized(scope, async () => {
      const fact = await checkFact(
        {
          kind: change.kind ?? current.kind,
          text: change.text ?? current.text,
          sql: change.sql === undefined ? current.sql : change.sql,
        },
        schema,
      );
      const [embedding] = await this.options.embedder.embed([fact.text]);
      const [written] = await this.options.store.write(scope, [
        {
          op: 'update',
          id: current.id,
          memory: {
            kind: fact.kind,
            text: fact.text,
            sql: fact.sql,
            tables: fact.tables,
            columns: fact.columns,
          },
          embedding: embedding!,
          reason: 'user edited',
        },
      ]);
      return { memory: written?.memory ?? current, problems: fact.sqlNote ? [fact.sqlNote] : [] };
    });
  }

  /**
   * Deletes the one active memory that `target` designates (see {@link findForgetTarget}), serialized
   * with the scope's other writes. Ambiguous or unknown targets delete nothing.
   */
  forget(scope: MemoryScope, target: string): Promise<ForgetResult> {
    return this.serialized(scope, async () => {
      const found = findForgetTarget(await this.store.list(scope, { statuses: ['active'] }), target);
      if (!found.deleted) return found;
      const [written] = await this.store.write(scope, [
        { op: 'delete', id: found.deleted.id, reason: `user asked to forget "${clip(target, 80)}"` },
      ]);
      return { deleted: written?.memory ?? found.deleted, candidates: [] };
    });
  }

  /** What {@link forget} would delete for `target`, deleting nothing (for a confirmation question). */
  async findForget(scope: MemoryScope, target: string): Promise<ForgetResult> {
    return findForgetTarget(await this.store.list(scope, { statuses: ['active'] }), target);
  }

  /** A fresh message id for `sourceMessageId`. */
  static messageId(): string {
    return randomUUID();
  }
}
