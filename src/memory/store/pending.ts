/**
 * The durable pending-write queue (table `sqlrecall_pending_writes`): the write path stores the
 * user's message here before answering and applies it afterwards; a row not completed (process
 * killed in between) is taken again after a restart.
 */
import { randomUUID } from 'node:crypto';
import { SqlrecallError } from '../../core/errors.js';
import type { MemoryScope } from '../../core/memory.js';
import { isoTime, isUuid } from './rows.js';
import { type ScopeRef, scopeColumns, scopeCondition, scopeOfRow, scopeRef } from './scope.js';
import type { Row, SqlClient, SqlSession } from './sql-client.js';
import type { PendingStatus, PendingWrite, TakePendingOptions } from './types.js';
import { lockScope } from './write.js';

const PENDING_COLUMNS =
  'id, scope_user, scope_team, payload, status, attempts, error, created_at, updated_at';

/** Default age after which a `running` row counts as abandoned (its worker died): 5 minutes. */
const DEFAULT_STALE_AFTER_MS = 300_000;

/** Rows a worker may claim: waiting, or running but claimed more than `$2` ms ago. */
const TAKEABLE = `(status = 'pending'
  OR (status = 'running' AND claimed_at < clock_timestamp() - make_interval(secs => $2::float8 / 1000)))`;

