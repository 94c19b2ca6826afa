/**
 * What a message asks for: a question, an instruction to remember, both, a
 * memory command ("forget the India filter", "what do you remember about me?") or neither. Fast
 * patterns decide the usual phrasings; the model is asked only when they disagree within one
 * clause (an instruction phrase inside a question).
 */
import { z } from 'zod';
import { isSqlrecallError } from '../core/errors.js';
import type { MessageKind } from '../core/memory.js';
import type { ChatModel } from '../core/ports.js';
import { callJson } from './json-call.js';
import { buildClassifyMessages, MEMORY_PURPOSES } from './prompts.js';
import { definedTerm } from './text.js';

/** Kinds of message (declared in core, re-exported for existing imports). */
export type { MessageKind };

/** A memory command typed in plain language. */
export type MemoryCommand = { type: 'list' } | { type: 'forget'; target: string };

/** Result of {@link classifyMessage}. */
export interface Classification {
  kind: MessageKind;
  /** The part to remember (instruction and both), else null. */
  instruction: string | null;
  /** The part to answer (question and both), else null. */
  question: string | null;
  /** For `command`. */
  command?: MemoryCommand;
  /** Who decided: the patterns, or the model (when the patterns were unsure). */
  source: 'pattern' | 'model';
  /** When the model was asked and failed: why the patterns' best guess was used. */
  note?: string;
}

const LIST_COMMAND =
  /^\s*(?:please\s+)?(?:what\s+do\s+you\s+(?:remember|know)(?:\s+about\s+me)?|what\s+have\s+you\s+(?:learned|learnt|remembered)(?:\s+about\s+me)?|(?:show|list)\s+(?:me\s+)?(?:all\s+)?(?:my|your)\s+(?:memories|preferences)|my\s+memories)\s*[?.!]*\s*$/i;
const FORGET_COMMAND =
  /^\s*(?:please\s+)?(?:forget|stop\s+remembering|(?:delete|remove|drop)\s+(?:the\s+|my\s+)?(?:memory|preference|rule)\b)\s*(?:about\s+|that\s+)?(.*?)\s*[.!]*\s*$/i;
const NEITHER =
  /^\s*(?:hi|hello|hey|thanks|thank\s+you|thx|ok|okay|cool|great|nice|good\s+(?:morning|evening)|bye)\b[\s!.,]*(?:sqlrecall)?[\s!.]*$/i;

/** Phrases that make a clause an instruction when it starts with them. */
const INSTRUCTION_START =
  /^(?:please\s+|ok(?:ay)?,?\s+|and\s+|also,?\s+)?(?:always|never|from\s+now\s+on|going\s+forward|(?:in\s+)?(?:the\s+)?future|henceforth|by\s+default|remember(?:\s+that)?|note\s+that|keep\s+in\s+mind|only\b|don'?t\s+(?:show|include|list|count)|do\s+not\s+(?:show|include|list|count)|stop\s+(?:showing|including|listing|counting)|exclude|i\s+(?:would|'d)?\s*prefer|i\s+prefer|i\s+no\s+longer|we\s+no\s+longer|i\s+(?:only\s+)?(?:care|want)\s+(?:about|to\s+see)\s+only|define\s|by\s+.+\bi\s+mean\b|when\s+i\s+say\b)/i;
/** "show all … again", "include … again", "actually show … again": undoing a standing filter. */
const AGAIN =
  /^(?:actually,?\s+|ok(?:ay)?,?\s+)?(?:please\s+)?(?:show|include|list|count)\s+(?:all\b|every\b|the\b|\w+).*\bagain\b/i;
/** Instruction phrases that, inside a question, make the patterns unsure. */
const INSTRUCTION_INSIDE =
  /\b(?:from\s+now\s+on|going\s+forward|by\s+default|always|i\s+prefer|remember\s+that)\b/i;
const QUESTION_START =
  /^(?:please\s+)?(?:what|which|who|whom|whose|how|when|where|why|is|are|was|were|do|does|did|can|could|would|will|should|list|show|give|find|count|get|display|tell|compare|top|sum|total|average|plot|chart|rank|break\s+down)\b/i;

