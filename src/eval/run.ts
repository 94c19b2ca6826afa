/**
 * The benchmark loop: every question goes through the real pipeline (`Assistant.ask`: schema
 * context, memories, generation, guard, repair, read-only execution) and is scored by execution
 * accuracy ({@link scoreAgainstGold}) against gold results computed through the same executor.
 * Databases are visited one at a time (an embedded data directory can be open once per process);
 * each prediction is handed to `onRecord` as soon as it is scored, so an interrupted run keeps it.
 */
import type { AskInput } from '../agent/assistant.js';
import { isSqlrecallError, SqlrecallError, toSqlrecallError } from '../core/errors.js';
import type { QueryResult } from '../core/ports.js';
import type { AskOutcome, Attempt, Step } from '../core/steps.js';
import {
  type EvalQuestion,
  type MemoryMode,
  questionMessage,
  splitSentences,
  teachingSentences,
} from './dataset.js';
import { type MeterReading, meterDelta } from './meter.js';
import { type GoldRunner, scoreAgainstGold } from './score.js';

/** What the loop needs from the pipeline: `Assistant.ask`. */
export interface AskPipeline {
  ask(input: AskInput): AsyncGenerator<Step, AskOutcome>;
}

/** One memory the simulated user's teaching produced. */
export interface TaughtMemory {
  id: string;
  text: string;
  /** The sentence that produced it. */
  sentence: string;
}

/** Result of teaching one database's instructions. */
export interface TeachReport {
  /** Sentences said to the assistant. */
  sentences: number;
  /** Memories the teaching created (ADD, UPDATE, SUPERSEDE; minus any deleted again). */
  memories: TaughtMemory[];
  /** Sentences that left no new memory, and why (a near-duplicate, nothing extracted, …). */
  unstored: { sentence: string; why: string }[];
}

/** One database opened for the benchmark (closed by the loop when its questions are done). */
export interface EvalDatabase {
  /** The pipeline for this database. */
  pipeline: AskPipeline;
  /** Runs gold SQL through the same read-only executor as predictions. */
  runGold: GoldRunner;
  /**
   * `taught` mode: says each sentence to the assistant as `user`, in a session of its own, through
   * the normal message path. Absent when the memory feature is not available.
   */
  teach?: (user: string, sentences: string[]) => Promise<TeachReport>;
  close(): Promise<void>;
}

/** One scored prediction: a line of the results JSONL. */
export interface EvalRecord {
  mode: MemoryMode;
  /** Question id (see `questionId`). */
  id: string;
  index: number;
  db: string;
  category: string;
  question: string;
  /** The message put to the pipeline (question, plus instructions in `prompt` mode). */
  message: string;
  /** The SQL whose result was scored (the last attempt), or null when there was none. */
  sql: string | null;
  attempts: Attempt[];
  /** The pipeline's error, when it gave no result. */
  error?: { code: string; message: string };
  /** The SQL guard refused the model's statement. */
  refused: boolean;
  /** Repairs after database errors. */
  repairs: number;
  correct: boolean;
  /** Why it was judged wrong. */
  why?: string;
  /** The gold alternative that matched. */
  matchedGold?: string;
  /** Gold alternatives that failed to run. */
  goldErrors?: string[];
  rowCount: number | null;
  modelCalls: number;
  promptTokens: number;
  completionTokens: number;
  /** Time inside the model, ms. */
  modelMs: number;
  /** Wall time of the question through the pipeline, ms (scoring excluded). */
  latencyMs: number;
  /** Memories the pipeline applied. */
  appliedMemories: number;
  /** `taught` mode, questions with instructions: a memory taught from them was recalled (reached the prompt). */
  relevantMemoryRecalled?: boolean;
  /**
   * `--model none` runs: which path answered (`example`, `rules`), or `none` when
   * neither a saved example nor a rule answered with certainty (the question needed the model).
   */
  path?: 'model' | 'example' | 'rules' | 'none';
}

/** Teaching summary of one database (`taught` mode). */
export interface TeachSummary {
  db: string;
  user: string;
  sentences: number;
  memories: number;
  /** Sentences that left no new memory, and why. */
  unstored: { sentence: string; why: string }[];
}

