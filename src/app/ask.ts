/**
 * The `ask` use case: one message through the question pipeline, ending in one
 * {@link AskDocument}. `sqlrecall ask --json`, `POST /api/ask` (its JSON body, and the `done`
 * event of its stream) and the MCP `ask` tool all print this document, built here from the
 * pipeline's {@link AskOutcome} and nowhere else; front ends that show progress read the steps
 * on the way.
 */
import type { AskInput } from '../agent/assistant.js';
import type { StatementListener } from '../core/audit.js';
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import { checkQuestion } from '../core/limits.js';
import type { MessageKind } from '../core/memory.js';
import type { AppliedMemory, AskOutcome, Attempt, MemoryChange, Step } from '../core/steps.js';
import type { EffectivePolicy } from '../policy/types.js';
import { type ChartSpec, chartFor } from './chart.js';
import { type ErrorDocument, errorDocument } from './error-document.js';
import type { ResultRows } from './run-sql.js';

/**
 * The result of one question, the same on every surface. Values follow the value contract
 * (bigint and numeric as exact strings, dates as ISO strings, JSON as text).
 */
export type AskDocument = {
  /** The message as the user wrote it. */
  question: string;
  /** The statement that ran; null when none did (an instruction, an unanswerable question). */
  sql: string | null;
  /** The short answer written from the rows, or the reply to a message without SQL; null: none. */
  answer: string | null;
  /** Memories whose condition was verified in the SQL. */
  appliedMemories: AppliedMemory[];
  /** Memories that reached the prompt but could not be verified in the SQL. */
  recalledMemories: AppliedMemory[];
  /** Standing preferences set aside because the question asked for what they filter out. */
  setAsideMemories?: (AppliedMemory & { reason: string })[];
  /** Every statement tried, oldest first, with why a failed one failed. */
  attempts: Attempt[];
  /** A chart that fits the rows (a bar or line chart), or null. */
  chart: ChartSpec | null;
  /**
   * question | instruction | both | command | neither; null when the message was not classified
   * (memory off, or answered without the model). Always present, so every front end prints the
   * same fields.
   */
  kind: MessageKind | null;
  /** Changes this message made to the user's memories. */
  remembered?: MemoryChange[];
  /** Facts that could not be read or stored (never dropped silently). */
  memoryProblems?: string[];
  /** The conversation of this turn (a follow-up passes it back); null when none is kept (memory off). */
  conversationId: string | null;
  /** Set when this database has no data for the question: the model's reason (possibly ''). */
  unanswerable?: string;
  /** Set when the answer was made without the model: `example` or `rules`. */
  path?: 'model' | 'example' | 'rules';
  /** The saved example reused (path `example`). */
  exampleId?: string;
  /**
   * True when privacy mode was on (the user's data policy keeps result values from the model): the
   * answer was written without showing the data to the model. Absent otherwise.
   */
  privacyMode?: boolean;
} & ResultRows;

/** The {@link AskDocument} of an outcome. */
export function askDocument(outcome: AskOutcome): AskDocument {
  const result = outcome.result;
  return {
    question: outcome.question,
    sql: outcome.sql,
    columns: result?.columns.map((c) => c.name) ?? [],
    columnTypes: result?.columns.map((c) => c.type) ?? [],
    rows: result?.rows ?? [],
    rowCount: result?.rowCount ?? 0,
    truncated: result?.truncated ?? false,
    ...(result?.truncatedReason !== undefined ? { truncatedReason: result.truncatedReason } : {}),
    answer: outcome.answer,
    appliedMemories: outcome.appliedMemories,
    recalledMemories: outcome.recalledMemories,
    ...(outcome.setAsideMemories !== undefined ? { setAsideMemories: outcome.setAsideMemories } : {}),
    attempts: outcome.attempts,
    chart: chartFor(result),
    kind: outcome.kind ?? null,
    ...(outcome.remembered !== undefined ? { remembered: outcome.remembered } : {}),
    ...(outcome.memoryProblems !== undefined ? { memoryProblems: outcome.memoryProblems } : {}),
    conversationId: outcome.conversationId ?? null,
    ...(outcome.unanswerable !== undefined ? { unanswerable: outcome.unanswerable } : {}),
    ...(outcome.path !== undefined ? { path: outcome.path } : {}),
    ...(outcome.exampleId !== undefined ? { exampleId: outcome.exampleId } : {}),
    ...(outcome.privacyMode ? { privacyMode: true } : {}),
  };
}

