/**
 * The write path of the store: a batch of {@link MemoryOp}s applied in one transaction that first
 * takes the scope's advisory lock (`pg_advisory_xact_lock`; on PGlite, a single backend, the lock
 * is always granted and PGlite's own mutex serializes transactions). Under the lock every op sees
 * the previous writer's committed rows, so content-hash dedup is exact; the unique partial index
 * `(scope_key, content_hash) WHERE status = 'active'` is the backstop.
 */
import { SqlrecallError } from '../../core/errors.js';
import {
  type HistoryAction,
  MEMORY_KINDS,
  type Memory,
  type MemoryOp,
  type MemoryWriteResult,
  type NewMemory,
} from '../../core/memory.js';
import { toVectorSql } from '../../core/vector.js';
import { contentHash, isUuid, MEMORY_COLUMNS, memoryFromRow, originColumns } from './rows.js';
import { type ScopeRef, scopeColumns, scopeCondition } from './scope.js';
import type { SqlSession } from './sql-client.js';
import { termWordsOf } from './term-words.js';

/** What the write path needs. */
export interface WriteContext {
  tx: SqlSession;
  ref: ScopeRef;
  /** Dimension and model recorded in the store. */
  dimensions: number;
  model: string;
}

/** Takes the per-scope write lock for the current transaction. */
export async function lockScope(tx: SqlSession, ref: ScopeRef): Promise<void> {
  await tx.query("SELECT pg_advisory_xact_lock(hashtext('sqlrecall'), hashtext($1))", [ref.key]);
}

/** `not_found` with the same text whether the id is unknown or belongs to another scope. */
export function memoryNotFound(id: unknown): SqlrecallError {
  const shown = String(id).slice(0, 80);
  return new SqlrecallError('not_found', `No memory with id ${shown} in this scope.`);
}

function validateNew(memory: NewMemory): void {
  if (!MEMORY_KINDS.includes(memory.kind)) {
    throw new SqlrecallError('usage', `Unknown memory kind "${String(memory.kind).slice(0, 40)}".`);
  }
  if (typeof memory.text !== 'string' || memory.text.trim().length === 0) {
    throw new SqlrecallError('usage', 'A memory needs a non-empty text.');
  }
  if (memory.text.includes('\u0000')) throw new SqlrecallError('usage', 'A memory text cannot contain NUL.');
}

/** The scope's memory with `id` (locked FOR UPDATE), or null; never another scope's. */
export async function findInScope(ctx: WriteContext, id: string): Promise<Memory | null> {
  if (!isUuid(id)) return null;
  const rows = await ctx.tx.query(
    `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories WHERE id = $1 AND ${scopeCondition(ctx.ref, 2, 3)} FOR UPDATE`,
    [id, ctx.ref.key, ctx.ref.id],
  );
  return rows[0] ? memoryFromRow(rows[0]) : null;
}

async function activeByHash(ctx: WriteContext, hash: string): Promise<Memory | null> {
  const rows = await ctx.tx.query(
    `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories
     WHERE ${scopeCondition(ctx.ref, 1, 2)} AND status = 'active' AND content_hash = $3`,
    [ctx.ref.key, ctx.ref.id, hash],
  );
  return rows[0] ? memoryFromRow(rows[0]) : null;
}

