/**
 * The memory logic as one small service over the store: the durable
 * write path (pending write → extraction → reconciliation → write, serialized per scope), recall,
 * plain-language forgetting and model-free additions. The store is reached only through the
 * methods listed in {@link MemoryBackend}.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  CREDENTIAL_MASK,
  type CredentialFinding,
  describeCredentials,
  findCredentials,
  maskCredentials,
} from '../core/credentials.js';
import { isSqlrecallError, SqlrecallError } from '../core/errors.js';
import {
  MEMORY_KINDS,
  type Memory,
  type MemoryKind,
  type MemoryOp,
  type MemoryOrigin,
  type MemoryScope,
  type MemoryWriteResult,
} from '../core/memory.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { MemoryChange } from '../core/steps.js';
import { renderSchema } from '../sql/render.js';
import {
  type ConversationContext,
  type ConversationStore,
  loadConversation,
  recordTurn,
} from './conversation.js';
import { checkFact, DEFAULT_MAX_FACTS, type ExtractedFact, extractFacts } from './extract.js';
import { type ForgetResult, findForgetTarget } from './forget.js';
import { callJson } from './json-call.js';
import { checkMemoryText, MAX_MEMORY_TEXT_CHARS, memoryTextLength, memoryTextPreview } from './limits.js';
import { buildCompileMessages, MEMORY_PURPOSES } from './prompts.js';
import { embedQuery, type RecalledMemory, recallMemories } from './recall.js';
import { reconcileFact } from './reconcile.js';
import { checkFragment } from './sql-fragment.js';
import { PendingWithdrawnError } from './store/pending.js';
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
  | 'pendingScopes'
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
  /** The day of `expiresAt` as the message named it (`YYYY-MM-DD` in the user's zone). */
  expiresOn: z.string().nullable().optional(),
  /** The whole message as the user wrote it (provenance); default `message`. */
  words: z.string().optional(),
});
/** See {@link pendingLearnSchema}. */
export type PendingLearn = z.output<typeof pendingLearnSchema>;

/**
 * Payload of a queued compile: a memory taught while the model was unreachable, stored without SQL,
 * whose predicate or metric expression is still to be written (applied when the model is back).
 */
export const pendingCompileSchema = z.object({
  type: z.literal('compile'),
  memoryId: z.string(),
  /** The text compiled; a memory edited since then is left alone. */
  text: z.string(),
});
/** See {@link pendingCompileSchema}. */
export type PendingCompile = z.output<typeof pendingCompileSchema>;

/**
 * Payload of a queued teaching: a fact given by hand (`memory add`, `POST /api/memories`, MCP
 * `remember`) while the model server was wholly down, so it could be neither embedded nor
 * compiled. It passed the credential screen (a secret is never queued) and its SQL, when given,
 * was checked; it is taught through {@link MemoryService.teach} once the server answers.
 */
export const pendingTeachSchema = z.object({
  type: z.literal('teach'),
  kind: z.enum(MEMORY_KINDS),
  text: z.string().min(1),
  /** The SQL the user gave (already checked), else null: the model writes it when applied. */
  sql: z.string().nullable(),
  expiresAt: z.string().nullable(),
  expiresOn: z.string().nullable(),
  pinned: z.boolean(),
});
/** See {@link pendingTeachSchema}. */
export type PendingTeach = z.output<typeof pendingTeachSchema>;

/** The sentence a reply gives for a teaching queued while the model server is down. */
export const QUEUED_NOTE = 'Saved; it will be applied when the model server is reachable.';

/** Kinds whose memories are applied through SQL: a predicate (preference, term) or an expression (metric). */
export const KINDS_WITH_SQL: readonly MemoryKind[] = ['preference', 'term', 'metric'];

/** A fact to teach through {@link MemoryService.teach}. */
export interface TeachFact {
  /** Default `preference`. */
  kind?: MemoryKind;
  text: string;
  /** The SQL form the user wrote; checked strictly (an unknown name is an error, nothing stored). */
  sql?: string | null;
}