/** The question pipeline an ask runs on (the runtime's Assistant). */
export interface AskPipeline {
  ask(input: AskInput): AsyncGenerator<Step, AskOutcome>;
}

/** One message, as every front end passes it after parsing its own input. */
export interface AskRequest {
  /** Whose memories apply (the signed-in or configured user; never taken from the message). */
  user: string;
  /** The user's team, whose shared memories also apply. */
  team?: string;
  /** The message, at most 4,000 characters (checked before any model call). */
  question: string;
  /** Conversation to continue; default a fresh one. */
  conversationId?: string;
  /** Memory ids (or id prefixes) not to apply. */
  without?: string[];
  /** Skip the written answer (SQL and rows only). */
  skipAnswer?: boolean;
  /** A plain-language "forget …" may delete without asking (`ask --yes`); default false. */
  confirmDeletes?: boolean;
  /** Answer only from saved examples and rules, never calling the model (`ask --no-model`). */
  noModel?: boolean;
  /** The user's IANA time zone, for days a message names; default the configured or process zone. */
  timeZone?: string;
  /** Aborting it stops the model call and cancels the running statement. */
  signal?: AbortSignal;
  /** The user's data policy (see `AskInput.policy`); default nothing restricted. */
  policy?: EffectivePolicy;
  /** Told of every statement run or refused for this message (the audit trail). */
  onStatement?: StatementListener;
}

/** The pipeline input of a request. */
function inputOf(request: AskRequest): AskInput {
  return {
    user: request.user,
    message: request.question,
    ...(request.team !== undefined ? { team: request.team } : {}),
    ...(request.conversationId !== undefined ? { conversationId: request.conversationId } : {}),
    ...(request.without !== undefined ? { without: request.without } : {}),
    ...(request.skipAnswer ? { skipAnswer: true } : {}),
    ...(request.confirmDeletes ? { confirmDeletes: true } : {}),
    ...(request.noModel ? { noModel: true } : {}),
    ...(request.timeZone !== undefined ? { timeZone: request.timeZone } : {}),
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.policy ? { policy: request.policy } : {}),
    ...(request.onStatement ? { onStatement: request.onStatement } : {}),
  };
}

/**
 * Runs one message, yielding the pipeline's steps as they happen (for progress and streams);
 * returns its {@link AskDocument}.
 * @throws SqlrecallError `usage` (empty or too long), `guard_refused`, `sql_not_found`, `model_*`,
 *   `db_*`, `cancelled` — after the steps that led to it were yielded; `internal` when the pipeline
 *   ends without an outcome
 */
export async function* askSteps(
  pipeline: AskPipeline,
  request: AskRequest,
): AsyncGenerator<Step, AskDocument> {
  const outcome = yield* pipeline.ask(inputOf(request));
  if (!outcome) throw new SqlrecallError('internal', 'The question pipeline ended without an outcome.');
  return askDocument(outcome);
}

/**
 * Runs one message to its end.
 * @returns its {@link AskDocument}
 * @throws as {@link askSteps}
 */
export async function ask(pipeline: AskPipeline, request: AskRequest): Promise<AskDocument> {
  const steps = askSteps(pipeline, request);
  for (;;) {
    const next = await steps.next();
    if (next.done) return next.value;
  }
}