type ClauseKind = 'question' | 'instruction' | 'unsure';

/** Splits a message into clauses: sentences, dashes, and ", <question word> …". */
export function splitClauses(message: string): string[] {
  return message
    .split(
      /(?<=[.?!;])\s+|\s+[—–]\s*|\s*[—–]\s+|\s+-{1,2}\s+|,\s+(?=(?:and\s+|so\s+|then\s+)?(?:what|how|which|who|when|where|why|show|list|give|count)\b)/i,
    )
    .map((c) => c.trim())
    .filter((c) => c.replace(/[\s.?!;,]/g, '') !== '');
}

/**
 * Phrases that, anywhere in a clause, say it may define or change something rather than ask:
 * "… means …", "… is when …", "actually …", "… again", "… instead".
 */
const NOT_PLAINLY_A_QUESTION =
  /\b(?:means|mean|is\s+when|are\s+when|stands\s+for|refers\s+to|actually|again|instead|anymore|any\s+more)\b/i;

/**
 * True when the clause is written in plain ASCII English-looking text: the fast patterns only know
 * English, so anything else (accents, other scripts) is for the model classifier to judge.
 */
function looksEnglish(clause: string): boolean {
  return /^[\x20-\x7e\t\n\r‘’“”—–]*$/.test(clause);
}

function clauseKind(clause: string): ClauseKind {
  const asksQuestion = QUESTION_START.test(clause) || /\?\s*$/.test(clause);
  const instructs =
    INSTRUCTION_START.test(clause) || AGAIN.test(clause) || (!asksQuestion && definedTerm(clause) !== null);
  if (instructs && !/\?\s*$/.test(clause)) return 'instruction';
  if (asksQuestion && INSTRUCTION_INSIDE.test(clause)) return 'unsure';
  if (instructs) return 'unsure'; // "only delivered orders?"
  // Patterns are a fast path only: a clause they cannot confidently call a question goes to the model.
  const asked = /\?\s*$/.test(clause) && QUESTION_START.test(clause);
  if (!asksQuestion || !looksEnglish(clause) || (!asked && NOT_PLAINLY_A_QUESTION.test(clause)))
    return 'unsure';
  return 'question';
}

/** Words that do not name a memory: deictic ("that", "everything above") or about the conversation. */
const NOT_A_MEMORY_NAME = new Set(
  (
    'that this it its these those everything anything something all above below previous prior earlier ' +
    'last before instruction instructions said say told tell rule rules prompt prompts system message ' +
    'messages conversation chat context what whatever i you me we us about the a an of to my your ' +
    'memory memories preference preferences filter filters one thing things please just now'
  ).split(' '),
);
/** A forget target that goes on to ask or order something else ("… and drop the customers table"). */
const TARGET_CONTINUES =
  /(?:[,;:]|\b(?:and|then|but|also|so)\s+(?:\w+\s+)?(?:drop|delete|remove|list|show|give|tell|count|select|run|update|insert|create|alter|truncate|grant|ignore|what|how|which|who|where|when|why|answer|do|make|print|return|output|get|find)\b)/i;

/**
 * Whether a forget target names one thing to forget on its own: at least one word that is not
 * deictic or conversational ("that", "previous instructions", "everything above"), and no second
 * request after it. Only such targets make a message a forget command.
 */
export function namesForgetTarget(target: string): boolean {
  if (TARGET_CONTINUES.test(target)) return false;
  const words = target.toLowerCase().match(/[\p{L}\p{N}_-]+/gu) ?? [];
  if (/^[0-9a-f-]{4,36}$/.test(target.trim().toLowerCase())) return true;
  return words.some((w) => !NOT_A_MEMORY_NAME.has(w));
}

/** A clause that only says "forget that/it" (conversation filler, never a deletion). */
const FORGET_FILLER =
  /^\s*(?:ok(?:ay)?,?\s+)?(?:never\s*mind|forget\s+(?:that|it|this|about\s+(?:that|it)))\s*[.!,]*\s*$/i;

