/**
 * Export, import and bulk deletion of one scope's memories.
 */
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { SqlrecallError } from '../../core/errors.js';
import { MEMORY_KINDS } from '../../core/memory.js';
import { conflictsByRule } from '../reconcile.js';
import { readEmbeddingMeta } from './migrations.js';
import { contentHash, HISTORY_COLUMNS, historyFromRow, MEMORY_COLUMNS, memoryFromRow } from './rows.js';
import { type ScopeRef, scopeColumns, scopeCondition } from './scope.js';
import type { SqlClient, SqlSession } from './sql-client.js';
import type { DeleteAllOptions, EmbedTexts, MemoryExport, MemoryImportResult } from './types.js';
import { appendHistory, insertMemory, lockScope } from './write.js';

/** Texts embedded per call of `embed` during import and reembed. */
export const EMBED_BATCH_SIZE = 64;

/** Embeds `texts` in batches of {@link EMBED_BATCH_SIZE}, checking the count returned. */
export async function embedInBatches(
  texts: string[],
  embed: EmbedTexts,
  onBatch?: (done: number) => void,
): Promise<number[][]> {
  const vectors: number[][] = [];
  for (let start = 0; start < texts.length; start += EMBED_BATCH_SIZE) {
    const batch = texts.slice(start, start + EMBED_BATCH_SIZE);
    const result = await embed(batch);
    if (result.length !== batch.length) {
      throw new SqlrecallError(
        'model_output',
        `The embedding model returned ${result.length} vectors for ${batch.length} texts.`,
      );
    }
    vectors.push(...result);
    onBatch?.(vectors.length);
  }
  return vectors;
}

/** Reads one scope's export document. */
export async function exportScope(client: SqlClient, ref: ScopeRef): Promise<MemoryExport> {
  const memories = await client.query(
    `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories WHERE ${scopeCondition(ref, 1, 2)} ORDER BY seq`,
    [ref.key, ref.id],
  );
  const history = await client.query(
    `SELECT ${HISTORY_COLUMNS} FROM sqlrecall_memory_history WHERE ${scopeCondition(ref, 1, 2)} ORDER BY id`,
    [ref.key, ref.id],
  );
  const meta = await readEmbeddingMeta(client);
  return {
    format: 'sqlrecall-memory',
    version: 1,
    exportedAt: new Date().toISOString(),
    scope: ref.scope,
    embeddingModel: meta?.model ?? null,
    memories: memories.map(memoryFromRow),
    history: history.map(historyFromRow),
  };
}

const importSchema = z.object({
  format: z.literal('sqlrecall-memory'),
  version: z.literal(1),
  memories: z.array(
    z.object({
      id: z.string(),
      kind: z.enum(MEMORY_KINDS),
      text: z.string().min(1),
      sql: z.string().nullish(),
      tables: z.array(z.string()).optional(),
      columns: z.array(z.string()).optional(),
      status: z.enum(['active', 'superseded', 'deleted']).default('active'),
      supersedes: z.string().nullish(),
      sourceMessageId: z.string().nullish(),
      expiresAt: z.string().nullish(),
      /** The day as typed; absent in exports written before it was kept (then derived when shown). */
      expiresOn: z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD')
        .nullish(),
      pinned: z.boolean().optional(),
    }),
  ),
  history: z
    .array(
      z.object({
        memoryId: z.string(),
        action: z.enum(['ADD', 'UPDATE', 'SUPERSEDE', 'DELETE', 'RESTORE', 'NOOP']),
        oldText: z.string().nullish(),
        newText: z.string().nullish(),
        reason: z.string().nullish(),
        pinned: z.boolean().nullish(),
        createdAt: z.string().nullish(),
      }),
    )
    .default([]),
});

/**
 * Imports an export document into `ref`'s scope: embeds first (no transaction held while the
 * model runs), then inserts in one transaction under the scope lock. A memory is skipped as a
 * duplicate when one with the same content hash and status already exists in the scope.
 * `pinned` is carried. Imported active preferences go through the same conflict rule as `memory
 * add` (`conflictsByRule`): one that filters the same column as an active
 * preference already in the scope, with other constants, supersedes it (history SUPERSEDE on the
 * old one, `supersedes` on the new one); these are listed in the result's `superseded`.
 */