/** Options of {@link MemoryService.teach}. */
export interface TeachOptions {
  /** The introspected schema the SQL is checked against (without it only the parse and guard). */
  schema?: Schema;
  /** When the memory stops being recalled (ISO timestamp), default never. */
  expiresAt?: string | null;
  /** The day of `expiresAt` as the user typed it (`YYYY-MM-DD`), stored beside it. */
  expiresOn?: string | null;
  sourceMessageId?: string | null;
  signal?: AbortSignal;
  /**
   * Store it pinned (always recalled), in the same write as the memory itself: a fact already
   * remembered (NOOP) or updated is pinned in that same transaction. Default false.
   */
  pinned?: boolean;
  /**
   * When the model server is unreachable for the embedding, queue the fact as a pending write
   * (`pending` in the result) instead of failing. Default true; false when applying the queue.
   */
  queueWhenDown?: boolean;
  /**
   * The queued teaching this call applies: taken out of the queue in the same transaction as the
   * memory's write, and when it was withdrawn meanwhile nothing is written (see `applyPendingTeach`).
   */
  pendingId?: string;
}

/** What {@link MemoryService.teach} did. */
export interface TeachResult extends LearnResult {
  /** Credentials found in the text (masked); when any, nothing was stored. */
  refused: { label: string; masked: string }[];
  /**
   * How the SQL came about: `given` (the user's, checked), `compiled` (written by the model, checked),
   * `definition` (stored without SQL: the model could not write a checkable one), `pending` (the
   * model was unreachable: stored without SQL, compiled later), `none` (the kind needs no SQL, or
   * no model is configured), `refused` (nothing stored).
   */
  sqlSource: 'given' | 'compiled' | 'definition' | 'pending' | 'none' | 'refused';
  /**
   * Set when the model server could not be reached to embed the fact: it was stored as a pending
   * write (`id`) and is taught when the server answers; `changes` is then empty.
   */
  pending?: { id: string };
  /** Set when the queued teaching being applied had been withdrawn: nothing was written. */
  withdrawn?: true;
}

/** The error of a teaching refused because its text holds a credential (nothing was stored). */
export function refusalError(result: Pick<TeachResult, 'problems' | 'refused'>): SqlrecallError {
  return new SqlrecallError('credential_refused', result.problems[0] ?? 'The text holds a credential.', {
    details: { found: result.refused },
  });
}

/** The reply sentence for credentials found in taught text. */
export function credentialProblem(findings: CredentialFinding[]): string {
  return `Not stored: it holds ${describeCredentials(findings)}. Secrets are never kept in memory; nothing of that was stored.`;
}

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

const hasSecret = (text: string) => findCredentials(text).length > 0;

/** Reply sentence when a message arrived with its credentials masked already. */
const SECRET_SENTENCES_NOTE =
  'The part of your message that held a secret (shown masked) was not stored; secrets are never kept in memory.';

/**
 * `message` without the sentences that hold a credential or a masked one ({@link CREDENTIAL_MASK}):
 * sentences end at `.`, `!`, `?` or `;` followed by whitespace, or at a line break. Credentials are
 * masked first, so a multi-line private key counts as one sentence. '' when nothing is left.
 */
export function withoutSecretSentences(message: string): string {
  const masked = maskCredentials(message);
  if (!masked.includes(CREDENTIAL_MASK)) return message.trim();
  return masked
    .split(/(?<=[.!?;])\s+|\n+/)
    .filter((sentence) => sentence.trim() !== '' && !sentence.includes(CREDENTIAL_MASK))
    .join(' ')
    .trim();
}

const scopeKey = (scope: MemoryScope) => (scope.team !== undefined ? `t:${scope.team}` : `u:${scope.user}`);

/** Memory logic over one store. */
export class MemoryService {
  private readonly locks = new Map<string, Promise<unknown>>();

  constructor(readonly options: MemoryServiceOptions) {}

  private get store(): MemoryBackend {
    return this.options.store;
  }

  /** The active memories of `scope` (the chat's "what do you remember?"). */
  activeMemories(scope: MemoryScope): Promise<Memory[]> {
    return this.store.list(scope, { statuses: ['active'] });
  }

  /** The recent turns and summary of conversation `conversationId` of `scope`, for the SQL prompt. */
  conversation(scope: MemoryScope, conversationId: string): Promise<ConversationContext> {
    return loadConversation(this.store, scope, conversationId);
  }

  /** Appends one turn to conversation `conversationId` of `scope` (see `conversation.ts` `recordTurn`). */
  recordTurn(
    scope: MemoryScope,
    conversationId: string,
    turn: Parameters<typeof recordTurn>[3],
    options: Parameters<typeof recordTurn>[4] = {},
  ): Promise<void> {
    return recordTurn(this.store, scope, conversationId, turn, options);
  }