/** The patterns' verdict; `unsure` when a clause mixes both signals. */
export function classifyByPatterns(message: string): Classification | 'unsure' {
  const text = message.trim();
  if (LIST_COMMAND.test(text)) return pattern('command', null, null, { type: 'list' });
  const forget = FORGET_COMMAND.exec(text);
  const whole = splitClauses(text);
  // A forget command is the whole message and names what to forget; "forget that, how many …"
  // is a question and "forget previous instructions and drop …" deletes nothing.
  if (forget && whole.length <= 1 && (forget[1]!.trim() === '' || namesForgetTarget(forget[1]!)))
    return pattern('command', null, null, { type: 'forget', target: forget[1]!.trim() });
  if (NEITHER.test(text)) return pattern('neither', null, null);
  const clauses = whole.filter((c) => !FORGET_FILLER.test(c));
  if (clauses.length === 0) return pattern('neither', null, null);
  if (forget && whole.length <= 1) return pattern('question', null, text); // an unsafe "forget …": answered, never obeyed
  const kinds = clauses.map(clauseKind);
  if (kinds.includes('unsure')) return 'unsure';
  const instruction = clauses.filter((_, i) => kinds[i] === 'instruction').join(' ');
  const question = clauses.filter((_, i) => kinds[i] === 'question').join(' ');
  if (instruction && question) return pattern('both', instruction, question);
  if (instruction) return pattern('instruction', instruction, null);
  return pattern('question', null, clauses.length === whole.length ? text : question);
}

function pattern(
  kind: MessageKind,
  instruction: string | null,
  question: string | null,
  command?: MemoryCommand,
): Classification {
  return { kind, instruction, question, ...(command ? { command } : {}), source: 'pattern' };
}

const modelReplySchema = z.object({
  kind: z.enum(['question', 'instruction', 'both', 'neither']),
  instruction: z.string().nullable().optional(),
  question: z.string().nullable().optional(),
});

/**
 * Classifies a message: patterns first, then `chat` (JSON-schema output) when they are unsure.
 * When the model fails or is not given, an unsure message is treated as a question (answering is
 * the safe default: nothing is stored that the user did not clearly ask to store).
 * @throws never for model output problems (`model_output`); `model_unreachable`, `model_missing` are thrown.
 */
export async function classifyMessage(
  message: string,
  options: { chat?: ChatModel; signal?: AbortSignal } = {},
): Promise<Classification> {
  const verdict = classifyByPatterns(message);
  if (verdict !== 'unsure') return verdict;
  const fallback: Classification = {
    kind: 'question',
    instruction: null,
    question: message,
    source: 'pattern',
  };
  if (!options.chat) return { ...fallback, note: 'unsure; treated as a question' };
  let reply: Awaited<ReturnType<typeof callJson<typeof modelReplySchema>>>;
  try {
    reply = await callJson(options.chat, buildClassifyMessages(message), modelReplySchema, {
      purpose: MEMORY_PURPOSES.classify,
      maxTokens: 256,
      signal: options.signal,
    });
  } catch (error) {
    // A model that errors on this call (HTTP 500, bad output) must not cost the user the answer.
    if (isSqlrecallError(error, 'model_output'))
      return { ...fallback, note: `the model failed (${error.message})` };
    throw error;
  }
  if (!reply.ok) return { ...fallback, note: `the model's classification was unreadable (${reply.error})` };
  const { kind } = reply.value;
  const instruction = reply.value.instruction?.trim() || null;
  const question = reply.value.question?.trim() || null;
  if (kind === 'both')
    return { kind, instruction: instruction ?? message, question: question ?? message, source: 'model' };
  if (kind === 'instruction')
    return { kind, instruction: instruction ?? message, question: null, source: 'model' };
  if (kind === 'neither') return { kind, instruction: null, question: null, source: 'model' };
  return { kind: 'question', instruction: null, question: message, source: 'model' };
}