export async function importScope(
  client: SqlClient,
  ref: ScopeRef,
  doc: unknown,
  embed: EmbedTexts,
  embedding: { model: string; dimensions: number },
): Promise<MemoryImportResult> {
  const parsed = importSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.join('.') || 'document';
    throw new SqlrecallError(
      'usage',
      `Not a sqlrecall memory export: ${where}: ${issue?.message ?? 'invalid'}.`,
    );
  }
  const { memories, history } = parsed.data;
  const vectors = await embedInBatches(
    memories.map((memory) => memory.text),
    embed,
  );
  return client.transaction(async (tx: SqlSession) => {
    await lockScope(tx, ref);
    const ctx = { tx, ref, ...embedding };
    // Active preferences with SQL that were in the scope before this import: candidates to supersede.
    const before = (
      await tx.query(
        `SELECT ${MEMORY_COLUMNS} FROM sqlrecall_memories
         WHERE ${scopeCondition(ref, 1, 2)} AND status = 'active' AND kind = 'preference' AND sql IS NOT NULL
         ORDER BY seq`,
        [ref.key, ref.id],
      )
    ).map(memoryFromRow);
    const superseded: MemoryImportResult['superseded'] = [];
    const idMap: Record<string, string> = {};
    const created = new Set<string>();
    let duplicates = 0;
    for (const [index, memory] of memories.entries()) {
      const existing = await tx.query<{ id: string }>(
        `SELECT id FROM sqlrecall_memories WHERE ${scopeCondition(ref, 1, 2)} AND content_hash = $3 AND status = $4 LIMIT 1`,
        [ref.key, ref.id, contentHash(memory.kind, memory.text), memory.status],
      );
      if (existing[0]) {
        idMap[memory.id] = String(existing[0].id);
        duplicates += 1;
        continue;
      }
      const inserted = await insertMemory(
        ctx,
        { ...memory, origin: { how: 'import' } },
        vectors[index] ?? [],
        {
          status: memory.status,
          id: randomUUID(),
        },
      );
      if (!inserted)
        throw new SqlrecallError('internal', 'An imported memory collided with an active duplicate.');
      idMap[memory.id] = inserted.id;
      created.add(inserted.id);
      if (inserted.status !== 'active') continue;
      for (const old of before) {
        if (superseded.some((s) => s.id === old.id) || !(await conflictsByRule(old, inserted))) continue;
        await tx.query(
          `UPDATE sqlrecall_memories SET status = 'superseded', updated_at = clock_timestamp()
           WHERE id = $1 AND ${scopeCondition(ref, 2, 3)}`,
          [old.id, ref.key, ref.id],
        );
        await tx.query(
          `UPDATE sqlrecall_memories SET supersedes = $1 WHERE id = $2 AND ${scopeCondition(ref, 3, 4)}`,
          [old.id, inserted.id, ref.key, ref.id],
        );
        await appendHistory(
          ctx,
          old.id,
          'SUPERSEDE',
          old.text,
          inserted.text,
          'imported: same column, different value: the newer preference replaces the older (rule)',
        );
        superseded.push({ id: old.id, text: old.text, by: inserted.id });
      }
    }
    for (const memory of memories) {
      const id = idMap[memory.id];
      const target = memory.supersedes ? idMap[memory.supersedes] : undefined;
      if (id && created.has(id) && target && !superseded.some((s) => s.by === id)) {
        await tx.query(
          `UPDATE sqlrecall_memories SET supersedes = $1 WHERE id = $2 AND ${scopeCondition(ref, 3, 4)}`,
          [target, id, ref.key, ref.id],
        );
      }
    }
    const withHistory = new Set<string>();
    for (const entry of history) {
      const id = idMap[entry.memoryId];
      if (!id || !created.has(id)) continue;
      withHistory.add(id);
      await tx.query(
        `INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, scope_team, action, old_text, new_text, reason, created_at, pinned)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9::timestamptz, clock_timestamp()), $10)`,
        [
          id,
          ...scopeColumns(ref),
          entry.action,
          entry.oldText ?? null,
          entry.newText ?? null,
          entry.reason ?? null,
          entry.createdAt ?? null,
          entry.pinned ?? null,
        ],
      );
    }
    for (const memory of memories) {
      const id = idMap[memory.id];
      if (id && created.has(id) && !withHistory.has(id)) {
        await appendHistory(ctx, id, 'ADD', null, memory.text, 'imported');
      }
    }
    return { imported: created.size, duplicates, idMap, superseded };
  });
}

/** Soft-deletes (history DELETE each) or purges everything of one scope; returns memories affected. */
export async function deleteScope(
  client: SqlClient,
  ref: ScopeRef,
  options: DeleteAllOptions = {},
): Promise<number> {
  const where = scopeCondition(ref, 1, 2);
  const params = [ref.key, ref.id];
  return client.transaction(async (tx) => {
    await lockScope(tx, ref);
    if (!options.purge) {
      const rows = await tx.query(
        `WITH changed AS (
           UPDATE sqlrecall_memories SET status = 'deleted', updated_at = clock_timestamp()
           WHERE ${where} AND status <> 'deleted'
           RETURNING id, text, scope_key, scope_user, scope_team)
         INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, scope_team, action, old_text, reason)
         SELECT id, scope_key, scope_user, scope_team, 'DELETE', text, 'deleted all memories' FROM changed
         RETURNING memory_id`,
        params,
      );
      return rows.length;
    }
    const removed = await tx.query(`DELETE FROM sqlrecall_memories WHERE ${where} RETURNING id`, params);
    for (const table of [
      'sqlrecall_memory_history',
      'sqlrecall_conversation_turns',
      'sqlrecall_conversations',
      'sqlrecall_pending_writes',
      'sqlrecall_memory_settings',
    ]) {
      await tx.query(`DELETE FROM ${table} WHERE ${where}`, params);
    }
    return removed.length;
  });
}

/**
 * Removes for good (no history entry, not restorable) the memories `memoryIds` of one scope with
 * all their history, and the history entries `historyIds` of that scope: for text that must not be
 * kept at all, such as a credential found by `memory audit`. Ids of other scopes are ignored.
 * Returns the memories and history entries removed.
 */
export async function purgeEntries(
  client: SqlClient,
  ref: ScopeRef,
  memoryIds: string[],
  historyIds: string[],
): Promise<{ memories: number; history: number }> {
  const where = scopeCondition(ref, 1, 2);
  return client.transaction(async (tx) => {
    await lockScope(tx, ref);
    const memories = memoryIds.length
      ? await tx.query(
          `DELETE FROM sqlrecall_memories WHERE ${where} AND id = ANY($3::uuid[]) RETURNING id`,
          [ref.key, ref.id, memoryIds],
        )
      : [];
    const history = await tx.query(
      `DELETE FROM sqlrecall_memory_history WHERE ${where}
         AND (memory_id = ANY($3::uuid[]) OR id = ANY($4::bigint[])) RETURNING id`,
      [ref.key, ref.id, memoryIds, historyIds.map((id) => String(id))],
    );
    return { memories: memories.length, history: history.length };
  });
}