  /** Records that an answer applied memories `ids` of `scope` now ("last applied"); a no-op without support. */
  async markApplied(scope: MemoryScope, ids: string[]): Promise<void> {
    if (ids.length > 0) await this.store.markApplied?.(scope, ids);
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
      expiresOn?: string | null;
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
    // A credential never reaches the model or the store: the sentences holding one (or its mask,
    // when the caller masked the message already) are left out before extraction, facts that
    // still carry one are refused, and the reply says what was found.
    const findings = findCredentials(message);
    const teachable = withoutSecretSentences(message);
    return this.serialized(scope, async () => {
      if (teachable === '') {
        const problems = findings.length > 0 ? [credentialProblem(findings)] : [SECRET_SENTENCES_NOTE];
        return { changes: [], problems };
      }
      const extraction = await extractFacts(teachable, {
        chat,
        schema: options.schema,
        maxFacts: this.options.maxFacts ?? DEFAULT_MAX_FACTS,
        signal: options.signal,
        log: this.options.log,
      });
      const facts = extraction.facts.filter(
        (f) =>
          !hasSecret(`${f.text}\n${f.sql ?? ''}`) &&
          !f.text.includes(CREDENTIAL_MASK) &&
          !(f.sql ?? '').includes(CREDENTIAL_MASK),
      );
      const refused =
        findings.length > 0
          ? [credentialProblem(findings)]
          : teachable !== message.trim()
            ? [SECRET_SENTENCES_NOTE]
            : [];
      for (const f of extraction.facts) {
        if (facts.includes(f) || findings.length > 0) continue;
        const found = findCredentials(`${f.text}\n${f.sql ?? ''}`);
        refused.push(
          found.length > 0
            ? credentialProblem(found)
            : `Not stored: "${clip(maskCredentials(f.text), 100)}" holds a masked secret.`,
        );
      }
      const result = await this.storeFacts(scope, facts, {
        chat,
        sourceMessageId: options.sourceMessageId,
        signal: options.signal,
        expiresAt: options.expiresAt,
        expiresOn: options.expiresOn,
        origin: options.origin ?? { how: 'chat', words: message },
      });
      return { changes: result.changes, problems: [...refused, ...extraction.problems, ...result.problems] };
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
      /** The day of `expiresAt` as typed, stored beside it. */
      expiresOn?: string | null;
      origin?: MemoryOrigin;
      /** Pin each stored fact in the same write (see {@link TeachOptions.pinned}). */
      pinned?: boolean;
      /** The queued write the first fact's write consumes (see {@link TeachOptions.pendingId}). */
      pendingId?: string;
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
      if ('memory' in decision.op) {
        decision.op.memory.origin =
          options.origin ?? (options.sourceMessageId ? { how: 'chat' } : { how: 'hand' });
        decision.op.memory.expiresOn = decision.op.memory.expiresAt ? (options.expiresOn ?? null) : null;
      }
      const ops: MemoryOp[] = [decision.op];
      if (options.pinned) {
        // One write, one transaction: the memory and its pin land together or not at all.
        if (decision.op.op === 'add' || decision.op.op === 'supersede') decision.op.memory.pinned = true;
        else if (decision.op.op === 'update')
          ops.push({ op: 'pin', id: decision.op.id, pinned: true, reason: 'pinned on add' });
        else if (decision.op.op === 'noop' && decision.target)
          ops.push({ op: 'pin', id: decision.target.id, pinned: true, reason: 'pinned on add' });
      }
      const results =
        index === 0 && options.pendingId !== undefined
          ? await this.store.write(scope, ops, { pendingId: options.pendingId })
          : await this.store.write(scope, ops);
      const [written] = results;
      const change = written
        ? changeOf(written, fact.text, fact.kind, decision.reason)
        : { action: 'NOOP' as const, id: decision.target?.id ?? null, kind: fact.kind, text: fact.text };
      if (options.pinned && results.some((r) => r.memory?.pinned === true)) change.pinned = true;
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
        expiresOn: payload.expiresOn ?? null,
        origin: {
          how: 'chat',
          conversationId: payload.conversationId ?? null,
          words: payload.words ?? payload.message,
        },
      });
      await this.store.completePending(scope, id);
      return result;
    } catch (error) {
      await this.store
        .failPending(scope, id, (error as Error).message ?? String(error), { retry: true })
        .catch(() => undefined);
      throw error;
    }
  }

  /**
   * Applies queued writes: those of `options.scope` only when given (a user's own command), else
   * those of every scope (start-up after a crash, a server whose model server came back: they do
   * not know the users), claimed scope by scope so each write is read and applied in its own
   * scope. Each write is tried once per call; failures stay queued (logged).
   */
  async recoverPending(
    options: { schema?: Schema; limit?: number; scope?: MemoryScope } = {},
  ): Promise<{ applied: number; failed: number }> {
    const total = { applied: 0, failed: 0 };
    const seen = new Set<string>();
    if (options.scope) {
      await this.recoverScope(options.scope, seen, total, options);
      return total;
    }
    const done = new Set<string>();
    for (;;) {
      const scopes = (await this.store.pendingScopes()).filter((s) => !done.has(scopeKey(s)));
      if (scopes.length === 0) break;
      for (const scope of scopes) {
        done.add(scopeKey(scope));
        await this.recoverScope(scope, seen, total, options);
      }
    }
    return total;
  }

  /** Applies the queued writes of one scope (see {@link recoverPending}), counting into `total`. */
  private async recoverScope(
    scope: MemoryScope,
    seen: Set<string>,
    total: { applied: number; failed: number },
    options: { schema?: Schema; limit?: number },
  ): Promise<void> {
    for (;;) {
      const batch = (await this.store.takePending(scope, { limit: options.limit ?? 20 })).filter(
        (p) => !seen.has(p.id),
      );
      if (batch.length === 0) return;
      for (const pending of batch) {
        seen.add(pending.id);
        const outcome = await this.applyOne(scope, pending, options.schema);
        if (outcome !== 'withdrawn') total[outcome] += 1;
      }
    }
  }

  /** Applies one claimed write of `scope` by its payload's type; failures stay queued (logged). */
  private async applyOne(
    scope: MemoryScope,
    pending: { id: string; payload: unknown },
    schema: Schema | undefined,
  ): Promise<'applied' | 'failed' | 'withdrawn'> {
    const compile = pendingCompileSchema.safeParse(pending.payload);
    const teach = compile.success ? undefined : pendingTeachSchema.safeParse(pending.payload);
    const learn =
      compile.success || teach?.success ? undefined : pendingLearnSchema.safeParse(pending.payload);
    if (learn && !learn.success) {
      await this.store.failPending(scope, pending.id, 'unreadable pending write payload', { retry: false });
      return 'failed';
    }
    try {
      if (compile.success) await this.applyPendingCompile(pending.id, scope, compile.data, { schema });
      else if (teach?.success) {
        const taught = await this.applyPendingTeach(pending.id, scope, teach.data, { schema });
        if (taught.withdrawn) return 'withdrawn';
      } else if (learn?.success) await this.applyPending(pending.id, scope, learn.data, { schema });
      return 'applied';
    } catch (error) {
      const what = compile.success ? 'compile' : teach?.success ? 'teaching' : 'write';
      this.options.log?.(`pending memory ${what} failed`, {
        id: pending.id,
        error: (error as Error).message,
      });
      return 'failed';
    }
  }

  /** The memories for one question (standing preferences, term matches, similar ones). */
  async recall(input: {
    user: string;
    team?: string;
    question: string;
    tablesInPlay: string[];
    without?: string[];
    signal?: AbortSignal;
    /** Told when the memories were found by words because the question's embedding was degenerate. */
    onNote?: (note: string) => void;
  }): Promise<RecalledMemory[]> {
    const embedding = await embedQuery(this.options.embedder, input.question, input.signal);
    const without = input.without ?? [];
    const recalled = await recallMemories({
      store: this.store,
      user: input.user,
      team: input.team,
      question: input.question,
      embedding,
      tablesInPlay: input.tablesInPlay,
      topK: this.options.topK,
      minSimilarity: this.options.minSimilarity,
      onNote: input.onNote,
    });
    return recalled.filter(
      (r) => !without.some((w) => w.length >= 4 && r.memory.id.startsWith(w.toLowerCase())),
    );
  }

  /**
   * The one teaching path of `memory add`, MCP `remember`, `POST /api/memories` (chat and import
   * screen their facts the same way through {@link learn} and {@link screenImport}):
   * 1. text or SQL holding a credential → nothing stored, `refused` and a problem say what (masked);
   * 2. SQL given → checked against `schema` like chat's; a fact whose SQL does not check is an error;
   * 3. no SQL and a kind applied through SQL ({@link KINDS_WITH_SQL}) → the model writes it, checked
   *    the same way; when it cannot, the fact is stored as a definition (no SQL) and a problem says
   *    so; when the model is unreachable the fact is stored without SQL and a pending compile is
   *    queued (applied by {@link recoverPending}), so nothing is lost;
   * 4. reconciliation and write as {@link add}.
   * @throws SqlrecallError `invalid_memory_sql` (the given SQL names an unknown table or column, or is
   *   not one read-only condition; `details.candidates` holds the closest real names), `usage` (the
   *   text is over `MAX_MEMORY_TEXT_CHARS`: nothing stored or queued)
   */
  async teach(scope: MemoryScope, fact: TeachFact, options: TeachOptions = {}): Promise<TeachResult> {
    const kind = fact.kind ?? 'preference';
    checkMemoryText(fact.text);
    const text = fact.text.trim();
    const given = fact.sql?.trim() || null;
    const findings = findCredentials(given ? `${text}\n${given}` : text);
    if (findings.length > 0)
      return {
        changes: [],
        problems: [credentialProblem(findings)],
        refused: findings.map((f) => ({ label: f.label, masked: f.masked })),
        sqlSource: 'refused',
      };
    if (given) {
      const check = await checkFragment(given, options.schema);
      if (!check.ok)
        throw new SqlrecallError(
          'invalid_memory_sql',
          `The SQL "${clip(given, 200)}" does not check: ${check.reason}. Nothing was stored.`,
          {
            details: {
              sql: clip(given, 500),
              ...(check.unknown ? { unknown: check.unknown } : {}),
              ...(check.candidates?.length ? { candidates: check.candidates } : {}),
              hint: 'Fix the SQL, or leave it out and the model will write it.',
            },
          },
        );
    }
    const chat = this.options.chat;
    let sql = given;
    let sqlSource: TeachResult['sqlSource'] = given ? 'given' : 'none';
    const problems: string[] = [];
    let compileLater = false;
    if (!given && chat && KINDS_WITH_SQL.includes(kind)) {
      try {
        const compiled = await this.compile(kind, text, options.schema, options.signal);
        if (compiled.sql) {
          sql = compiled.sql;
          sqlSource = 'compiled';
        } else {
          sqlSource = 'definition';
          problems.push(
            `Stored as a definition without SQL: ${compiled.reason}. It reaches the prompt but is not checked in the SQL.`,
          );
        }
      } catch (error) {
        if (!isSqlrecallError(error) || !error.code.startsWith('model_')) throw error;
        compileLater = true;
        sqlSource = 'pending';
        problems.push(
          `The model is not reachable (${error.message}); stored without SQL, it will be compiled when the model is back.`,
        );
      }
    }
    let result: LearnResult;
    try {
      result = await this.serialized(scope, async () => {
        const checked = await checkFact({ kind, text, sql }, options.schema);
        return this.storeFacts(scope, [checked], {
          expiresAt: options.expiresAt ?? null,
          expiresOn: options.expiresOn ?? null,
          sourceMessageId: options.sourceMessageId ?? undefined,
          pinned: options.pinned === true,
          ...(options.pendingId !== undefined ? { pendingId: options.pendingId } : {}),
        });
      });
    } catch (error) {
      if (options.queueWhenDown === false || !isSqlrecallError(error, 'model_unreachable')) throw error;
      // Nothing could be embedded: the fact (screened and checked above) waits in the durable
      // queue rather than being lost, and is taught when the model server is back.
      const payload: PendingTeach = {
        type: 'teach',
        kind,
        text,
        sql: given,
        expiresAt: options.expiresAt ?? null,
        expiresOn: options.expiresAt ? (options.expiresOn ?? null) : null,
        pinned: options.pinned === true,
      };
      const id = await this.store.enqueuePending(scope, payload);
      return { changes: [], problems: [QUEUED_NOTE], refused: [], sqlSource: 'pending', pending: { id } };
    }
    if (compileLater) {
      for (const change of result.changes) {
        if (!change.id || change.action === 'NOOP' || change.action === 'DELETE') continue;
        const payload: PendingCompile = { type: 'compile', memoryId: change.id, text: change.text };
        await this.store.enqueuePending(scope, payload);
      }
    }
    return { changes: result.changes, problems: [...problems, ...result.problems], refused: [], sqlSource };
  }

  /**
   * Imports an export document (`memory import`, `POST /api/memories/import`) after the same
   * credential screen as {@link teach}: memories whose text or SQL holds a credential are left out
   * (with their history), other history lines holding one are dropped, and `problems` says what
   * was left out (masked); so are memories whose text is over `MAX_MEMORY_TEXT_CHARS`, as every
   * teaching path refuses them. The rest goes to the store's import unchanged.
   * @throws SqlrecallError `usage` when the document is not a valid export (from the store)
   */
  async importDoc(
    scope: MemoryScope,
    doc: unknown,
    store: Pick<SqlMemoryStore, 'import'>,
  ): Promise<Awaited<ReturnType<SqlMemoryStore['import']>> & { problems: string[] }> {
    const problems: string[] = [];
    let screened = doc;
    if (doc && typeof doc === 'object' && Array.isArray((doc as { memories?: unknown }).memories)) {
      const source = doc as { memories: unknown[]; history?: unknown };
      const left = new Set<string>();
      const memories = source.memories.filter((m) => {
        const item = (m ?? {}) as { id?: unknown; text?: unknown; sql?: unknown };
        const found = findCredentials(`${String(item.text ?? '')}\n${String(item.sql ?? '')}`);
        const length = memoryTextLength(String(item.text ?? '').trim());
        if (found.length === 0 && length <= MAX_MEMORY_TEXT_CHARS) return true;
        if (typeof item.id === 'string') left.add(item.id);
        problems.push(
          found.length > 0
            ? credentialProblem(found)
            : `left out a memory of ${length.toLocaleString('en')} characters (the limit is ${MAX_MEMORY_TEXT_CHARS.toLocaleString('en')}): "${memoryTextPreview(String(item.text))}"`,
        );
        return false;
      });
      const history = Array.isArray(source.history)
        ? source.history.filter((h) => {
            const entry = (h ?? {}) as { memoryId?: unknown; oldText?: unknown; newText?: unknown };
            if (typeof entry.memoryId === 'string' && left.has(entry.memoryId)) return false;
            return !hasSecret(`${String(entry.oldText ?? '')}\n${String(entry.newText ?? '')}`);
          })
        : source.history;
      screened = { ...source, memories, ...(history === undefined ? {} : { history }) };
    }
    const result = await store.import(scope, screened, (texts) => this.options.embedder.embed(texts));
    return { ...result, problems };
  }

  /**
   * The model's SQL form of one fact, checked against `schema` as chat's extracted SQL is:
   * `{ sql }` when it checks, `{ sql: null, reason }` when the model wrote none or it did not check.
   * @throws SqlrecallError `model_*` when the model server fails
   */
  async compile(
    kind: MemoryKind,
    text: string,
    schema?: Schema,
    signal?: AbortSignal,
  ): Promise<{ sql: string | null; reason: string }> {
    const chat = this.options.chat;
    if (!chat) return { sql: null, reason: 'no model is configured to write its SQL' };
    const schemaText = schema ? renderSchema(schema, { includeComments: false }) : '';
    const reply = await callJson(
      chat,
      buildCompileMessages({ kind, text, schemaText }),
      z.object({ sql: z.string().nullable() }),
      { purpose: MEMORY_PURPOSES.compile, maxTokens: 300, signal },
    );
    if (!reply.ok) return { sql: null, reason: `the model's reply was not readable (${reply.error})` };
    const written = reply.value.sql?.trim();
    if (!written || /^null$/i.test(written))
      return { sql: null, reason: 'the model found no SQL form for it on this schema' };
    if (hasSecret(written)) return { sql: null, reason: 'the SQL the model wrote held a credential' };
    const check = await checkFragment(written, schema);
    if (!check.ok) return { sql: null, reason: `the SQL the model wrote did not check (${check.reason})` };
    return { sql: check.sql, reason: '' };
  }

  /**
   * Applies one queued compile: writes the SQL of a memory taught while the model was unreachable,
   * unless it was edited, deleted or given SQL since. Removes it from the queue once done.
   * @throws SqlrecallError `model_*` (the compile stays queued for a retry)
   */
  async applyPendingCompile(
    id: string,
    scope: MemoryScope,
    payload: PendingCompile,
    options: { schema?: Schema; signal?: AbortSignal } = {},
  ): Promise<void> {
    try {
      const current = await this.store.get(scope, payload.memoryId);
      if (current && current.status === 'active' && !current.sql && current.text === payload.text) {
        const compiled = await this.compile(current.kind, current.text, options.schema, options.signal);
        if (compiled.sql) await this.edit(scope, current, { sql: compiled.sql }, options.schema);
      }
      await this.store.completePending(scope, id);
    } catch (error) {
      await this.store
        .failPending(scope, id, (error as Error).message ?? String(error), { retry: true })
        .catch(() => undefined);
      throw error;
    }
  }

  /**
   * Applies one queued teaching ({@link pendingTeachSchema}) through {@link teach} and removes it
   * from the queue; when the model server is still down it stays queued for a retry.
   * @throws SqlrecallError `model_*` (kept queued), `invalid_memory_sql` (the schema changed since:
   *   marked failed, never retried, still listed)
   */
  async applyPendingTeach(
    id: string,
    scope: MemoryScope,
    payload: PendingTeach,
    options: { schema?: Schema; signal?: AbortSignal } = {},
  ): Promise<TeachResult> {
    try {
      const result = await this.teach(
        scope,
        { kind: payload.kind, text: payload.text, sql: payload.sql },
        {
          schema: options.schema,
          expiresAt: payload.expiresAt,
          expiresOn: payload.expiresOn,
          pinned: payload.pinned,
          signal: options.signal,
          queueWhenDown: false,
          pendingId: id,
        },
      );
      // Usually gone already (consumed with the write); a teaching refused before any write is not.
      await this.store.completePending(scope, id);
      return result;
    } catch (error) {
      // Withdrawn by its owner while it was being applied: nothing was written, nothing to retry.
      if (error instanceof PendingWithdrawnError)
        return { changes: [], problems: [error.message], refused: [], sqlSource: 'none', withdrawn: true };
      const retry = isSqlrecallError(error) && error.code.startsWith('model_');
      await this.store
        .failPending(scope, id, (error as Error).message ?? String(error), { retry })
        .catch(() => undefined);
      throw error;
    }
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
    options: { expiresAt?: string | null; expiresOn?: string | null; origin?: MemoryOrigin } = {},
  ): Promise<LearnResult> {
    try {
      checkMemoryText(fact.text);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.serialized(scope, async () => {
      const checked = await checkFact(fact, schema);
      return this.storeFacts(scope, [checked], {
        expiresAt: options.expiresAt ?? null,
        expiresOn: options.expiresOn ?? null,
        origin: options.origin ?? { how: 'hand' },
      });
    });
  }

  /**
   * Edits an active memory in place (`memory edit`, `PATCH /api/memories/:id`): kind, text and SQL
   * default to the current ones; the SQL is checked against `schema` like a new fact's, and the
   * history keeps the old text.
   * @returns the updated memory and any problem (e.g. SQL dropped because it did not check out)
   * @throws SqlrecallError `credential_refused` when the new text or SQL holds a credential (nothing changed)
   */
  edit(
    scope: MemoryScope,
    current: Memory,
    change: {
      kind?: MemoryKind;
      text?: string;
      sql?: string | null;
      /** A new expiry (instant and typed day); absent: the current one is kept. */
      until?: { expiresAt: string; expiresOn: string };
    },
    schema?: Schema,
  ): Promise<{ memory: Memory; problems: string[] }> {
    try {
      if (change.text !== undefined) checkMemoryText(change.text);
    } catch (error) {
      return Promise.reject(error);
    }
    const found = findCredentials(`${change.text ?? ''}\n${change.sql ?? ''}`);
    if (found.length > 0)
      return Promise.reject(
        refusalError({
          problems: [credentialProblem(found)],
          refused: found.map((f) => ({ label: f.label, masked: f.masked })),
        }),
      );
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
            // An edit keeps the expiry unless it sets one: the update writes every column.
            expiresAt: change.until?.expiresAt ?? current.expiresAt,
            expiresOn: change.until ? change.until.expiresOn : (current.expiresOn ?? null),
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
