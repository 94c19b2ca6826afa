/**
 * The question wins for its turn: when a question explicitly asks for what a
 * standing preference filters out, the preference is set aside for that question — the SQL runs as
 * asked and the answer says which memory was not applied and why.
 *
 * Decided from the question AND the SQL the model wrote, per preference missing from the SQL:
 * 1. the SQL filters the preference's column with other constants, and the question names one of
 *    them → set aside ("your question asks for <value>");
 * 2. the question says "all/every/each/any/including/regardless of/irrespective of/whatever"
 *    together with the preference's column name ("every status") → set aside;
 * 3. the question names the preference's own constant after a negation ("not delivered",
 *    "other than delivered", "except delivered") → set aside;
 * 4. otherwise, when a chat model is given, it is asked (`memory-set-aside`, JSON schema
 *    `{setAside, reason}`): the rules above only read English, and a model that left a standing
 *    filter out may have done so on purpose ("tous les statuts"); without a model, or with an
 *    unreadable reply, the preference is enforced (the reminder retry, as before). When the model
 *    call fails (unreadable reply), the preference is listed in `undecided` so the answer can say
 *    that it was kept because the model could not decide (never silently).
 */
import { z } from 'zod';
import { isSqlrecallError } from '../core/errors.js';
import type { MemoryKind } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import { stem } from '../core/text.js';
import { callJson } from '../memory/json-call.js';
import { buildSetAsideMessages, MEMORY_PURPOSES } from '../memory/prompts.js';
import type { StatementParts } from '../memory/sql-fragment.js';
import type { RequiredPredicate } from './memory-sql.js';

/** A memory not applied to this question, and why (shown to the user). */
export interface SetAsideMemory {
  id: string;
  kind: MemoryKind;
  text: string;
  /** Why, for the user: e.g. "your question asks for every status". */
  reason: string;
  /** Who decided: a rule over the question and the SQL, or the model. */
  source: 'rule' | 'model';
}

/** Words that broaden a question past a filter. */
const BROADEN =
  /\b(?:all|every|each|any|including|include|includes|regardless(?:\s+of)?|irrespective(?:\s+of)?|whatever|no\s+matter)\b/i;
/** Negations before a value: "not delivered", "other than delivered", "except delivered". */
const NEGATION = String.raw`(?:not|non|other\s+than|except(?:\s+for)?|besides|excluding|apart\s+from|aren'?t|isn'?t|never)`;

const escapeRegex = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The constant as a user would write it: `s:Peru` → `Peru`, `n:10000` → `10000`. */
function plain(literal: string): string {
  return literal.replace(/^[snb]:/, '');
}

function wordsOf(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  ).map(stem);
}