/**
 * What a failed ask had done before its error, as a partial {@link AskDocument}: the SQL tried
 * (from the steps, else from the error), the rows if they came, the message kind and the path.
 * Feed it every step with {@link AskProgress.see}; every front end returns {@link AskProgress.failed}
 * on an error, so a script sees the attempts that led to it.
 */
export class AskProgress {
  private readonly outcome: AskOutcome;

  /** @param question the message as the user wrote it (trimmed, as every front end's input is) */
  constructor(question: string) {
    this.outcome = {
      question: question.trim(),
      sql: null,
      result: null,
      answer: null,
      attempts: [],
      appliedMemories: [],
      recalledMemories: [],
    };
  }

  /** What runs after the last step seen (see {@link stage}). */
  private running: 'model' | 'statement' | 'answer' = 'model';

  /**
   * What was running when the message stopped: `model` (writing or repairing SQL; nothing ran),
   * `statement` (a statement given, its rows not yet back), `answer` (rows back, answer writing).
   */
  stage(): 'model' | 'statement' | 'answer' {
    return this.running;
  }

  /** Records what one step says. */
  see(step: Step): void {
    const o = this.outcome;
    // A repair asks the model again; a statement runs after `sql` until its rows come.
    if (step.type === 'sql') this.running = 'statement';
    else if (step.type === 'retried') this.running = 'model';
    else if (step.type === 'rows') this.running = 'answer';
    if (step.type === 'sql') o.sql = step.sql;
    else if (step.type === 'rows') o.result = step.result;
    else if (step.type === 'answer' || step.type === 'reply') o.answer = step.text;
    else if (step.type === 'classified') o.kind = step.kind;
    else if (step.type === 'fallback') {
      o.path = step.path;
      if (step.exampleId !== undefined) o.exampleId = step.exampleId;
    }
  }

  /**
   * The document of a failed ask at the moment of `error`: what the steps said, the error's
   * `attempts` and `sql` (the statement refused or failed) filling what they did not, and the
   * error itself as {@link ErrorDocument}.
   */
  failed(error: unknown): AskFailureDocument {
    const err = toSqlrecallError(error);
    const details = err.details as { attempts?: unknown; sql?: unknown };
    const doc = askDocument(this.outcome);
    if (Array.isArray(details.attempts)) doc.attempts = details.attempts as Attempt[];
    if (doc.sql === null && typeof details.sql === 'string') doc.sql = details.sql;
    return { ...doc, error: errorDocument(err) };
  }
}

/**
 * The document of a failed ask, the same on every front end (`ask --json`, `POST /api/ask` as
 * JSON, the MCP `ask` tool): the partial {@link AskDocument} (the SQL tried, the attempts and why
 * each failed, the rows if they came) with the error.
 */
export type AskFailureDocument = AskDocument & { error: ErrorDocument };

/** How {@link askToEnd} ended: the document, or the failure document and its error. */
export type AskEnd =
  | { ok: true; doc: AskDocument }
  | { ok: false; doc: AskFailureDocument; error: SqlrecallError };

/**
 * Runs one message to its end and never throws: an empty or too long question is refused before
 * the pipeline is opened, and any failure becomes its {@link AskFailureDocument}.
 * @param pipeline the pipeline, or how to open it (called only for a question fit to ask)
 */
export async function askToEnd(
  pipeline: AskPipeline | (() => Promise<AskPipeline>),
  request: AskRequest,
): Promise<AskEnd> {
  const progress = new AskProgress(request.question);
  try {
    checkQuestion(request.question);
    const opened = typeof pipeline === 'function' ? await pipeline() : pipeline;
    const steps = askSteps(opened, request);
    for (;;) {
      const next = await steps.next();
      if (next.done) return { ok: true, doc: next.value };
      progress.see(next.value);
    }
  } catch (error) {
    const err = toSqlrecallError(error);
    return { ok: false, doc: progress.failed(err), error: err };
  }
}
