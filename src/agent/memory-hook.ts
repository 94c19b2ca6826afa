/**
 * The memory side of one message, as a hook the {@link Assistant} calls at three points (so
 * `ask()` stays a short composition):
 * 1. `begin` — classify the message; answer memory-only messages (instruction → "Remembered: …",
 *    memory commands, greetings) without SQL; for a message that also asks, queue its instruction
 *    as a durable pending write BEFORE answering;
 * 2. `prompt` — the memories and the conversation for the SQL prompt;
 * 3. `finish` — after the answer is shown: record the turn, then apply the pending write.
 * Memory off for the user → nothing is recalled or learned, and turns are kept in this process only.
 */
import { randomUUID } from 'node:crypto';
import { findCredentials, maskCredentials } from '../core/credentials.js';
import type { Memory, MemoryScope } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { MemoryChange } from '../core/steps.js';
import { type Classification, classifyMessage } from '../memory/classify.js';
import { type ConversationContext, LocalConversations, renderConversation } from '../memory/conversation.js';
import { dayOverProblem, expiryOf, isTimeZone, userTimeZone } from '../memory/expiry.js';
import type { RecalledMemory } from '../memory/recall.js';
import { credentialProblem, MemoryService, type PendingLearn } from '../memory/service.js';
import type { TurnMemory } from '../memory/store/types.js';
import { clip } from '../memory/text.js';

/** Inputs of {@link MemoryHook.begin}. */
export interface MemoryTurnInput {
  user: string;
  team?: string;
  message: string;
  /** Conversation to continue; default a fresh one. */
  conversationId?: string;
  /** Memory ids (or id prefixes of ≥ 4 characters) to skip for this message. */
  without?: string[];
  /**
   * A plain-language "forget …" deletes only when true (`ask --yes`); otherwise the reply names the
   * memory it would forget and how to confirm (default false: nothing is deleted by accident).
   */
  confirmDeletes?: boolean;
  schema: Schema;
  signal?: AbortSignal;
  /** The user's IANA time zone for the days a message names; default {@link userTimeZone}. */
  timeZone?: string;
}

/** A message answered without SQL. */
export interface MemoryReply {
  text: string;
  changes: MemoryChange[];
  problems: string[];
}

/** What the SQL prompt gets from memory. */
export interface MemoryPrompt {
  recalled: RecalledMemory[];
  /** The instruction part of this message (not stored yet), applied to this answer. */
  transient: string[];
  /** Rendered conversation context ('' when none). */
  conversationText: string;
  /** Sentences for the user about how the memories were found (e.g. by words, not meaning); default none. */
  notes?: string[];
}

/** The memory side of one message. */
export interface MemoryTurn {
  classification: Classification;
  /**
   * Whether memory is on for the user (read once by `begin`): later steps of the same message
   * (e.g. few-shot examples) use it instead of asking the store again.
   */
  memoryEnabled: boolean;
  conversationId: string;
  /** Set when the message needs no SQL: the reply to show. */
  reply: MemoryReply | null;
  /** The question to answer (the question part of a message that is both). */
  question: string;
  prompt(tablesInPlay: string[]): Promise<MemoryPrompt>;
  /**
   * Records the turn (with the memories applied to its answer and those only recalled), marks the
   * applied ones as just applied, and applies the pending write (after the answer is shown).
   */
  finish(turn: FinishedTurn): Promise<MemoryReply | null>;
  /** The question failed: applies the pending write anyway (never throws; a failure stays queued). */
  abandon(): Promise<void>;
}

/** What {@link MemoryTurn.finish} records of an answered turn. */
export interface FinishedTurn {
  sql: string | null;
  rowCount: number | null;
  answer: string | null;
  /** Memories applied to the answer (verified in its SQL); default none. */
  appliedMemories?: TurnMemory[];
  /** Memories shown to the model but not verified; default none. */
  recalledMemories?: TurnMemory[];
}

/** The hook the Assistant calls. */
export interface MemoryHook {
  begin(input: MemoryTurnInput): Promise<MemoryTurn>;
}