/** True when `value` occurs in `question` as whole words (case-insensitive). */
function mentions(question: string, value: string): boolean {
  if (value.trim() === '') return false;
  return new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegex(value)}(?![\\p{L}\\p{N}])`, 'iu').test(question);
}

/** The rule verdict for one preference: set aside (with a reason), enforce, or ask the model. */
export function setAsideByRule(
  question: string,
  required: RequiredPredicate,
  statement: StatementParts | undefined,
): { verdict: 'set_aside'; reason: string } | { verdict: 'enforce' } | { verdict: 'unsure' } {
  const columns = required.parts.columns;
  const own = new Set(required.parts.literals);
  const filtersColumn = statement !== undefined && columns.some((c) => statement.columns.includes(c));
  const others = filtersColumn ? statement.literals.filter((l) => !own.has(l) && l !== 'null') : [];
  const named = others.map(plain).find((v) => mentions(question, v));
  if (named !== undefined) return { verdict: 'set_aside', reason: `your question asks for ${named}` };
  const questionWords = new Set(wordsOf(question));
  const columnWords = columns.flatMap((c) => c.split('_')).map(stem);
  const broad = BROADEN.exec(question);
  const column = columns.find((c) => c.split('_').every((w) => questionWords.has(stem(w))));
  if (broad && column) {
    return {
      verdict: 'set_aside',
      reason: `your question asks for ${broad[0].toLowerCase()} ${column.replace(/_/g, ' ')}`,
    };
  }
  for (const literal of own) {
    const value = plain(literal);
    if (value && new RegExp(`\\b${NEGATION}\\s+(?:\\w+\\s+)?${escapeRegex(value)}\\b`, 'i').test(question))
      return { verdict: 'set_aside', reason: `your question asks for what is not ${value}` };
  }
  const nonAscii = /[^\x20-\x7e]/.test(question);
  if (others.length > 0 || broad || nonAscii || columnWords.some((w) => questionWords.has(w)))
    return { verdict: 'unsure' };
  return { verdict: 'enforce' }; // no sign in English; decideSetAside still asks a model when it has one
}

/** A preference enforced because the set-aside model call failed (said in the answer). */
export interface UndecidedMemory {
  id: string;
  kind: MemoryKind;
  text: string;
  /** What went wrong with the model call, e.g. "the reply was not valid JSON". */
  error: string;
}

const replySchema = z.object({ setAside: z.boolean(), reason: z.string().nullable().optional() });

/**
 * Splits the preferences `missing` from a statement into those set aside for this question and
 * those still to enforce (see the module header for the rules).
 * @throws SqlrecallError `model_unreachable`/`model_missing` from the model call (other model
 *   failures enforce the preference)
 */
export async function decideSetAside(input: {
  question: string;
  missing: RequiredPredicate[];
  statement: StatementParts | undefined;
  chat?: ChatModel;
  signal?: AbortSignal;
}): Promise<{ setAside: SetAsideMemory[]; enforce: RequiredPredicate[]; undecided: UndecidedMemory[] }> {
  const setAside: SetAsideMemory[] = [];
  const enforce: RequiredPredicate[] = [];
  const undecided: UndecidedMemory[] = [];
  for (const required of input.missing) {
    const { id, kind, text, sql } = required.memory;
    const rule = setAsideByRule(input.question, required, input.statement);
    if (rule.verdict === 'set_aside') {
      setAside.push({ id, kind, text, reason: rule.reason, source: 'rule' });
      continue;
    }
    if (!input.chat) {
      enforce.push(required);
      continue;
    }
    let reply: Awaited<ReturnType<typeof callJson<typeof replySchema>>>;
    try {
      reply = await callJson(input.chat, buildSetAsideMessages(input.question, { text, sql }), replySchema, {
        purpose: MEMORY_PURPOSES.setAside,
        maxTokens: 128,
        signal: input.signal,
      });
    } catch (error) {
      if (isSqlrecallError(error, 'model_output')) {
        enforce.push(required);
        undecided.push({ id, kind, text, error: (error as Error).message });
        continue;
      }
      throw error;
    }
    if (reply.ok && reply.value.setAside) {
      const reason = reply.value.reason?.trim() || 'your question asks for what it filters out';
      setAside.push({ id, kind, text, reason, source: 'model' });
    } else {
      enforce.push(required);
      if (!reply.ok) undecided.push({ id, kind, text, error: reply.error });
    }
  }
  return { setAside, enforce, undecided };
}

/**
 * "Applied: <memory> — …" lines for preferences kept because the set-aside model call failed
 * (empty string when none).
 */
export function undecidedText(undecided: UndecidedMemory[]): string {
  return undecided
    .map(
      (u) =>
        `Applied: ${u.text} — the model could not say whether your question overrides it (${u.error}), so it was kept`,
    )
    .join('\n');
}

/** "Not applied: <memory> — <reason>" lines for the answer (empty string when none). */
export function setAsideText(setAside: SetAsideMemory[]): string {
  return setAside.map((s) => `Not applied: ${s.text} — ${s.reason}`).join('\n');
}
