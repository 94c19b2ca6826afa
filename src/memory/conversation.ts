/**
 * Conversation context: the recent turns of a conversation (question, SQL, row
 * count, short summary) and a rolling summary of older turns, persisted per user and
 * conversation, so a follow-up ("how many of those were wholesale?") sees the previous SQL — also
 * days later, in a new process. The rolling summary is built without a model: one short line per
 * turn that leaves the window, oldest lines dropped first.
 */
import type { MemoryScope } from '../core/memory.js';
import type { ConversationTurn, NewConversationTurn, SqlMemoryStore, TurnMemory } from './store/types.js';
import { clip } from './text.js';

/** Turns shown to the SQL model. */
export const PROMPT_TURNS = 3;
/** Turns kept verbatim before they are folded into the rolling summary. */
export const KEPT_TURNS = 6;
/** Longest rolling summary, in characters. */
export const MAX_SUMMARY_CHARS = 1200;
/** Longest turn summary (the answer, shortened), in characters. */
export const MAX_TURN_SUMMARY_CHARS = 240;

/** What the conversation logic needs from the store. */
export type ConversationStore = Pick<
  SqlMemoryStore,
  'appendTurn' | 'recentTurns' | 'setSummary' | 'getConversation'
>;

/** The context of one conversation for a prompt. */
export interface ConversationContext {
  conversationId: string;
  summary: string | null;
  /** Oldest first. */
  turns: Pick<ConversationTurn, 'question' | 'sql' | 'rowCount' | 'summary'>[];
}

/** Loads the last {@link PROMPT_TURNS} turns and the rolling summary. */
export async function loadConversation(
  store: ConversationStore,
  scope: MemoryScope,
  conversationId: string,
): Promise<ConversationContext> {
  const [turns, info] = await Promise.all([
    store.recentTurns(scope, conversationId, PROMPT_TURNS),
    store.getConversation(scope, conversationId),
  ]);
  return { conversationId, summary: info?.summary ?? null, turns };
}

/** One line of the rolling summary for a turn. */
export function summaryLine(turn: Pick<ConversationTurn, 'question' | 'sql' | 'rowCount'>): string {
  const rows = turn.rowCount === null ? '' : ` → ${turn.rowCount} row${turn.rowCount === 1 ? '' : 's'}`;
  return `- ${clip(turn.question, 120)}${turn.sql ? ` [SQL: ${clip(turn.sql, 160)}]` : ''}${rows}`;
}

/** Appends `previous` lines and `line`, dropping the oldest lines beyond {@link MAX_SUMMARY_CHARS}. */
export function rollSummary(previous: string | null, line: string): string {
  const lines = [...(previous ? previous.split('\n') : []), line];
  while (lines.length > 1 && lines.join('\n').length > MAX_SUMMARY_CHARS) lines.shift();
  const text = lines.join('\n');
  return text.length > MAX_SUMMARY_CHARS ? `${text.slice(0, MAX_SUMMARY_CHARS - 1)}…` : text;
}

/**
 * Records a finished turn; when the conversation holds more than {@link KEPT_TURNS} turns, the
 * turn that leaves the window is folded into the rolling summary.
 */
export async function recordTurn(
  store: ConversationStore,
  scope: MemoryScope,
  conversationId: string,
  turn: {
    question: string;
    sql: string | null;
    rowCount: number | null;
    answer: string | null;
    appliedMemories?: TurnMemory[];
    recalledMemories?: TurnMemory[];
  },
  /** `firstTurn`: the conversation was started by this turn (it has one turn: the summary cannot roll). */
  options: { firstTurn?: boolean } = {},
): Promise<void> {
  const record: NewConversationTurn = {
    question: turn.question,
    sql: turn.sql,
    rowCount: turn.rowCount,
    summary: turn.answer ? clip(turn.answer, MAX_TURN_SUMMARY_CHARS) : null,
    ...(turn.appliedMemories?.length ? { appliedMemories: turn.appliedMemories } : {}),
    ...(turn.recalledMemories?.length ? { recalledMemories: turn.recalledMemories } : {}),
  };
  await store.appendTurn(scope, conversationId, record);
  if (options.firstTurn) return;
  const info = await store.getConversation(scope, conversationId);
  if (!info || info.turnCount <= KEPT_TURNS) return;
  const window = await store.recentTurns(scope, conversationId, KEPT_TURNS + 1);
  const leaving = window[0];
  if (leaving) await store.setSummary(scope, conversationId, rollSummary(info.summary, summaryLine(leaving)));
}

/** The conversation block of the SQL prompt (empty string when there is nothing to show). */
export function renderConversation(context: ConversationContext | undefined): string {
  if (!context || (context.turns.length === 0 && !context.summary)) return '';
  const lines: string[] = [];
  if (context.summary) lines.push('Earlier in this conversation:', context.summary);
  for (const turn of context.turns) {
    lines.push(`Previous question: ${clip(turn.question, 300)}`);
    if (turn.sql) lines.push(`Previous SQL: ${clip(turn.sql, 1500)}`);
    if (turn.rowCount !== null) lines.push(`Rows returned: ${turn.rowCount}`);
    if (turn.summary) lines.push(`Answer: ${clip(turn.summary, MAX_TURN_SUMMARY_CHARS)}`);
  }
  return lines.join('\n');
}

/** Most conversations kept by a {@link LocalConversations} before the least recently used is dropped. */
export const MAX_LOCAL_CONVERSATIONS = 500;

/**
 * Turns of conversations whose user has memory off, kept in this process only.
 * Keyed by the user scope AND the conversation id, so two users who send the same id never see
 * each other's questions or SQL. Bounded: at most `maxConversations` conversations (least recently
 * used dropped first, default {@link MAX_LOCAL_CONVERSATIONS}) of at most {@link KEPT_TURNS} turns.
 */
export class LocalConversations {
  private readonly byKey = new Map<string, ConversationContext['turns']>();

  /** @param maxConversations conversations kept (≥ 1). */
  constructor(private readonly maxConversations = MAX_LOCAL_CONVERSATIONS) {}

  /** The key of a conversation: scope kind, scope id and conversation id, unambiguous (JSON). */
  private static key(scope: MemoryScope, conversationId: string): string {
    const owner = scope.user !== undefined ? ['user', scope.user] : ['team', scope.team ?? ''];
    return JSON.stringify([...owner, conversationId]);
  }

  /** The last `limit` turns (oldest first) of `scope`'s conversation `conversationId`. */
  turns(scope: MemoryScope, conversationId: string, limit = PROMPT_TURNS): ConversationContext['turns'] {
    const key = LocalConversations.key(scope, conversationId);
    const turns = this.byKey.get(key);
    if (!turns) return [];
    this.byKey.delete(key);
    this.byKey.set(key, turns);
    return turns.slice(-limit);
  }

  /** Appends a turn to `scope`'s conversation, keeping its last {@link KEPT_TURNS} turns. */
  record(scope: MemoryScope, conversationId: string, turn: ConversationContext['turns'][number]): void {
    const key = LocalConversations.key(scope, conversationId);
    const turns = [...(this.byKey.get(key) ?? []), turn].slice(-KEPT_TURNS);
    this.byKey.delete(key);
    this.byKey.set(key, turns);
    while (this.byKey.size > Math.max(1, this.maxConversations)) {
      const oldest = this.byKey.keys().next().value as string;
      this.byKey.delete(oldest);
    }
  }

  /** Conversations currently kept. */
  get size(): number {
    return this.byKey.size;
  }
}