/** Options of {@link createMemoryHook}. */
export interface MemoryHookOptions {
  service: MemoryService;
  /** For classification when the patterns are unsure. */
  chat?: ChatModel;
}

const GREETING =
  'Ask me a question about your data, or tell me something to remember (for example "always show me customers from India").';

/** Short form of a memory for replies: `[3f2a9c1b] preference: only customers from India`. */
export function describeMemory(memory: Pick<Memory, 'id' | 'kind' | 'text'>): string {
  return `[${memory.id.slice(0, 8)}] ${memory.kind}: ${memory.text}`;
}

/** "Remembered: …" text for a set of changes. */
export function rememberedText(changes: MemoryChange[], problems: string[]): string {
  const lines: string[] = [];
  for (const c of changes) {
    const id = c.id ? ` [${c.id.slice(0, 8)}]` : '';
    if (c.action === 'NOOP') lines.push(`Already remembered${id}: ${c.text}`);
    else if (c.action === 'SUPERSEDE' && c.replaced) {
      lines.push(`Replaced [${c.replaced.id.slice(0, 8)}] ${c.replaced.text}`);
      lines.push(`Remembered${id}: ${c.text}`);
    } else if (c.action === 'SUPERSEDE')
      lines.push(`Remembered${id} (replaces an earlier memory): ${c.text}`);
    else if (c.action === 'UPDATE') lines.push(`Updated${id}: ${c.text}`);
    else lines.push(`Remembered${id}: ${c.text}`);
  }
  if (changes.length === 0 && problems.length === 0)
    lines.push('Nothing to remember was found in that message.');
  for (const p of problems) lines.push(`Note: ${p}`);
  return lines.join('\n');
}