/** Options of {@link runEval}. */
export interface EvalRunOptions {
  questions: EvalQuestion[];
  modes: MemoryMode[];
  /** Opens one database (its pipeline and gold runner). */
  openDatabase: (name: string) => Promise<EvalDatabase>;
  /** The chat model's cumulative counts (see `meterChatModel`). */
  meter: () => MeterReading;
  /**
   * User id for a mode and database; default `eval-<db>-<mode>`. In `none` and `prompt` mode each
   * question gets `<that>-<question id>`, a user of its own, so nothing one question's message
   * leaves in memory (a pasted instruction is remembered like any other) reaches another.
   */
  userFor?: (mode: MemoryMode, db: string) => string;
  /** Keys `mode/id` already done (`--resume`): skipped. */
  skip?: ReadonlySet<string>;
  onRecord?: (record: EvalRecord) => void;
  onTaught?: (summary: TeachSummary) => void;
  onProgress?: (done: number, total: number) => void;
  /** Stops the run: the question in flight is dropped (not recorded), the rest returned. */
  signal?: AbortSignal;
  /**
   * `eval --model none`: every question is asked with `noModel` — answered only from
   * saved examples and rules; "needs the model" is recorded as unanswered (path `none`), not fatal.
   */
  noModel?: boolean;
}

/** What {@link runEval} returns. */
export interface EvalRunResult {
  records: EvalRecord[];
  taught: TeachSummary[];
  /** True when the signal stopped the run early. */
  interrupted: boolean;
}

/** Key of a record for `--resume`. */
export const recordKey = (mode: MemoryMode, id: string): string => `${mode}/${id}`;

/** Errors that make every further question pointless: the run stops and reports them. */
const FATAL_CODES = new Set(['model_unreachable', 'model_missing', 'memory_embedding_mismatch', 'config']);
/** Codes of "this question needs the model" under `noModel` (see `agent/fallback.ts`). */
const NEEDS_MODEL_CODES = new Set(['model_unreachable', 'model_missing', 'model_timeout']);

/**
 * Runs the benchmark. Order: for each mode, for each database (first-seen order), teach (taught
 * mode) then ask that database's questions.
 * @throws SqlrecallError `model_unreachable`, `model_missing` and other errors no question can
 *   survive (records scored before it were already passed to `onRecord`); `usage` when `taught`
 *   is asked for and a database cannot teach.
 */
export async function runEval(options: EvalRunOptions): Promise<EvalRunResult> {
  const dbNames = [...new Set(options.questions.map((q) => q.dbName))];
  const skip = options.skip ?? new Set<string>();
  const userFor = options.userFor ?? ((mode, db) => `eval-${db}-${mode}`);
  const todo = options.modes.flatMap((mode) =>
    options.questions.filter((q) => !skip.has(recordKey(mode, q.id))).map((q) => ({ mode, q })),
  );
  const records: EvalRecord[] = [];
  const taught: TeachSummary[] = [];
  let done = 0;
  options.onProgress?.(0, todo.length);
  for (const mode of options.modes) {
    for (const dbName of dbNames) {
      const work = todo.filter((t) => t.mode === mode && t.q.dbName === dbName).map((t) => t.q);
      if (work.length === 0) continue;
      if (options.signal?.aborted) return { records, taught, interrupted: true };
      const db = await options.openDatabase(dbName);
      try {
        const user = userFor(mode, dbName);
        let memories: TaughtMemory[] = [];
        if (mode === 'taught') {
          if (!db.teach) {
            throw new SqlrecallError(
              'usage',
              'The taught memory mode requires the memory feature, which this build does not have; use --memory-mode none or prompt.',
            );
          }
          const sentences = teachingSentences(options.questions, dbName);
          const report = await db.teach(user, sentences);
          memories = report.memories;
          const summary: TeachSummary = {
            db: dbName,
            user,
            sentences: report.sentences,
            memories: memories.length,
            unstored: report.unstored,
          };
          taught.push(summary);
          options.onTaught?.(summary);
        }
        for (const q of work) {
          if (options.signal?.aborted) return { records, taught, interrupted: true };
          const asker = mode === 'taught' ? user : `${user}-${q.id}`;
          const record = await askOne(q, mode, asker, db, options, memories);
          // A question cut short by Ctrl-C is not scored: --resume asks it again.
          if (!record) return { records, taught, interrupted: true };
          records.push(record);
          options.onRecord?.(record);
          done += 1;
          options.onProgress?.(done, todo.length);
        }
      } finally {
        await db.close();
      }
    }
  }
  return { records, taught, interrupted: false };
}

