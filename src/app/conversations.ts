/**
 * The conversation use cases, written once for every front end: list a user's conversations, show
 * one with its recent turns, rename it, delete it, and find the most recent one (`ask --continue`,
 * `chat --resume`). Every call names the caller's scope; another user's conversation id is "not
 * found", exactly like an id that does not exist.
 */
import { SqlrecallError } from '../core/errors.js';
import type { MemoryScope } from '../core/memory.js';
import type { ConversationInfo, ConversationTurn } from '../memory/store/types.js';
import type { MemoryApp } from './memory.js';

/** What the conversation use cases run on: the runtime's memory store. */
export type ConversationApp = Pick<MemoryApp, 'store'>;

/** Conversations listed when the caller gives no limit. */
export const DEFAULT_CONVERSATION_LIST_LIMIT = 20;

/** Turns shown with a conversation when the caller gives no number. */
export const DEFAULT_CONVERSATION_TURNS = 50;

/** The one message of an id that is not among the caller's conversations. */
const NOT_FOUND = 'No conversation with this id in your conversations.';

/** The conversations of `scope`, most recently updated first, at most `limit` (default 20). */
export function listConversations(
  app: ConversationApp,
  scope: MemoryScope,
  options: { limit?: number } = {},
): Promise<ConversationInfo[]> {
  return app.store.listConversations(scope, options.limit ?? DEFAULT_CONVERSATION_LIST_LIMIT);
}

/**
 * Conversation `id` of `scope` with its last `turns` turns (default 50), oldest first; a follow-up
 * question continues it by passing its id.
 * @throws SqlrecallError `not_found` when `scope` has no conversation with this id
 */
export async function showConversation(
  app: ConversationApp,
  scope: MemoryScope,
  id: string,
  options: { turns?: number } = {},
): Promise<{ conversation: ConversationInfo; turns: ConversationTurn[] }> {
  const conversation = await app.store.getConversation(scope, id);
  if (!conversation) throw new SqlrecallError('not_found', NOT_FOUND);
  const turns = await app.store.recentTurns(scope, id, options.turns ?? DEFAULT_CONVERSATION_TURNS);
  return { conversation, turns };
}

/**
 * Names conversation `id` of `scope`; returns it as it now is.
 * @throws SqlrecallError `not_found` (no such conversation in `scope`), `usage` (empty or too long title)
 */
export async function renameConversation(
  app: ConversationApp,
  scope: MemoryScope,
  id: string,
  title: string,
): Promise<ConversationInfo> {
  if (!(await app.store.renameConversation(scope, id, title)))
    throw new SqlrecallError('not_found', NOT_FOUND);
  const conversation = await app.store.getConversation(scope, id);
  if (!conversation) throw new SqlrecallError('not_found', NOT_FOUND);
  return conversation;
}

/**
 * Deletes conversation `id` of `scope` and its turns (the memories it taught stay).
 * @throws SqlrecallError `not_found` when `scope` has no conversation with this id
 */
export async function deleteConversation(
  app: ConversationApp,
  scope: MemoryScope,
  id: string,
): Promise<void> {
  if (!(await app.store.deleteConversation(scope, id))) throw new SqlrecallError('not_found', NOT_FOUND);
}

/** The id of the most recent conversation of `scope` (`ask --continue`, `chat --resume`), or undefined. */
export async function lastConversationId(
  app: ConversationApp,
  scope: MemoryScope,
): Promise<string | undefined> {
  return (await app.store.lastConversation(scope))?.id;
}