/** Creates the memory hook over a {@link MemoryService}. */
export function createMemoryHook(options: MemoryHookOptions): MemoryHook {
  const { service } = options;
  /** Turns of conversations whose user has memory off (this process only, keyed by scope and id). */
  const localTurns = new LocalConversations();

  async function commandReply(
    scope: MemoryScope,
    input: MemoryTurnInput,
    c: Classification,
  ): Promise<MemoryReply> {
    if (c.command?.type === 'list') {
      const own = await service.activeMemories(scope);
      const team = input.team === undefined ? [] : await service.activeMemories({ team: input.team });
      if (own.length === 0 && team.length === 0)
        return { text: 'I do not remember anything about you yet.', changes: [], problems: [] };
      const lines = [
        ...own.map(describeMemory),
        ...team.map((m) => `${describeMemory(m)} (team ${input.team})`),
      ];
      return { text: `I remember:\n${lines.join('\n')}`, changes: [], problems: [] };
    }
    const target = c.command?.type === 'forget' ? c.command.target : '';
    if (!target)
      return {
        text: 'Say what to forget, e.g. "forget the India filter", or use /forget <id>.',
        changes: [],
        problems: [],
      };
    if (!input.confirmDeletes) {
      const found = await service.findForget(scope, target);
      if (found.deleted) {
        const d = found.deleted;
        return {
          text: `Forget ${describeMemory(d)}? Nothing was deleted yet. Confirm with /forget ${d.id.slice(0, 8)} (chat), \`sqlrecall memory delete ${d.id.slice(0, 8)} --user ${JSON.stringify(input.user)}\`, or repeat with --yes.`,
          changes: [],
          problems: [],
        };
      }
      if (found.candidates.length === 0)
        return { text: `I have no memory matching "${clip(target, 80)}".`, changes: [], problems: [] };
      return {
        text: `Which one? Use /forget <id> (or sqlrecall memory delete <id>):\n${found.candidates.map(describeMemory).join('\n')}`,
        changes: [],
        problems: [],
      };
    }
    const result = await service.forget(scope, target);
    if (result.deleted) {
      const d = result.deleted;
      return {
        text: `Forgot ${describeMemory(d)}\nUndo with: sqlrecall memory restore ${d.id} --user ${JSON.stringify(input.user)}`,
        changes: [{ action: 'DELETE', id: d.id, kind: d.kind, text: d.text }],
        problems: [],
      };
    }
    if (result.candidates.length === 0)
      return { text: `I have no memory matching "${clip(target, 80)}".`, changes: [], problems: [] };
    return {
      text: `Which one? Use /forget <id> (or sqlrecall memory delete <id>):\n${result.candidates.map(describeMemory).join('\n')}`,
      changes: [],
      problems: [],
    };
  }

  async function begin(original: MemoryTurnInput): Promise<MemoryTurn> {
    // Credentials in the message are masked before anything else sees it (classifier, conversation
    // history, the pending-write queue, the SQL prompt); the reply says what was found.
    const secrets = findCredentials(original.message);
    const input = secrets.length > 0 ? { ...original, message: maskCredentials(original.message) } : original;
    const secretNote = secrets.length > 0 ? [credentialProblem(secrets)] : [];
    const scope: MemoryScope = { user: input.user };
    const zone = input.timeZone && isTimeZone(input.timeZone) ? input.timeZone : userTimeZone();
    const enabled = await service.isEnabled(scope);
    const classification = await classifyMessage(input.message, { chat: options.chat, signal: input.signal });
    const conversationId = input.conversationId ?? randomUUID();
    const fresh = input.conversationId === undefined;
    const base = { classification, conversationId, memoryEnabled: enabled };
    /** A turn answered by its reply alone: no SQL, nothing recalled, nothing to finish. */
    const replyOnly = (reply: NonNullable<MemoryTurn['reply']>): MemoryTurn => ({
      ...base,
      reply,
      question: input.message,
      prompt: async () => ({ recalled: [], transient: [], conversationText: '' }),
      finish: async () => null,
      abandon: async () => {},
    });

    if (classification.kind === 'neither') {
      return replyOnly({ text: GREETING, changes: [], problems: [] });
    }
    if (classification.kind === 'command') {
      const reply = await commandReply(scope, input, classification);
      return replyOnly(reply);
    }
    const instruction = classification.instruction;
    if (classification.kind === 'instruction') {
      if (!enabled) {
        const text = `Memory is off for ${input.user}: nothing was remembered. Turn it on with \`sqlrecall memory on --user ${JSON.stringify(input.user)}\`.`;
        return replyOnly({ text, changes: [], problems: [] });
      }
      const now = new Date();
      const expiry = expiryOf(instruction ?? input.message, now, zone);
      // "until 2020-01-01": refused as `memory add --until` refuses it, nothing queued or stored.
      const over = expiry ? dayOverProblem(expiry, now, zone) : null;
      if (over) return replyOnly({ text: `Not remembered: ${over}`, changes: [], problems: [over] });
      const payload: PendingLearn = {
        type: 'learn',
        message: instruction ?? input.message,
        messageId: MemoryService.messageId(),
        conversationId,
        ...expiryFields(expiry),
        words: input.message,
      };
      const pendingId = await service.enqueue(scope, payload);
      const learned = await service.applyPending(pendingId, scope, payload, {
        schema: input.schema,
        signal: input.signal,
      });
      const problems = [...secretNote, ...learned.problems];
      return replyOnly({
        text: rememberedText(learned.changes, problems),
        changes: learned.changes,
        problems,
      });
    }

    // question, or both: answer now; learn the instruction part after the answer.
    let pending: { id: string; payload: PendingLearn } | undefined;
    /** Set when the instruction part names a day already over: it is neither applied nor stored. */
    let over: string | null = null;
    if (classification.kind === 'both' && enabled && instruction) {
      const now = new Date();
      const expiry = expiryOf(instruction, now, zone);
      over = expiry ? dayOverProblem(expiry, now, zone) : null;
      if (!over) {
        const payload: PendingLearn = {
          type: 'learn',
          message: instruction,
          messageId: MemoryService.messageId(),
          conversationId,
          ...expiryFields(expiry),
          words: input.message,
        };
        pending = { id: await service.enqueue(scope, payload), payload };
      }
    }
    const question = classification.question ?? input.message;

    /** Owner of each memory recalled for this message (applied team memories are marked in the team's scope). */
    const owners = new Map<string, 'user' | 'team'>();
    const prompt = async (tablesInPlay: string[]): Promise<MemoryPrompt> => {
      const notes: string[] = [];
      const recalled = enabled
        ? await service.recall({
            user: input.user,
            team: input.team,
            question,
            tablesInPlay,
            without: input.without,
            signal: input.signal,
            onNote: (note) => notes.push(note),
          })
        : [];
      for (const r of recalled) owners.set(r.memory.id, r.owner);
      let context: ConversationContext | undefined;
      if (!enabled)
        context = { conversationId, summary: null, turns: localTurns.turns(scope, conversationId) };
      else if (!fresh) context = await service.conversation(scope, conversationId);
      return {
        recalled,
        transient: classification.kind === 'both' && instruction && !over ? [instruction] : [],
        conversationText: renderConversation(context),
        ...(notes.length > 0 ? { notes } : {}),
      };
    };

    const finish = async (turn: FinishedTurn) => {
      if (!enabled) {
        localTurns.record(scope, conversationId, {
          question,
          sql: turn.sql,
          rowCount: turn.rowCount,
          summary: turn.answer ? clip(turn.answer, 240) : null,
        });
        return null;
      }
      // The instruction of a message that also asks was applied to this answer (shown to the model
      // as this turn's instruction): once stored, its memory is part of the turn's evidence and
      // was applied now. So it is learned first, then the turn is recorded with it; a learn that
      // fails still records the turn, then reports the failure.
      let learned: Awaited<ReturnType<MemoryService['applyPending']>> | undefined;
      let failure: unknown;
      if (pending) {
        try {
          learned = await service.applyPending(pending.id, scope, pending.payload, {
            schema: input.schema,
            signal: input.signal,
          });
        } catch (error) {
          failure = error;
        }
      }
      const applied = [...(turn.appliedMemories ?? [])];
      for (const c of learned?.changes ?? []) {
        if (c.id === null || c.action === 'DELETE' || applied.some((m) => m.id === c.id)) continue;
        applied.push({ id: c.id, kind: c.kind, text: c.text });
      }
      const taught = new Set(applied.map((m) => m.id));
      const recalledMemories = (turn.recalledMemories ?? []).filter((m) => !taught.has(m.id));
      // A fresh conversation's first turn: nothing to roll into its summary, no re-read needed.
      await service.recordTurn(
        scope,
        conversationId,
        { question, ...turn, appliedMemories: applied, recalledMemories },
        { firstTurn: fresh },
      );
      await markApplied(applied);
      if (failure !== undefined) throw failure;
      if (over) return { text: `Not remembered: ${over}`, changes: [], problems: [...secretNote, over] };
      if (!learned) return null;
      const problems = [...secretNote, ...learned.problems];
      return { text: rememberedText(learned.changes, problems), changes: learned.changes, problems };
    };

    /** Sets "last applied" of the applied memories, each in its owner's scope; never fails the answer. */
    const markApplied = async (applied: readonly TurnMemory[]) => {
      const own = applied.filter((m) => owners.get(m.id) !== 'team').map((m) => m.id);
      const team = applied.filter((m) => owners.get(m.id) === 'team').map((m) => m.id);
      try {
        if (own.length > 0) await service.markApplied(scope, own);
        if (team.length > 0 && input.team !== undefined)
          await service.markApplied({ team: input.team }, team);
      } catch {
        // Bookkeeping only: the answer and the turn are already stored.
      }
    };

    const abandon = async () => {
      if (!pending) return;
      const { id, payload } = pending;
      pending = undefined;
      await service.applyPending(id, scope, payload, { schema: input.schema }).catch(() => undefined);
    };

    return { ...base, reply: null, question, prompt, finish, abandon };
  }

  return { begin };
}

/** The expiry fields of a queued write: the instant and the day the message named. */
function expiryFields(expiry: { expiresAt: string; expiresOn: string } | null): {
  expiresAt: string | null;
  expiresOn: string | null;
} {
  return { expiresAt: expiry?.expiresAt ?? null, expiresOn: expiry?.expiresOn ?? null };
}