/** Appends one history row (the only way rows get into `sqlrecall_memory_history`). */
export async function appendHistory(
  ctx: Pick<WriteContext, 'tx' | 'ref'>,
  memoryId: string | null,
  action: HistoryAction,
  oldText: string | null,
  newText: string | null,
  reason: string | null,
  sql: { old: string | null; new: string | null } = { old: null, new: null },
): Promise<void> {
  await ctx.tx.query(
    `INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, scope_team, action, old_text, new_text, reason, old_sql, new_sql)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
    [memoryId, ...scopeColumns(ctx.ref), action, oldText, newText, reason, sql.old, sql.new],
  );
}

/**
 * Records that a memory stored pinned (`NewMemory.pinned`) was pinned, as a separate pin had
 * recorded it: an UPDATE whose `pinned` column is true, in the same transaction as the insert.
 */
async function appendPinnedOnAdd(ctx: Pick<WriteContext, 'tx' | 'ref'>, memory: Memory): Promise<void> {
  await ctx.tx.query(
    `INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, scope_team, action, old_text, new_text, reason, pinned)
     VALUES ($1, $2, $3, $4, 'UPDATE', $5, $5, 'pinned on add', true)`,
    [memory.id, ...scopeColumns(ctx.ref), memory.text],
  );
}

/** The `expires_on` value of a new memory: its typed day when it has an expiry and a valid day. */
function expiresOnColumn(memory: NewMemory): string | null {
  const day = memory.expiresOn ?? null;
  return memory.expiresAt && day && /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : null;
}

/**
 * Inserts a memory unless an identical active one exists (returns null then).
 * `status` defaults to active; `supersedes` links a superseded predecessor.
 */
export async function insertMemory(
  ctx: WriteContext,
  memory: NewMemory,
  embedding: readonly number[],
  options: { supersedes?: string | null; status?: Memory['status']; id?: string } = {},
): Promise<Memory | null> {
  const rows = await ctx.tx.query(
    `INSERT INTO sqlrecall_memories (id, scope_key, scope_user, scope_team, kind, text, sql, tables, columns,
       embedding, embedding_model, content_hash, status, supersedes, source_message_id, expires_at, term_words, pinned,
       origin, origin_conversation_id, origin_words, expires_on)
     VALUES (COALESCE($1::uuid, gen_random_uuid()), $2, $3, $4, $5, $6, $7, $8, $9, $10::vector, $11, $12, $13, $14, $15, $16, $17, $18,
       $19, $20, $21, $22::date)
     ON CONFLICT (scope_key, content_hash) WHERE status = 'active' DO NOTHING
     RETURNING ${MEMORY_COLUMNS}`,
    [
      options.id ?? null,
      ...scopeColumns(ctx.ref),
      memory.kind,
      memory.text,
      memory.sql ?? null,
      memory.tables ?? [],
      memory.columns ?? [],
      toVectorSql(embedding, { dimensions: ctx.dimensions, model: ctx.model }),
      ctx.model,
      contentHash(memory.kind, memory.text),
      options.status ?? 'active',
      options.supersedes ?? null,
      memory.sourceMessageId ?? null,
      memory.expiresAt ?? null,
      termWordsOf(memory.kind, memory.text),
      memory.pinned === true,
      ...originColumns(memory.origin),
      expiresOnColumn(memory),
    ],
  );
  return rows[0] ? memoryFromRow(rows[0]) : null;
}

async function setStatus(ctx: WriteContext, id: string, status: Memory['status']): Promise<Memory> {
  const rows = await ctx.tx.query(
    `UPDATE sqlrecall_memories SET status = $1, updated_at = clock_timestamp()
     WHERE id = $2 AND ${scopeCondition(ctx.ref, 3, 4)} RETURNING ${MEMORY_COLUMNS}`,
    [status, id, ctx.ref.key, ctx.ref.id],
  );
  if (!rows[0]) throw memoryNotFound(id);
  return memoryFromRow(rows[0]);
}

async function applyAdd(ctx: WriteContext, op: Extract<MemoryOp, { op: 'add' }>): Promise<MemoryWriteResult> {
  validateNew(op.memory);
  const existing = await activeByHash(ctx, contentHash(op.memory.kind, op.memory.text));
  const inserted = existing ? null : await insertMemory(ctx, op.memory, op.embedding);
  if (inserted) {
    await appendHistory(ctx, inserted.id, 'ADD', null, inserted.text, op.reason ?? null, {
      old: null,
      new: inserted.sql,
    });
    if (op.memory.pinned === true) await appendPinnedOnAdd(ctx, inserted);
    return { op: 'add', memory: inserted };
  }
  const duplicate = existing ?? (await activeByHash(ctx, contentHash(op.memory.kind, op.memory.text)));
  await appendHistory(
    ctx,
    duplicate?.id ?? null,
    'NOOP',
    null,
    op.memory.text,
    op.reason ?? 'exact duplicate',
  );
  return { op: 'add', ...(duplicate ? { memory: duplicate } : {}), duplicate: true };
}

async function applyUpdate(
  ctx: WriteContext,
  op: Extract<MemoryOp, { op: 'update' }>,
): Promise<MemoryWriteResult> {
  validateNew(op.memory);
  const target = await findInScope(ctx, op.id);
  if (target?.status !== 'active') throw memoryNotFound(op.id);
  const hash = contentHash(op.memory.kind, op.memory.text);
  const other = await activeByHash(ctx, hash);
  if (other && other.id !== target.id) {
    await appendHistory(
      ctx,
      target.id,
      'NOOP',
      target.text,
      op.memory.text,
      op.reason ?? 'duplicate of another memory',
    );
    return { op: 'update', memory: other, duplicate: true };
  }
  const rows = await ctx.tx.query(
    `UPDATE sqlrecall_memories SET kind = $1, text = $2, sql = $3, tables = $4, columns = $5,
       embedding = $6::vector, embedding_model = $7, content_hash = $8, source_message_id = COALESCE($9, source_message_id),
       expires_at = $10, updated_at = clock_timestamp(), term_words = $14,
       origin = COALESCE($15, origin), origin_conversation_id = CASE WHEN $15::text IS NULL THEN origin_conversation_id ELSE $16 END,
       origin_words = CASE WHEN $15::text IS NULL THEN origin_words ELSE $17 END,
       expires_on = $18::date
     WHERE id = $11 AND ${scopeCondition(ctx.ref, 12, 13)} RETURNING ${MEMORY_COLUMNS}`,
    [
      op.memory.kind,
      op.memory.text,
      op.memory.sql ?? null,
      op.memory.tables ?? [],
      op.memory.columns ?? [],
      toVectorSql(op.embedding, { dimensions: ctx.dimensions, model: ctx.model }),
      ctx.model,
      hash,
      op.memory.sourceMessageId ?? null,
      op.memory.expiresAt ?? null,
      target.id,
      ctx.ref.key,
      ctx.ref.id,
      termWordsOf(op.memory.kind, op.memory.text),
      ...originColumns(op.memory.origin),
      expiresOnColumn(op.memory),
    ],
  );
  const updated = memoryFromRow(rows[0] as Record<string, unknown>);
  await appendHistory(ctx, target.id, 'UPDATE', target.text, updated.text, op.reason ?? null, {
    old: target.sql,
    new: updated.sql,
  });
  return { op: 'update', memory: updated };
}

async function applySupersede(
  ctx: WriteContext,
  op: Extract<MemoryOp, { op: 'supersede' }>,
): Promise<MemoryWriteResult> {
  validateNew(op.memory);
  const target = await findInScope(ctx, op.target);
  if (target?.status !== 'active') throw memoryNotFound(op.target);
  const hash = contentHash(op.memory.kind, op.memory.text);
  if (hash === target.contentHash) {
    await appendHistory(
      ctx,
      target.id,
      'NOOP',
      target.text,
      op.memory.text,
      op.reason ?? 'same as the memory to supersede',
    );
    return { op: 'supersede', memory: target, duplicate: true };
  }
  await setStatus(ctx, target.id, 'superseded');
  const existing = await activeByHash(ctx, hash);
  const created = existing
    ? null
    : await insertMemory(ctx, { ...op.memory, pinned: op.memory.pinned ?? target.pinned }, op.embedding, {
        supersedes: target.id,
      });
  const successor = created ?? existing;
  await appendHistory(ctx, target.id, 'SUPERSEDE', target.text, op.memory.text, op.reason ?? null);
  if (created) await appendHistory(ctx, created.id, 'ADD', null, created.text, `supersedes ${target.id}`);
  if (created && op.memory.pinned === true && !target.pinned) await appendPinnedOnAdd(ctx, created);
  return {
    op: 'supersede',
    ...(successor ? { memory: successor } : {}),
    ...(created ? {} : { duplicate: true }),
  };
}

async function applyDelete(
  ctx: WriteContext,
  op: Extract<MemoryOp, { op: 'delete' }>,
): Promise<MemoryWriteResult> {
  const target = await findInScope(ctx, op.id);
  if (!target) throw memoryNotFound(op.id);
  if (target.status === 'deleted') {
    await appendHistory(ctx, target.id, 'NOOP', target.text, target.text, op.reason ?? 'already deleted');
    return { op: 'delete', memory: target };
  }
  const deleted = await setStatus(ctx, target.id, 'deleted');
  await appendHistory(ctx, target.id, 'DELETE', target.text, null, op.reason ?? null);
  return { op: 'delete', memory: deleted };
}

async function applyRestore(
  ctx: WriteContext,
  op: Extract<MemoryOp, { op: 'restore' }>,
): Promise<MemoryWriteResult> {
  const target = await findInScope(ctx, op.id);
  if (!target) throw memoryNotFound(op.id);
  if (target.status === 'active') {
    await appendHistory(ctx, target.id, 'NOOP', target.text, target.text, op.reason ?? 'already active');
    return { op: 'restore', memory: target };
  }
  const identical = await activeByHash(ctx, target.contentHash);
  if (identical) {
    await appendHistory(
      ctx,
      target.id,
      'NOOP',
      target.text,
      target.text,
      op.reason ?? 'an identical memory is active',
    );
    return { op: 'restore', memory: identical, duplicate: true };
  }
  const restored = await setStatus(ctx, target.id, 'active');
  await appendHistory(ctx, target.id, 'RESTORE', null, target.text, op.reason ?? null);
  return { op: 'restore', memory: restored };
}

async function applyPin(ctx: WriteContext, op: Extract<MemoryOp, { op: 'pin' }>): Promise<MemoryWriteResult> {
  const target = await findInScope(ctx, op.id);
  if (!target) throw memoryNotFound(op.id);
  const pinned = op.pinned === true;
  const rows = await ctx.tx.query(
    `UPDATE sqlrecall_memories SET pinned = $1, updated_at = clock_timestamp()
     WHERE id = $2 AND ${scopeCondition(ctx.ref, 3, 4)} RETURNING ${MEMORY_COLUMNS}`,
    [pinned, target.id, ctx.ref.key, ctx.ref.id],
  );
  const changed = memoryFromRow(rows[0] as Record<string, unknown>);
  const same = target.pinned === pinned;
  await ctx.tx.query(
    `INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, scope_team, action, old_text, new_text, reason, pinned)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      target.id,
      ...scopeColumns(ctx.ref),
      same ? 'NOOP' : 'UPDATE',
      target.text,
      target.text,
      op.reason ?? (same ? `already ${pinned ? 'pinned' : 'unpinned'}` : pinned ? 'pinned' : 'unpinned'),
      pinned,
    ],
  );
  return { op: 'pin', memory: changed };
}

