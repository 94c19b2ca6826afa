/**
 * Conversation log: recent turns per scope and conversation id, plus a rolling summary
 * (tables `sqlrecall_conversations`, `sqlrecall_conversation_turns`).
 */
import { SqlrecallError } from '../../core/errors.js';
import type { MemoryScope } from '../../core/memory.js';
import { isoTime } from './rows.js';
import { scopeColumns, scopeCondition, scopeRef } from './scope.js';
import type { Row, SqlClient } from './sql-client.js';
import {
  type ConversationInfo,
  type ConversationTurn,
  MAX_CONVERSATION_ID_LENGTH,
  MAX_CONVERSATION_TITLE_LENGTH,
  type NewConversationTurn,
  type TurnMemory,
} from './types.js';

function checkConversationId(id: string): void {
  if (
    typeof id !== 'string' ||
    id.length === 0 ||
    id.length > MAX_CONVERSATION_ID_LENGTH ||
    id.includes('\u0000')
  ) {
    throw new SqlrecallError(
      'usage',
      `A conversation id must be a non-empty string of at most ${MAX_CONVERSATION_ID_LENGTH} characters.`,
    );
  }
}

function positiveLimit(limit: number | undefined, fallback: number): number {
  if (limit === undefined) return fallback;
  if (!Number.isInteger(limit) || limit < 0)
    throw new SqlrecallError('usage', 'A limit must be a whole number ≥ 0.');
  return limit;
}

function turnFromRow(row: Row): ConversationTurn {
  return {
    id: String(row.id),
    conversationId: String(row.conversation_id),
    question: String(row.question),
    sql: row.sql === null || row.sql === undefined ? null : String(row.sql),
    rowCount: row.row_count === null || row.row_count === undefined ? null : Number(row.row_count),
    summary: row.summary === null || row.summary === undefined ? null : String(row.summary),
    appliedMemories: turnMemories(row.applied_memories),
    recalledMemories: turnMemories(row.recalled_memories),
    createdAt: isoTime(row.created_at),
  };
}

/** Most memories kept per list of a turn. */
const MAX_TURN_MEMORIES = 100;