async function askOne(
  q: EvalQuestion,
  mode: MemoryMode,
  user: string,
  db: EvalDatabase,
  options: EvalRunOptions,
  taughtMemories: TaughtMemory[],
): Promise<EvalRecord | undefined> {
  const message = questionMessage(q, mode);
  const before = options.meter();
  const started = performance.now();
  let outcome: AskOutcome | undefined;
  let failure: ReturnType<typeof toSqlrecallError> | undefined;
  let refused = false;
  let repairs = 0;
  let lastResult: QueryResult | undefined;
  let fallbackPath: 'example' | 'rules' | undefined;
  let recalled: { id: string; text: string }[] = [];
  try {
    const input = { user, message, skipAnswer: true, signal: options.signal };
    for await (const step of db.pipeline.ask(options.noModel ? { ...input, noModel: true } : input)) {
      if (step.type === 'refused') refused = true;
      else if (step.type === 'retried') repairs += 1;
      else if (step.type === 'rows') lastResult = step.result;
      else if (step.type === 'fallback') fallbackPath = step.path;
      else if (step.type === 'recalled') recalled = step.memories;
      else if (step.type === 'done') outcome = step.outcome;
    }
  } catch (error) {
    if (options.signal?.aborted) return undefined;
    failure = toSqlrecallError(error);
    // Without the model, "needs the model" (exit 5) is this question's answer: not answered.
    const unanswered = options.noModel && NEEDS_MODEL_CODES.has(failure.code);
    if (FATAL_CODES.has(failure.code) && !unanswered) throw failure;
    if (isSqlrecallError(error, 'guard_refused')) refused = true;
  }
  const latencyMs = performance.now() - started;
  const cost = meterDelta(before, options.meter());
  const attempts =
    outcome?.attempts ??
    (Array.isArray(failure?.details.attempts) ? (failure.details.attempts as Attempt[]) : []);
  const sql = outcome?.sql ?? attempts.at(-1)?.sql ?? null;
  const record: EvalRecord = {
    mode,
    id: q.id,
    index: q.index,
    db: q.dbName,
    category: q.category,
    question: q.question,
    message,
    sql,
    attempts,
    refused,
    repairs,
    correct: false,
    rowCount: null,
    modelCalls: cost.calls,
    promptTokens: cost.promptTokens,
    completionTokens: cost.completionTokens,
    modelMs: round(cost.modelMs),
    latencyMs: round(latencyMs),
    appliedMemories: outcome?.appliedMemories.length ?? 0,
  };
  if (options.noModel) {
    // A chosen example or rule whose SQL then failed is answered (and wrong), never hidden.
    record.path = fallbackPath ?? outcome?.path ?? 'none';
  }
  if (mode === 'taught' && q.instructions.trim() !== '') {
    // Recalled, not applied: a definition without SQL reaches the prompt but is never "applied"
    // (applied means its predicate is verified in the SQL).
    record.relevantMemoryRecalled = relevantRecalled(q, recalled, taughtMemories);
  }
  const result = outcome?.result ?? lastResult;
  if (failure || !result) {
    if (failure) record.error = { code: failure.code, message: failure.message };
    if (refused) record.why = `refused by the SQL guard: ${failure?.message ?? ''}`.trim();
    else if (outcome?.unanswerable !== undefined)
      record.why = `the model said it cannot be answered from this database${outcome.unanswerable ? `: ${outcome.unanswerable}` : ''}`;
    else if (outcome && outcome.sql === null)
      record.why = `no SQL: the message was taken as ${outcome.kind ?? 'something else'}`;
    else record.why = `no result: ${failure?.message ?? 'the pipeline returned nothing'}`;
    return record;
  }
  record.rowCount = result.rowCount;
  const score = await scoreAgainstGold(q.query, result, db.runGold);
  record.correct = score.correct;
  if (score.why) record.why = score.why;
  if (score.matchedGold) record.matchedGold = score.matchedGold;
  if (score.goldErrors.length > 0) record.goldErrors = score.goldErrors;
  return record;
}

/** True when an applied memory came from one of `q`'s own instruction sentences. */
function relevantRecalled(
  q: EvalQuestion,
  recalled: { id: string; text: string }[],
  taught: TaughtMemory[],
): boolean {
  const own = new Set(splitSentences(q.instructions).map(normalize));
  if (own.size === 0 || recalled.length === 0) return false;
  const fromOwn = new Set(taught.filter((m) => own.has(normalize(m.sentence))).map((m) => m.id));
  return recalled.some((m) => fromOwn.has(m.id) || own.has(normalize(m.text)));
}

const normalize = (text: string): string => text.toLowerCase().replace(/\s+/g, ' ').trim();
const round = (ms: number): number => Math.round(ms * 10) / 10;