async function applyNoop(
  ctx: WriteContext,
  op: Extract<MemoryOp, { op: 'noop' }>,
): Promise<MemoryWriteResult> {
  const target = op.id === undefined ? null : await findInScope(ctx, op.id);
  await appendHistory(ctx, target?.id ?? null, 'NOOP', target?.text ?? null, op.text, op.reason);
  return { op: 'noop', ...(target ? { memory: target } : {}) };
}

/** Applies `ops` in order (the caller holds the transaction and the scope lock). */
export async function applyOps(ctx: WriteContext, ops: readonly MemoryOp[]): Promise<MemoryWriteResult[]> {
  const results: MemoryWriteResult[] = [];
  for (const op of ops) {
    switch (op.op) {
      case 'add':
        results.push(await applyAdd(ctx, op));
        break;
      case 'update':
        results.push(await applyUpdate(ctx, op));
        break;
      case 'supersede':
        results.push(await applySupersede(ctx, op));
        break;
      case 'delete':
        results.push(await applyDelete(ctx, op));
        break;
      case 'restore':
        results.push(await applyRestore(ctx, op));
        break;
      case 'pin':
        results.push(await applyPin(ctx, op));
        break;
      case 'noop':
        results.push(await applyNoop(ctx, op));
        break;
      default:
        throw new SqlrecallError(
          'usage',
          `Unknown memory operation "${String((op as { op: unknown }).op)}".`,
        );
    }
  }
  return results;
}