/** The `{id, kind, text}` items of a stored list (jsonb: parsed by the driver, or text). */
function turnMemories(value: unknown): TurnMemory[] {
  let list = value;
  if (typeof list === 'string') {
    try {
      list = JSON.parse(list);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(list)) return [];
  return list
    .filter(
      (m): m is TurnMemory =>
        typeof m === 'object' &&
        m !== null &&
        typeof (m as TurnMemory).id === 'string' &&
        typeof (m as TurnMemory).kind === 'string' &&
        typeof (m as TurnMemory).text === 'string',
    )
    .map((m) => ({ id: m.id, kind: m.kind, text: m.text }));
}

/** The jsonb text of a list to store (null when empty: nothing to show). */
function turnMemoriesJson(list: readonly TurnMemory[] | undefined): string | null {
  if (!list || list.length === 0) return null;
  return JSON.stringify(
    list.slice(0, MAX_TURN_MEMORIES).map((m) => ({ id: m.id, kind: m.kind, text: m.text })),
  );
}

function conversationFromRow(row: Row): ConversationInfo {
  return {
    id: String(row.id),
    summary: row.summary === null || row.summary === undefined ? null : String(row.summary),
    title: row.title === null || row.title === undefined ? null : String(row.title),
    firstQuestion:
      row.first_question === null || row.first_question === undefined ? null : String(row.first_question),
    turnCount: Number(row.turn_count ?? 0),
    createdAt: isoTime(row.created_at),
    updatedAt: isoTime(row.updated_at),
  };
}

/** Columns selected for a {@link ConversationTurn}. */
const TURN_COLUMNS =
  'id, conversation_id, question, sql, row_count, summary, applied_memories, recalled_memories, created_at';

const CONVERSATION_SELECT = `SELECT c.id, c.summary, c.title, c.created_at, c.updated_at,
  (SELECT count(*) FROM sqlrecall_conversation_turns t
    WHERE t.scope_key = c.scope_key AND t.conversation_id = c.id) AS turn_count,
  (SELECT t.question FROM sqlrecall_conversation_turns t
    WHERE t.scope_key = c.scope_key AND t.conversation_id = c.id ORDER BY t.id LIMIT 1) AS first_question
  FROM sqlrecall_conversations c`;

/**
 * Creates the conversation `$1` of the scope `$2`–`$4`, or touches it (`updated_at`): one statement
 * for `touch` and for `appendTurn`'s first step. `summary` is the SQL of the new summary, `setSummary`
 * the SQL of a boolean: whether an existing conversation takes it (else it keeps its own).
 */
function upsertConversationSql(summary: string, setSummary: string): string {
  return `INSERT INTO sqlrecall_conversations (id, scope_key, scope_user, scope_team, summary) VALUES ($1, $2, $3, $4, ${summary})
       ON CONFLICT (scope_key, id) DO UPDATE SET updated_at = clock_timestamp(),
         summary = CASE WHEN ${setSummary} THEN EXCLUDED.summary ELSE sqlrecall_conversations.summary END`;
}

/** The conversation methods of the store, bound to a client whose migrations have run. */
export function conversationMethods(client: SqlClient, ready: () => Promise<void>) {
  const touch = async (scope: MemoryScope, conversationId: string, summary?: string): Promise<void> => {
    const ref = scopeRef(scope);
    await client.query(upsertConversationSql('$5', '$6'), [
      conversationId,
      ...scopeColumns(ref),
      summary ?? null,
      summary !== undefined,
    ]);
  };

  return {
    async appendTurn(
      scope: MemoryScope,
      conversationId: string,
      turn: NewConversationTurn,
    ): Promise<ConversationTurn> {
      const ref = scopeRef(scope);
      checkConversationId(conversationId);
      if (typeof turn.question !== 'string') throw new SqlrecallError('usage', 'A turn needs a question.');
      await ready();
      // One statement (was BEGIN, the conversation upsert, the turn insert, COMMIT): the
      // conversation is created or touched (as `touch` without a summary) and the turn added
      // atomically, both rows carrying the scope columns.
      const rows = await client.query(
        `WITH conversation AS (${upsertConversationSql('NULL', 'false')} RETURNING id)
         INSERT INTO sqlrecall_conversation_turns (conversation_id, scope_key, scope_user, scope_team, question, sql, row_count, summary,
           applied_memories, recalled_memories)
         SELECT conversation.id, $2, $3, $4, $5, $6, $7, $8, $9::jsonb, $10::jsonb FROM conversation
         RETURNING ${TURN_COLUMNS}`,
        [
          conversationId,
          ...scopeColumns(ref),
          turn.question,
          turn.sql ?? null,
          turn.rowCount ?? null,
          turn.summary ?? null,
          turnMemoriesJson(turn.appliedMemories),
          turnMemoriesJson(turn.recalledMemories),
        ],
      );
      return turnFromRow(rows[0] as Row);
    },

    async recentTurns(
      scope: MemoryScope,
      conversationId: string,
      limit?: number,
    ): Promise<ConversationTurn[]> {
      const ref = scopeRef(scope);
      checkConversationId(conversationId);
      const count = positiveLimit(limit, 6);
      await ready();
      const rows = await client.query(
        `SELECT * FROM (
           SELECT ${TURN_COLUMNS}
           FROM sqlrecall_conversation_turns
           WHERE ${scopeCondition(ref, 1, 2)} AND conversation_id = $3
           ORDER BY id DESC LIMIT $4) recent
         ORDER BY id`,
        [ref.key, ref.id, conversationId, count],
      );
      return rows.map(turnFromRow);
    },

    async setSummary(scope: MemoryScope, conversationId: string, summary: string): Promise<void> {
      scopeRef(scope);
      checkConversationId(conversationId);
      await ready();
      await touch(scope, conversationId, summary);
    },

    async getConversation(scope: MemoryScope, conversationId: string): Promise<ConversationInfo | null> {
      const ref = scopeRef(scope);
      checkConversationId(conversationId);
      await ready();
      const rows = await client.query(
        `${CONVERSATION_SELECT} WHERE ${scopeCondition(ref, 1, 2, 'c')} AND c.id = $3`,
        [ref.key, ref.id, conversationId],
      );
      return rows[0] ? conversationFromRow(rows[0]) : null;
    },

    async listConversations(scope: MemoryScope, limit?: number): Promise<ConversationInfo[]> {
      const ref = scopeRef(scope);
      const count = positiveLimit(limit, 20);
      await ready();
      const rows = await client.query(
        `${CONVERSATION_SELECT} WHERE ${scopeCondition(ref, 1, 2, 'c')} ORDER BY c.updated_at DESC, c.id LIMIT $3`,
        [ref.key, ref.id, count],
      );
      return rows.map(conversationFromRow);
    },

    async renameConversation(scope: MemoryScope, conversationId: string, title: string): Promise<boolean> {
      const ref = scopeRef(scope);
      checkConversationId(conversationId);
      const text = typeof title === 'string' ? title.trim() : '';
      if (text === '' || text.length > MAX_CONVERSATION_TITLE_LENGTH || text.includes('\u0000'))
        throw new SqlrecallError(
          'usage',
          `A conversation title must be 1 to ${MAX_CONVERSATION_TITLE_LENGTH} characters.`,
        );
      await ready();
      const rows = await client.query(
        `UPDATE sqlrecall_conversations SET title = $4
         WHERE ${scopeCondition(ref, 1, 2)} AND id = $3 RETURNING id`,
        [ref.key, ref.id, conversationId, text],
      );
      return rows.length > 0;
    },

    async deleteConversation(scope: MemoryScope, conversationId: string): Promise<boolean> {
      const ref = scopeRef(scope);
      checkConversationId(conversationId);
      await ready();
      return client.transaction(async (tx) => {
        await tx.query(
          `DELETE FROM sqlrecall_conversation_turns WHERE ${scopeCondition(ref, 1, 2)} AND conversation_id = $3`,
          [ref.key, ref.id, conversationId],
        );
        const rows = await tx.query(
          `DELETE FROM sqlrecall_conversations WHERE ${scopeCondition(ref, 1, 2)} AND id = $3 RETURNING id`,
          [ref.key, ref.id, conversationId],
        );
        return rows.length > 0;
      });
    },
  };
}
