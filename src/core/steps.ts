/**
 * What the question pipeline reports while it works. The same steps stream to the CLI, HTTP/SSE
 * and the web UI.
 */
import type { MemoryKind, MessageKind } from './memory.js';
import type { QueryResult } from './ports.js';

/** One attempt at SQL for a question (the first try, then repairs). */
export interface Attempt {
  sql: string;
  /** Why the attempt failed (guard refusal or database error); absent on success. */
  error?: string;
}

/** A memory applied to a question (shown as "Applied: …"; `--without <id>` skips it). */
export interface AppliedMemory {
  id: string;
  kind: MemoryKind;
  text: string;
}

/** One change a message made to the user's memories. */
export interface MemoryChange {
  action: 'ADD' | 'UPDATE' | 'SUPERSEDE' | 'NOOP' | 'DELETE' | 'RESTORE';
  /** The memory created or changed (null when nothing was stored). */
  id: string | null;
  kind: MemoryKind;
  text: string;
  /** Why (e.g. "exact duplicate", "model decided SUPERSEDE"). */
  reason?: string;
  /** For SUPERSEDE: the memory the new one replaced (kept in the history; restorable). */
  replaced?: { id: string; text: string };
  /** True when the memory was stored pinned (`memory add --pin`, `POST /api/memories` with `pinned`). */
  pinned?: boolean;
}

/** A pipeline step. */
export type Step =
  | { type: 'schema'; tables: number; promptTokens: number }
  | { type: 'sql'; sql: string; attempt: number }
  | { type: 'refused'; sql: string; reason: string }
  | { type: 'retried'; attempt: number; error: string }
  | { type: 'rows'; result: QueryResult }
  | { type: 'answer_token'; text: string }
  | { type: 'answer'; text: string }
  | { type: 'classified'; kind: MessageKind; source: 'pattern' | 'model' }
  | { type: 'recalled'; memories: (AppliedMemory & { why: string })[] }
  | { type: 'remembered'; changes: MemoryChange[]; problems: string[] }
  /** A message answered without SQL (an instruction, a memory command, a greeting). */
  | { type: 'reply'; text: string }
  /**
   * Answered without the model: from a saved example (`exampleId`) or a rule. `why` says
   * why the model was not used (`--no-model`, or the model error).
   */
  | { type: 'fallback'; path: 'example' | 'rules'; exampleId?: string; why: string; explanation: string }
  | { type: 'done'; outcome: AskOutcome };

/** Final outcome of one question (the `ask --json` document minus the question). */
export interface AskOutcome {
  question: string;
  sql: string | null;
  result: QueryResult | null;
  answer: string | null;
  attempts: Attempt[];
  appliedMemories: AppliedMemory[];
  /**
   * Memories that reached the SQL prompt but whose predicate was not verified in the SQL (a
   * definition or a preference without SQL, a metric the query did not use): the model may or may
   * not have followed them. Disjoint from `appliedMemories` and `setAsideMemories`.
   */
  recalledMemories: AppliedMemory[];
  /**
   * Standing preferences set aside for this question because it explicitly asked for what they
   * filter out, each with the reason shown to the user. Absent when none.
   */
  setAsideMemories?: (AppliedMemory & { reason: string })[];
  /** What the message was: question, instruction, both, command or neither (absent without memory). */
  kind?: MessageKind;
  /** Changes to memories made by this message (instruction, both, memory commands). */
  remembered?: MemoryChange[];
  /** Facts that could not be read or stored, said to the user (never dropped silently). */
  memoryProblems?: string[];
  /** The conversation this turn belongs to (absent without memory). */
  conversationId?: string;
  /**
   * Set when the question cannot be answered from this database (the model said so instead of
   * writing SQL): its reason, possibly ''. `sql` is then null and `answer` says so honestly.
   */
  unanswerable?: string;
  /** Which path produced the SQL: the model, a saved example or a rule; absent = model. */
  path?: 'model' | 'example' | 'rules';
  /** The saved example reused (path `example`). */
  exampleId?: string;
  /**
   * True when the user's data policy keeps result values from the model (privacy mode): the
   * answer was written from the column names, types and row count only. Absent otherwise.
   */
  privacyMode?: boolean;
}
