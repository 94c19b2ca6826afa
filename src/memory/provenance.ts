/**
 * Provenance of a memory: where it came from (taught in which conversation, when, in the user's
 * own words; or added by hand, imported, a confirmed answer), the memories it replaced and the one
 * that replaced it (supersessions, each with the same detail), its history and when an answer last
 * applied it. Every read is in the caller's scope: a memory of another scope is "not found", and a
 * supersession link never leads out of the scope.
 */
import type { Memory, MemoryHistoryEntry, MemoryOrigin, MemoryScope, MemoryStore } from '../core/memory.js';
import type { ConversationInfo } from './store/types.js';

/** Most predecessors followed along a supersession chain. */
export const MAX_SUPERSESSIONS = 20;

/** Where one memory came from, ready to show. */
export interface OriginView {
  /** `chat`, `hand`, `import`, `confirmed`, or `unknown` (stored before provenance was kept). */
  how: MemoryOrigin['how'] | 'unknown';
  /** One sentence, e.g. `taught in a conversation ("Top customers") on 2026-12-02 07:40 UTC`. */
  summary: string;
  /** When the memory was stored (ISO). */
  at: string;
  /** The conversation it was taught in, when recorded; `title` when it still exists. */
  conversation: { id: string; title: string | null; exists: boolean } | null;
  /** The user's own words, when recorded. */
  words: string | null;
}

/** A memory with where it came from. */
export interface MemoryWithOrigin {
  id: string;
  kind: Memory['kind'];
  text: string;
  sql: string | null;
  status: Memory['status'];
  origin: OriginView;
}

/** The provenance of one memory. */
export interface MemoryProvenance {
  memory: Memory;
  origin: OriginView;
  /** When an answer last applied it; null: never (or not recorded). */
  lastAppliedAt: string | null;
  /** The memories it replaced, the most recent first (its predecessor, that one's, …). */
  replaced: MemoryWithOrigin[];
  /** The memory that replaced it, when it is superseded. */
  replacedBy: MemoryWithOrigin | null;
  /** Its history, oldest first. */
  history: MemoryHistoryEntry[];
}

/** What provenance reads: the scope's memories and history, and optionally its conversations. */
export interface ProvenanceSource {
  get: MemoryStore['get'];
  list: MemoryStore['list'];
  history: MemoryStore['history'];
  getConversation?(scope: MemoryScope, id: string): Promise<ConversationInfo | null>;
}

/** What a memory's state is to its owner: `expired` is an active memory whose last day is over. */
export type ShownStatus = 'active' | 'expired' | 'superseded' | 'deleted';

/**
 * The state of `memory` at `now` and one phrase for it: `active`, `active until 2026-12-31`,
 * `expired on 2026-12-01` (active in the store but no longer recalled), `superseded`, `deleted`
 * (each with `, expired on DAY` when its day is over too). `expiresOn` is the day as typed (see
 * `expiry.ts`); absent, the day of the instant in UTC.
 */
export function shownStatus(
  memory: Pick<Memory, 'status' | 'expiresAt' | 'pinned'> & { expiresOn?: string | null },
  now: Date = new Date(),
): { status: ShownStatus; statusText: string } {
  const day = memory.expiresAt ? (memory.expiresOn ?? memory.expiresAt.slice(0, 10)) : null;
  const expired = memory.expiresAt !== null && Date.parse(memory.expiresAt) <= now.getTime();
  const pinned = memory.pinned ? ', pinned' : '';
  if (memory.status !== 'active')
    return {
      status: memory.status,
      statusText: `${memory.status}${pinned}${expired && day ? `, expired on ${day}` : ''}`,
    };
  if (expired && day) return { status: 'expired', statusText: `expired on ${day}${pinned}` };
  return { status: 'active', statusText: `active${pinned}${day ? `, until ${day}` : ''}` };
}

/** `2026-12-02 07:40 UTC` for an ISO time. */
export function shortTime(iso: string): string {
  return `${iso.slice(0, 16).replace('T', ' ')} UTC`;
}

const HOW: Record<OriginView['how'], string> = {
  chat: 'taught in a conversation',
  hand: 'added by hand',
  import: 'imported',
  confirmed: 'a confirmed answer',
  unknown: 'origin not recorded (stored before provenance was kept)',
};