function pendingFromRow(row: Row): PendingWrite {
  return {
    id: String(row.id),
    scope: scopeOfRow(row),
    payload: typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload,
    status: row.status as PendingStatus,
    attempts: Number(row.attempts),
    error: row.error === null || row.error === undefined ? null : String(row.error),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** The queue methods of the store. Every statement on a queued row names its scope. */
export function pendingMethods(client: SqlClient, ready: () => Promise<void>) {
  return {
    async enqueuePending(scope: MemoryScope, payload: unknown): Promise<string> {
      const ref = scopeRef(scope);
      const json = JSON.stringify(payload ?? null);
      if (json === undefined)
        throw new SqlrecallError('usage', 'A pending write payload must be JSON-serialisable.');
      await ready();
      const id = randomUUID();
      await client.query(
        `INSERT INTO sqlrecall_pending_writes (id, scope_key, scope_user, scope_team, payload)
         VALUES ($1, $2, $3, $4, $5::jsonb)`,
        [id, ...scopeColumns(ref), json],
      );
      return id;
    },

    async pendingScopes(options: { limit?: number; staleAfterMs?: number } = {}): Promise<MemoryScope[]> {
      const limit = options.limit ?? 100;
      const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
      await ready();
      // The one statement on the queue without a scope: it returns which scopes have work, never
      // a payload; the rows themselves are then claimed scope by scope.
      const rows = await client.query(
        `SELECT scope_user, scope_team, min(created_at) AS oldest FROM sqlrecall_pending_writes
         WHERE ${TAKEABLE}
         GROUP BY scope_key, scope_user, scope_team
         ORDER BY oldest, scope_key
         LIMIT $1`,
        [limit, staleAfterMs],
      );
      return rows.map(scopeOfRow);
    },

    async takePending(scope: MemoryScope, options: TakePendingOptions = {}): Promise<PendingWrite[]> {
      const ref = scopeRef(scope);
      const limit = options.limit ?? 10;
      const staleAfterMs = options.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
      await ready();
      const rows = await client.query(
        `UPDATE sqlrecall_pending_writes p
         SET status = 'running', attempts = p.attempts + 1, claimed_at = clock_timestamp(), updated_at = clock_timestamp()
         WHERE ${scopeCondition(ref, 3, 4, 'p')} AND p.id IN (
           SELECT id FROM sqlrecall_pending_writes
           WHERE ${scopeCondition(ref, 3, 4)} AND ${TAKEABLE}
           ORDER BY created_at, id
           LIMIT $1
           FOR UPDATE SKIP LOCKED)
         RETURNING ${PENDING_COLUMNS.split(', ')
           .map((column) => `p.${column}`)
           .join(', ')}`,
        [limit, staleAfterMs, ref.key, ref.id],
      );
      return rows.map(pendingFromRow).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
    },

    async completePending(scope: MemoryScope, id: string): Promise<boolean> {
      const ref = scopeRef(scope);
      if (!isUuid(id)) return false;
      await ready();
      const rows = await client.query(
        `DELETE FROM sqlrecall_pending_writes WHERE id = $1 AND ${scopeCondition(ref, 2, 3)} RETURNING id`,
        [id, ref.key, ref.id],
      );
      return rows.length > 0;
    },

    async failPending(
      scope: MemoryScope,
      id: string,
      error: string,
      options: { retry?: boolean } = {},
    ): Promise<boolean> {
      const ref = scopeRef(scope);
      if (!isUuid(id)) return false;
      await ready();
      const rows = await client.query(
        `UPDATE sqlrecall_pending_writes SET status = $4, error = $5, claimed_at = NULL, updated_at = clock_timestamp()
         WHERE id = $1 AND ${scopeCondition(ref, 2, 3)} RETURNING id`,
        [id, ref.key, ref.id, options.retry ? 'pending' : 'failed', error],
      );
      return rows.length > 0;
    },

    async withdrawPending(scope: MemoryScope, id: string): Promise<PendingWrite | null> {
      const ref = scopeRef(scope);
      if (!isUuid(id)) return null;
      await ready();
      // One transaction under the scope's write lock: a flush applying this row either committed
      // first (the row is gone, null here) or finds it gone and writes nothing.
      return client.transaction(async (tx) => {
        await lockScope(tx, ref);
        const rows = await tx.query(
          `DELETE FROM sqlrecall_pending_writes WHERE id = $1 AND ${scopeCondition(ref, 2, 3)}
           RETURNING ${PENDING_COLUMNS}`,
          [id.toLowerCase(), ref.key, ref.id],
        );
        return rows[0] ? pendingFromRow(rows[0]) : null;
      });
    },

    async listPending(scope: MemoryScope): Promise<PendingWrite[]> {
      const ref = scopeRef(scope);
      await ready();
      const rows = await client.query(
        `SELECT ${PENDING_COLUMNS} FROM sqlrecall_pending_writes WHERE ${scopeCondition(ref, 1, 2)} ORDER BY created_at, id`,
        [ref.key, ref.id],
      );
      return rows.map(pendingFromRow);
    },
  };
}

/**
 * Removes queued write `id` of the scope inside the caller's write transaction (which holds the
 * scope lock): the memory it stands for is written in that same transaction, or not at all.
 * @throws PendingWithdrawnError (`not_found`) when the row is gone: it was withdrawn
 *   (or already applied) meanwhile, so the transaction must roll back and write nothing
 */
export async function consumePending(tx: SqlSession, ref: ScopeRef, id: string): Promise<void> {
  const rows = isUuid(id)
    ? await tx.query(
        `DELETE FROM sqlrecall_pending_writes WHERE id = $1 AND ${scopeCondition(ref, 2, 3)} RETURNING id`,
        [id.toLowerCase(), ref.key, ref.id],
      )
    : [];
  if (rows.length === 0) throw pendingWithdrawn();
}

/**
 * The error of a queued write that was withdrawn (or applied by another worker) before this one
 * could apply it: `not_found`, nothing was written.
 */
export class PendingWithdrawnError extends SqlrecallError {
  constructor() {
    super('not_found', 'The queued memory was withdrawn before it was applied; nothing was written.');
  }
}

function pendingWithdrawn(): PendingWithdrawnError {
  return new PendingWithdrawnError();
}

/** Embedded store start-up: a `running` row belongs to a dead process (one process per data dir). */
export async function releaseRunningPending(client: SqlClient): Promise<void> {
  await client.query(
    "UPDATE sqlrecall_pending_writes SET status = 'pending', claimed_at = NULL WHERE status = 'running'",
  );
}
