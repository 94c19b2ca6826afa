/**
 * The memory use cases, written once for every front end (CLI `memory …`, the HTTP memory routes,
 * the MCP memory tools): list, search, add (with its pin), edit, delete, restore, pin, history,
 * show, export, import, audit, on/off. Front ends parse their input, call one of these and render
 * the result; none of them reaches the store.
 *
 * Every memory handed back carries `expiresOn` next to `expiresAt`: the last day it holds, as the
 * `YYYY-MM-DD` the user typed, in the user's time zone (the caller passes it: `SQLRECALL_TZ` or the
 * process's for the CLI and MCP, the browser's for HTTP).
 */
import { SqlrecallError } from '../core/errors.js';
import {
  DEFAULT_MEMORY_TOP_K,
  type Memory,
  type MemoryKind,
  type MemoryOp,
  type MemoryScope,
  type MemoryStatus,
} from '../core/memory.js';
import type { EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { MemoryChange } from '../core/steps.js';
import { auditCredentials, type CredentialAuditEntry, purgeCredentials } from '../memory/audit.js';
import { expiresOnOf } from '../memory/expiry.js';
import {
  type MemoryProvenance,
  memoryProvenance,
  type ShownStatus,
  shownStatus,
} from '../memory/provenance.js';
import { embedQuery, isDegenerateEmbedding, searchByWords, WORD_SEARCH_NOTE } from '../memory/recall.js';
import { type MemoryService, pendingTeachSchema, refusalError, type TeachResult } from '../memory/service.js';
import { normalizeText } from '../memory/store/index.js';
import type {
  EmbeddingInfo,
  MemoryExport,
  MemoryImportResult,
  SqlMemoryStore,
} from '../memory/store/types.js';

/** What the memory use cases run on: the runtime's store, service and embedding model. */
export interface MemoryApp {
  store: SqlMemoryStore;
  service: MemoryService;
  embedder: EmbeddingModel;
}

/** A memory as every front end shows it: `expiresOn` is the last day it holds (null: never expires). */
export type MemoryView<M extends Memory = Memory> = M & { expiresOn: string | null };

/**
 * `memory` with {@link MemoryView.expiresOn}: the day stored as typed, else (stored before the day
 * was kept) the day of the instant in `zone` (an IANA name).
 */
export function memoryView<M extends Memory>(memory: M, zone: string): MemoryView<M> {
  return { ...memory, expiresOn: expiresOnOf(memory, zone) };
}

/**
 * The full id of the memory of `scope` that `given` names (a full id or a unique prefix of at
 * least 4 characters); another scope's ids are never matched.
 * @throws SqlrecallError `usage` (empty or ambiguous), `not_found`
 */
export async function resolveMemoryId(
  app: MemoryApp,
  scope: MemoryScope,
  given: string | undefined,
): Promise<string> {
  const id = (given ?? '').trim().toLowerCase();
  if (!id)
    throw new SqlrecallError('usage', 'Give the id of a memory (as printed by `sqlrecall memory list`).');
  const all = await app.store.list(scope, { statuses: ['active', 'superseded', 'deleted'], limit: 100_000 });
  const matches = id.length >= 4 ? all.filter((m) => m.id.startsWith(id)) : [];
  if (matches.length === 1) return matches[0]!.id;
  if (matches.length > 1)
    throw new SqlrecallError('usage', `The id prefix ${id.slice(0, 64)} is ambiguous; give more characters.`);
  throw new SqlrecallError('not_found', `No memory with id ${id.slice(0, 80)} in this scope.`);
}

/** The memory `id` of `scope`, or null (another scope's id included). */
export function getMemory(app: MemoryApp, scope: MemoryScope, id: string): Promise<Memory | null> {
  return app.store.get(scope, id.toLowerCase());
}

/**
 * A fact taught while the model server was down, waiting in the queue: not yet a memory (no id,
 * not recalled) until it is applied. `status` `failed` means it will not be retried (`error` says why).
 */
export interface PendingMemoryView {
  /** The queue entry's id (not a memory id). */
  pendingId: string;
  kind: MemoryKind;
  text: string;
  sql: string | null;
  expiresAt: string | null;
  expiresOn: string | null;
  pinned: boolean;
  status: 'pending' | 'running' | 'failed';
  attempts: number;
  error: string | null;
  createdAt: string;
}

/** The facts of `scope` waiting in the queue for the model server, oldest first. */
export async function pendingMemories(
  app: Pick<MemoryApp, 'store'>,
  scope: MemoryScope,
): Promise<PendingMemoryView[]> {
  const queued = await app.store.listPending(scope);
  const views: PendingMemoryView[] = [];
  for (const write of queued) {
    const parsed = pendingTeachSchema.safeParse(write.payload);
    if (!parsed.success) continue;
    const t = parsed.data;
    views.push({
      pendingId: write.id,
      kind: t.kind,
      text: t.text,
      sql: t.sql,
      expiresAt: t.expiresAt,
      expiresOn: t.expiresAt ? t.expiresOn : null,
      pinned: t.pinned,
      status: write.status,
      attempts: write.attempts,
      error: write.error,
      createdAt: write.createdAt,
    });
  }
  return views;
}

/**
 * The fact of `scope` waiting in the queue that `given` names: its full queue id or a unique
 * prefix of at least 4 characters; null when none of the scope's queued facts matches (another
 * scope's queue ids are never matched, so they read as unknown).
 * @throws SqlrecallError `usage` (empty or ambiguous prefix)
 */
export async function findPendingMemory(
  app: Pick<MemoryApp, 'store'>,
  scope: MemoryScope,
  given: string | undefined,
): Promise<PendingMemoryView | null> {
  const id = (given ?? '').trim().toLowerCase();
  if (!id) throw new SqlrecallError('usage', 'Give the id of a queued memory (as listed by `memory list`).');
  if (id.length < 4) return null;
  const matches = (await pendingMemories(app, scope)).filter((p) => p.pendingId.startsWith(id));
  if (matches.length > 1)
    throw new SqlrecallError('usage', `The id prefix ${id.slice(0, 64)} is ambiguous; give more characters.`);
  return matches[0] ?? null;
}

/** The `not_found` of a queue id that is not one of the caller's queued facts (same words for another's). */
export function pendingNotFound(given: string): SqlrecallError {
  return new SqlrecallError(
    'not_found',
    `No memory with id ${given.trim().slice(0, 64)} in this scope, nor a queued one.`,
  );
}

/**
 * Takes a queued fact of `scope` out of the queue for good, so it is never applied (one
 * transaction: a flush applying it at that moment either wrote it first, and then it is a memory
 * to delete, or writes nothing).
 * @throws SqlrecallError `not_found` (not queued in this scope, or applied just now: the message
 *   says to look in the memories), `usage` (ambiguous prefix)
 */
export async function forgetPendingMemory(
  app: Pick<MemoryApp, 'store'>,
  scope: MemoryScope,
  given: string | undefined,
): Promise<PendingMemoryView> {
  const found = await findPendingMemory(app, scope, given);
  if (!found) throw pendingNotFound(given ?? '');
  const removed = await app.store.withdrawPending(scope, found.pendingId);
  if (!removed)
    throw new SqlrecallError(
      'not_found',
      `The queued memory ${found.pendingId.slice(0, 8)} was applied just now; it is a memory now (see \`memory list\`), delete it there.`,
    );
  return found;
}

/**
 * Applies the writes of `scope` waiting in the queue (facts taught while the model server was
 * down, chat messages left by a crash) when it has any; a no-op otherwise (one read). Another
 * scope's queue is left to its owner (or to a process applying every scope's at start-up).
 */
export async function applyPendingMemories(
  app: MemoryApp,
  scope: MemoryScope,
  options: { schema?: Schema } = {},
): Promise<{ applied: number; failed: number }> {
  const queued = await app.store.listPending(scope);
  if (!queued.some((p) => p.status === 'pending')) return { applied: 0, failed: 0 };
  return app.service.recoverPending({ ...options, scope });
}

/**
 * The memories of `scope`: active ones (or every status with `all`), of one kind when given, at
 * most `limit`; `pending` holds the facts still waiting for the model server (of that kind).
 */
export async function listMemories(
  app: MemoryApp,
  scope: MemoryScope,
  options: { all?: boolean; kind?: MemoryKind; limit?: number; zone: string },
): Promise<{ enabled: boolean; memories: MemoryView[]; pending: PendingMemoryView[] }> {
  const statuses: MemoryStatus[] = options.all ? ['active', 'superseded', 'deleted'] : ['active'];
  const memories = await app.store.list(scope, {
    statuses,
    ...(options.kind ? { kinds: [options.kind] } : {}),
    ...(options.limit !== undefined ? { limit: options.limit } : {}),
  });
  const pending = (await pendingMemories(app, scope)).filter((p) => !options.kind || p.kind === options.kind);
  return {
    enabled: await app.store.isEnabled(scope),
    memories: memories.map((m) => memoryView(m, options.zone)),
    pending,
  };
}

/**
 * The memories of `scope` nearest in meaning to `text`, best first (`similarity` set). When the
 * embedding model returns a degenerate vector (all zeros) similarity cannot rank: the memories are
 * then found by their words (no `similarity`) and `notes` says so.
 */
export async function searchMemories(
  app: MemoryApp,
  scope: MemoryScope,
  text: string,
  options: { topK?: number; zone: string; signal?: AbortSignal },
): Promise<{ results: MemoryView<Memory & { similarity?: number }>[]; notes: string[] }> {
  const topK = options.topK ?? DEFAULT_MEMORY_TOP_K;
  const embedding = await embedQuery(app.embedder, text, options.signal);
  if (isDegenerateEmbedding(embedding)) {
    const found = await searchByWords(app.store, scope, text, { topK });
    return { results: found.map((m) => memoryView(m, options.zone)), notes: [WORD_SEARCH_NOTE] };
  }
  const found = await app.store.search(scope, { embedding, topK });
  return { results: found.map((m) => memoryView(m, options.zone)), notes: [] };
}

/**
 * Teaches one fact through the one teaching path ({@link MemoryService.teach}); with `pinned` the
 * memory is pinned in the same write (one transaction).
 * @throws SqlrecallError `credential_refused` (nothing stored), `invalid_memory_sql`
 */
export async function addMemory(
  app: MemoryApp,
  scope: MemoryScope,
  fact: { kind: MemoryKind; text: string; sql?: string | null },
  options: {
    schema?: Schema;
    expiresAt?: string | null;
    /** The day of `expiresAt` as the user typed it (`YYYY-MM-DD`), stored and shown as such. */
    expiresOn?: string | null;
    pinned?: boolean;
    signal?: AbortSignal;
  } = {},
): Promise<TeachResult> {
  const result = await app.service.teach(scope, fact, options);
  if (result.refused.length > 0) throw refusalError(result);
  return result;
}

/**
 * Edits an active memory (kind, text, SQL, expiry; defaults: the current ones) and/or pins or
 * unpins it. A change equal to what is stored (same kind, text, SQL, expiry and pin) writes
 * nothing and returns `changed: false`: front ends say "Nothing to change" instead of "Updated".
 * @throws SqlrecallError `not_found` (no such memory in the scope, or not active), `credential_refused`
 */
export async function editMemory(
  app: MemoryApp,
  scope: MemoryScope,
  id: string,
  change: {
    kind?: MemoryKind;
    text?: string;
    sql?: string | null;
    pinned?: boolean;
    /** A new expiry (from `untilOf`); absent: the current one is kept. */
    until?: { expiresAt: string; expiresOn: string };
  },
  options: { schema?: Schema; zone: string },
): Promise<{ memory: MemoryView; problems: string[]; changed: boolean }> {
  const current = await app.store.get(scope, id.toLowerCase());
  if (!current) throw new SqlrecallError('not_found', 'No memory with this id in your memories.');
  if (current.status !== 'active')
    throw new SqlrecallError(
      'not_found',
      `The memory ${current.id.slice(0, 8)} is not active; restore it first.`,
    );
  const differs = <T>(given: T | undefined, stored: T) => given !== undefined && given !== stored;
  const changesContent =
    differs(change.kind, current.kind) ||
    (change.text !== undefined && change.text.trim() !== current.text) ||
    differs(change.sql === undefined ? undefined : change.sql?.trim() || null, current.sql) ||
    (change.until !== undefined &&
      (change.until.expiresAt !== current.expiresAt ||
        change.until.expiresOn !== expiresOnOf(current, options.zone)));
  const changesPin = differs(change.pinned, current.pinned === true);
  if (!changesContent && !changesPin)
    return { memory: memoryView(current, options.zone), problems: [], changed: false };
  const edited = changesContent
    ? await app.service.edit(
        scope,
        current,
        { kind: change.kind, text: change.text, sql: change.sql, until: change.until },
        options.schema,
      )
    : { memory: current, problems: [] as string[] };
  let memory = edited.memory;
  if (changesPin && change.pinned !== undefined)
    memory = await pinMemory(app, scope, memory.id, change.pinned, options.zone);
  return { memory: memoryView(memory, options.zone), problems: edited.problems, changed: true };
}

async function writeOne(
  app: MemoryApp,
  scope: MemoryScope,
  op: Extract<MemoryOp, { op: 'delete' | 'restore' | 'pin' }>,
  zone: string,
): Promise<MemoryView> {
  const current = await app.store.get(scope, op.id.toLowerCase());
  if (!current) throw new SqlrecallError('not_found', 'No memory with this id in your memories.');
  const [written] = await app.store.write(scope, [{ ...op, id: current.id }]);
  return memoryView(written?.memory ?? current, zone);
}

/** Deletes one memory (restorable). @throws SqlrecallError `not_found` */
export function deleteMemory(
  app: MemoryApp,
  scope: MemoryScope,
  id: string,
  zone: string,
): Promise<MemoryView> {
  return writeOne(app, scope, { op: 'delete', id, reason: 'user deleted' }, zone);
}

/** Brings a deleted or superseded memory back. @throws SqlrecallError `not_found` */
export function restoreMemory(
  app: MemoryApp,
  scope: MemoryScope,
  id: string,
  zone: string,
): Promise<MemoryView> {
  return writeOne(app, scope, { op: 'restore', id, reason: 'user restored' }, zone);
}

/** Pins (always recalled) or unpins one memory. @throws SqlrecallError `not_found` */
export function pinMemory(
  app: MemoryApp,
  scope: MemoryScope,
  id: string,
  pinned: boolean,
  zone: string,
): Promise<MemoryView> {
  return writeOne(
    app,
    scope,
    { op: 'pin', id, pinned, reason: pinned ? 'user pinned' : 'user unpinned' },
    zone,
  );
}

/** Deletes every memory of the scope (restorable), or removes them for good with `purge`; returns how many. */
export function deleteAllMemories(
  app: MemoryApp,
  scope: MemoryScope,
  options: { purge?: boolean } = {},
): Promise<number> {
  return app.store.deleteAll(scope, { purge: options.purge === true });
}

/** The history of one memory of `scope`, or of the whole scope without `id`, oldest first. */
export function memoryHistory(app: MemoryApp, scope: MemoryScope, id?: string) {
  return app.store.history(scope, id);
}

/**
 * Where memory `id` came from, its supersessions and history, and its state as the owner sees it
 * (`status`: `expired` for an active memory whose day is over; `statusText`: `expired on
 * 2026-12-01`, `active, until 2026-12-31`, `superseded`…); null when the scope has no such memory.
 */
export async function showMemory(
  app: MemoryApp,
  scope: MemoryScope,
  id: string,
  zone: string,
): Promise<
  (Omit<MemoryProvenance, 'memory'> & { memory: MemoryView; status: ShownStatus; statusText: string }) | null
> {
  const provenance = await memoryProvenance(app.store, scope, id.toLowerCase());
  if (!provenance) return null;
  const memory = memoryView(provenance.memory, zone);
  return { ...provenance, memory, ...shownStatus(memory) };
}

/** The scope's memories (every status) and history as an export document (no embeddings). */
export function exportMemories(app: MemoryApp, scope: MemoryScope): Promise<MemoryExport> {
  return app.store.export(scope);
}

/**
 * Imports an export document into `scope` after the credential screen of every teaching path.
 * @throws SqlrecallError `usage` when the document is not a valid export
 */
export function importMemories(
  app: MemoryApp,
  scope: MemoryScope,
  doc: unknown,
): Promise<MemoryImportResult & { problems: string[] }> {
  return app.service.importDoc(scope, doc, app.store);
}

/**
 * Credentials already stored in `scope` (memories of any status, history), masked; with `remove`
 * they are deleted for good (not restorable) and `removed` counts what went.
 */
export async function auditMemories(
  app: MemoryApp,
  scope: MemoryScope,
  options: { remove?: boolean } = {},
): Promise<{ found: CredentialAuditEntry[]; removed: { memories: number; history: number } | null }> {
  const audit = await auditCredentials(app.store, scope);
  const removed = options.remove ? await purgeCredentials(app.store, scope, audit) : null;
  return { found: audit.entries, removed };
}

/** Whether memory is on for `scope`. */
export function memoryEnabled(app: MemoryApp, scope: MemoryScope): Promise<boolean> {
  return app.store.isEnabled(scope);
}

/** Turns memory on or off for `scope` (memories are kept). */
export function setMemoryEnabled(app: MemoryApp, scope: MemoryScope, enabled: boolean): Promise<void> {
  return app.store.setEnabled(scope, enabled);
}

/**
 * Re-embeds every memory (all scopes, all statuses) with the runtime's embedding model and records
 * it in the store; `progress` is told as it goes. Returns the model before and after and how many.
 */
export async function reembedMemories(
  app: MemoryApp & { embedding: { model: string; dimensions: number } },
  progress?: (p: { done: number; total: number }) => void,
): Promise<{
  from: { model: string; dimensions: number } | null;
  to: { model: string; dimensions: number };
  reembedded: number;
}> {
  const { model, dimensions } = app.embedding;
  const before = await app.store.embeddingInfo();
  const result = await app.store.reembed(model, dimensions, (texts) => app.embedder.embed(texts), progress);
  await app.store.init({ model, dimensions });
  return { from: before, to: { model, dimensions }, reembedded: result.reembedded };
}

/**
 * The embedding model and dimension recorded in the store (null before its first use): a read
 * that proves the store answers, for health checks.
 * @throws SqlrecallError `memory_store` when the store cannot be read
 */
export function memoryStoreInfo(app: MemoryApp): Promise<EmbeddingInfo | null> {
  return app.store.embeddingInfo();
}

/**
 * Stores a confirmed answer (thumbs up, or a corrected SQL) as an `example` memory of `scope`: the
 * question with its SQL, already guarded and checked by the caller. An example with the same
 * question (normalised) is updated in place, else one is added; one write.
 */
export async function storeConfirmedExample(
  app: MemoryApp,
  scope: MemoryScope,
  example: { question: string; sql: string; tables: string[]; columns: string[]; reason: string },
): Promise<MemoryChange> {
  const [embedding] = await app.embedder.embed([example.question]);
  const examples = await app.store.list(scope, { kinds: ['example'], statuses: ['active'] });
  const same = examples.find((m) => normalizeText(m.text) === normalizeText(example.question));
  const newMemory = {
    kind: 'example' as const,
    text: example.question,
    sql: example.sql,
    tables: example.tables,
    columns: example.columns,
    origin: { how: 'confirmed' as const, words: example.question },
  };
  const [written] = await app.store.write(scope, [
    same
      ? { op: 'update', id: same.id, memory: newMemory, embedding: embedding!, reason: example.reason }
      : { op: 'add', memory: newMemory, embedding: embedding!, reason: example.reason },
  ]);
  return {
    action: same ? 'UPDATE' : written?.duplicate ? 'NOOP' : 'ADD',
    id: written?.memory?.id ?? null,
    kind: 'example',
    text: example.question,
    reason: example.reason,
  };
}