async function originOf(
  source: ProvenanceSource,
  scope: MemoryScope,
  memory: Memory,
  conversations: Map<string, ConversationInfo | null>,
): Promise<OriginView> {
  const origin = memory.origin ?? null;
  const how: OriginView['how'] = origin?.how ?? (memory.sourceMessageId ? 'chat' : 'unknown');
  let conversation: OriginView['conversation'] = null;
  const conversationId = origin?.conversationId ?? null;
  if (conversationId) {
    if (!conversations.has(conversationId))
      conversations.set(
        conversationId,
        source.getConversation ? await source.getConversation(scope, conversationId).catch(() => null) : null,
      );
    const info = conversations.get(conversationId) ?? null;
    conversation = {
      id: conversationId,
      title: info ? (info.title ?? info.firstQuestion ?? null) : null,
      exists: info !== null,
    };
  }
  const named = conversation?.title ? ` ("${conversation.title}")` : '';
  return {
    how,
    summary: `${HOW[how]}${how === 'chat' ? named : ''} on ${shortTime(memory.createdAt)}`,
    at: memory.createdAt,
    conversation,
    words: origin?.words ?? null,
  };
}

/**
 * The provenance of memory `id` of `scope`, or null when the scope has no such memory (another
 * scope's id included: its text is never read).
 */
export async function memoryProvenance(
  source: ProvenanceSource,
  scope: MemoryScope,
  id: string,
): Promise<MemoryProvenance | null> {
  const memory = await source.get(scope, id);
  if (!memory) return null;
  const conversations = new Map<string, ConversationInfo | null>();
  const withOrigin = async (m: Memory): Promise<MemoryWithOrigin> => ({
    id: m.id,
    kind: m.kind,
    text: m.text,
    sql: m.sql,
    status: m.status,
    origin: await originOf(source, scope, m, conversations),
  });
  const replaced: MemoryWithOrigin[] = [];
  const seen = new Set([memory.id]);
  let previous = memory.supersedes;
  while (previous && !seen.has(previous) && replaced.length < MAX_SUPERSESSIONS) {
    seen.add(previous);
    const older = await source.get(scope, previous);
    if (!older) break;
    replaced.push(await withOrigin(older));
    previous = older.supersedes;
  }
  let replacedBy: MemoryWithOrigin | null = null;
  if (memory.status === 'superseded') {
    const all = await source.list(scope, { statuses: ['active', 'superseded', 'deleted'] });
    const next = all.find((m) => m.supersedes === memory.id);
    if (next) replacedBy = await withOrigin(next);
  }
  return {
    memory,
    origin: await originOf(source, scope, memory, conversations),
    lastAppliedAt: memory.lastAppliedAt ?? null,
    replaced,
    replacedBy,
    history: await source.history(scope, memory.id),
  };
}

/** `…: "the words"` (clipped) when the origin has words, else ''. */
function wordsPart(origin: OriginView): string {
  if (!origin.words) return '';
  const words = origin.words.replace(/\s+/g, ' ').trim();
  return `: "${words.length > 300 ? `${words.slice(0, 299)}…` : words}"`;
}

/** The provenance as plain lines (the CLI's `memory show`). */
export function provenanceLines(p: MemoryProvenance): string[] {
  const m = p.memory;
  const lines = [`[${m.id.slice(0, 8)}] ${m.kind}: ${m.text}`];
  if (m.sql) lines.push(`  SQL: ${m.sql}`);
  lines.push(`  Status: ${shownStatus(m).statusText}`);
  lines.push(`  From: ${p.origin.summary}${wordsPart(p.origin)}`);
  if (p.origin.conversation)
    lines.push(
      `  Conversation: ${p.origin.conversation.id}${p.origin.conversation.exists ? '' : ' (no longer stored)'}`,
    );
  lines.push(`  Last applied: ${p.lastAppliedAt ? shortTime(p.lastAppliedAt) : 'never'}`);
  if (p.replacedBy)
    lines.push(
      `  Replaced by [${p.replacedBy.id.slice(0, 8)}] ${p.replacedBy.text} (${p.replacedBy.origin.summary}${wordsPart(p.replacedBy.origin)})`,
    );
  for (const r of p.replaced)
    lines.push(`  Replaces [${r.id.slice(0, 8)}] ${r.text} (${r.origin.summary}${wordsPart(r.origin)})`);
  if (p.history.length > 0) {
    lines.push('  History:');
    for (const h of p.history) {
      const change =
        h.oldText && h.newText && h.oldText !== h.newText
          ? `${h.oldText} → ${h.newText}`
          : (h.newText ?? h.oldText ?? '');
      lines.push(
        `    ${shortTime(h.createdAt)}  ${h.action.padEnd(9)} ${change}${h.reason ? `  (${h.reason})` : ''}`,
      );
    }
  }
  return lines;
}
