/**
 * `sqlrecall ask "<question>"`: one question through the whole pipeline.
 */

import type { Assistant } from '../../agent/assistant.js';
import { toSqlrecallError } from '../../core/errors.js';
import { checkQuestion } from '../../core/limits.js';
import type { MemoryKind } from '../../core/memory.js';
import type { QueryResult } from '../../core/ports.js';
import type { Attempt, MemoryChange } from '../../core/steps.js';
import { userTimeZone } from '../../memory/expiry.js';
import { pc } from '../colors.js';
import { EXIT_INTERRUPTED, onInterrupt } from '../interrupt.js';
import type { CliIO } from '../io.js';
import { errorJson, printError, printJson, printResult, printSql } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { startSpinner } from '../progress.js';
import { withRuntime } from '../with-runtime.js';

/** The `ask --json` document. */
export interface AskJson {
  question: string;
  sql: string | null;
  columns: string[];
  /** Type name of each column as the server reports it (`int8`, `jsonb`, …). */
  columnTypes: string[];
  rows: QueryResult['rows'];
  rowCount: number;
  truncated: boolean;
  /** Set when `truncated`: the row cap (`max_rows`) or the byte budget (`max_bytes`). */
  truncatedReason?: 'max_rows' | 'max_bytes';
  answer: string | null;
  /** Memories whose predicate was verified in the SQL. */
  appliedMemories: { id: string; kind: MemoryKind; text: string }[];
  /** Memories that reached the prompt but could not be verified in the SQL (see `AskOutcome`). */
  recalledMemories: { id: string; kind: MemoryKind; text: string }[];
  /** Standing preferences set aside because the question asked for what they filter out. */
  setAsideMemories?: { id: string; kind: MemoryKind; text: string; reason: string }[];
  attempts: Attempt[];
  /** Set when the database has no data for the question (see `AskOutcome.unanswerable`). */
  unanswerable?: string;
  /** question | instruction | both | command | neither (with memory on). */
  kind?: string;
  /** Changes this message made to the user's memories. */
  remembered?: MemoryChange[];
  /** Facts that could not be read or stored (never dropped silently). */
  memoryProblems?: string[];
  /** The conversation of this turn (continue it with `--conversation ID`). */
  conversationId?: string;
  /** Set when the answer was made without the model: `example` or `rules`. */
  path?: 'model' | 'example' | 'rules';
  /** The saved example reused (path `example`). */
  exampleId?: string;
  error?: { code: string; message: string };
}

/** Options of {@link answerQuestion}. */
export interface AnswerOptions {
  json: boolean;
  user: string;
  maxRows: number;
  /** Byte budget per result, for the truncation note. */
  maxResultBytes?: number;
  skipAnswer?: boolean;
  signal?: AbortSignal;
  team?: string;
  /** Conversation to continue; default a fresh one. */
  conversationId?: string;
  /** Memory ids (or prefixes) to skip for this question. */
  without?: string[];
  /** `--yes`: a plain-language "forget …" may delete without asking. */
  confirmDeletes?: boolean;
  /** Answer only from saved examples and rules (`--no-model`). */
  noModel?: boolean;
  /** Where the result is printed (`chat` notes name chat's own ways); default a command. */
  surface?: 'command' | 'chat';
}

/** `text [3f2a9c1b]` items for the "Applied:" line: the short id is what `--without` and `memory show` take. */
export function appliedLine(memories: { id: string; text: string }[]): string {
  return `Applied: ${memories.map((m) => `${m.text} [${m.id.slice(0, 8)}]`).join('; ')}`;
}

/**
 * The "Recalled:" line: memories the model was shown but whose effect could not be verified in
 * the SQL (same item format as {@link appliedLine}).
 */
export function recalledLine(memories: { id: string; text: string }[]): string {
  return `Recalled: ${memories.map((m) => `${m.text} [${m.id.slice(0, 8)}]`).join('; ')}`;
}

/**
 * Asks one question and prints the outcome (human or JSON); returns the exit code.
 * Shared by `ask` and `chat`.
 */
export async function answerQuestion(
  io: CliIO,
  assistant: Assistant,
  question: string,
  options: AnswerOptions,
): Promise<number> {
  const doc: AskJson = {
    question,
    sql: null,
    columns: [],
    columnTypes: [],
    rows: [],
    rowCount: 0,
    truncated: false,
    answer: null,
    appliedMemories: [],
    recalledMemories: [],
    attempts: [],
  };
  const human = !options.json;
  const spinner = startSpinner(io, 'Writing SQL…');
  let answering = false;
  try {
    for await (const step of assistant.ask({
      user: options.user,
      message: question,
      signal: options.signal,
      skipAnswer: options.skipAnswer,
      team: options.team,
      conversationId: options.conversationId,
      without: options.without,
      confirmDeletes: options.confirmDeletes,
      timeZone: userTimeZone(io.env),
      ...(options.noModel ? { noModel: true } : {}),
    })) {
      switch (step.type) {
        case 'sql':
          doc.sql = step.sql;
          spinner.stop();
          if (human) printSql(io, step.sql);
          spinner.start('Running the query…');
          break;
        case 'retried':
          spinner.stop();
          io.stderr.write(`${pc.yellow('repairing:')} ${step.error}\n`);
          spinner.start('Asking the model to repair the query…');
          break;
        case 'rows':
          spinner.stop();
          doc.columns = step.result.columns.map((c) => c.name);
          doc.rows = step.result.rows;
          doc.rowCount = step.result.rowCount;
          doc.columnTypes = step.result.columns.map((c) => c.type);
          doc.truncated = step.result.truncated;
          if (step.result.truncatedReason !== undefined) doc.truncatedReason = step.result.truncatedReason;
          if (human)
            printResult(io, step.result, options.maxRows, options.maxResultBytes, {
              surface: options.surface ?? 'command',
              ...(doc.sql !== null ? { sql: doc.sql } : {}),
            });
          if (!options.skipAnswer) spinner.start('Writing the answer…');
          break;
        case 'answer_token':
          if (!answering) {
            spinner.stop();
            answering = true;
          }
          if (human) io.stdout.write(step.text);
          break;
        case 'answer':
          doc.answer = step.text;
          if (human) io.stdout.write('\n');
          if (doc.kind === 'both') spinner.start('Remembering…');
          break;
        case 'classified':
          doc.kind = step.kind;
          break;
        case 'fallback':
          spinner.stop();
          doc.path = step.path;
          if (step.exampleId) doc.exampleId = step.exampleId;
          if (human)
            io.stderr.write(
              `${pc.dim(step.path === 'example' ? `reused example [${step.exampleId!.slice(0, 8)}] (${step.why})` : `rule-based answer (${step.why})`)}\n`,
            );
          break;
        case 'reply':
          spinner.stop();
          doc.answer = step.text;
          if (human) io.stdout.write(`${step.text}\n`);
          break;
        case 'remembered':
          spinner.stop();
          if (human && (doc.sql !== null || doc.answer !== null)) {
            // After an answer: say what was learned from the instruction part of the message.
            for (const c of step.changes)
              io.stdout.write(`${pc.dim(`Remembered [${c.id?.slice(0, 8) ?? '-'}]: ${c.text}`)}\n`);
            for (const p of step.problems) io.stderr.write(`${pc.yellow('note:')} ${p}\n`);
          }
          break;
        case 'done':
          doc.attempts = step.outcome.attempts;
          doc.appliedMemories = step.outcome.appliedMemories;
          doc.recalledMemories = step.outcome.recalledMemories;
          if (step.outcome.setAsideMemories !== undefined)
            doc.setAsideMemories = step.outcome.setAsideMemories;
          if (step.outcome.unanswerable !== undefined) doc.unanswerable = step.outcome.unanswerable;
          if (step.outcome.kind !== undefined) doc.kind = step.outcome.kind;
          if (step.outcome.remembered !== undefined) doc.remembered = step.outcome.remembered;
          if (step.outcome.memoryProblems !== undefined) doc.memoryProblems = step.outcome.memoryProblems;
          if (step.outcome.conversationId !== undefined) doc.conversationId = step.outcome.conversationId;
          if (human && doc.appliedMemories.length > 0) {
            io.stdout.write(`${pc.dim(appliedLine(doc.appliedMemories))}\n`);
          }
          if (human && doc.recalledMemories.length > 0) {
            io.stdout.write(`${pc.dim(recalledLine(doc.recalledMemories))}\n`);
          }
          break;
        default:
          break;
      }
    }
    spinner.stop();
    if (options.json) printJson(io, doc);
    return 0;
  } catch (error) {
    spinner.stop();
    if (answering) io.stdout.write('\n');
    const err = toSqlrecallError(error);
    const attempts = err.details.attempts;
    if (Array.isArray(attempts)) doc.attempts = attempts as Attempt[];
    if (!doc.sql && 'sql' in err.details && typeof err.details.sql === 'string') doc.sql = err.details.sql;
    printError(io, err);
    if (options.json) printJson(io, { ...doc, error: errorJson(err) });
    return err.exitCode;
  }
}

/** A `warn` hook for the Runtime that writes one "note:" line to stderr. */
export function warnTo(io: CliIO): (message: string) => void {
  return (message) => io.stderr.write(`${pc.yellow('note:')} ${message}\n`);
}

/** Runs `ask`. */
export async function runAsk(
  io: CliIO,
  opts: GlobalOptions & {
    answer?: boolean;
    conversation?: string;
    continue?: boolean;
    without?: string[];
    yes?: boolean;
    noModel?: boolean;
  },
  question: string,
): Promise<number> {
  const json = Boolean(opts.json);
  try {
    // Refused before anything opens: no database, no model server needed to say so.
    checkQuestion(question);
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    if (json) printJson(io, { question, error: errorJson(err) });
    return err.exitCode;
  }
  const interrupt = onInterrupt(io);
  try {
    return await withRuntime(
      io,
      opts,
      async (runtime, config) => {
        // One question: the model's context length is asked for while the database opens.
        const assistant = await runtime.assistant({ prefetchContextLength: true });
        let conversationId = opts.conversation;
        if (opts.continue && conversationId === undefined && config.memoryEnabled) {
          const memory = await runtime.memory();
          conversationId = (await memory.store.lastConversation({ user: config.user }))?.id;
        }
        const code = await answerQuestion(io, assistant, question, {
          json,
          user: config.user,
          team: config.team,
          maxRows: config.maxRows,
          maxResultBytes: config.maxResultBytes,
          signal: interrupt.signal,
          skipAnswer: opts.answer === false,
          conversationId,
          without: opts.without,
          confirmDeletes: opts.yes === true,
          noModel: opts.noModel,
        });
        // Ctrl-C: the statement was cancelled on the server (the pipeline ended with its error).
        return interrupt.interrupted && code !== 0 ? EXIT_INTERRUPTED : code;
      },
      {
        warn: warnTo(io),
        keepWarm: true,
        onError: (error) => {
          const err = toSqlrecallError(error);
          printError(io, err);
          if (json) printJson(io, { question, error: errorJson(err) });
          return interrupt.interrupted ? EXIT_INTERRUPTED : err.exitCode;
        },
      },
    );
  } finally {
    interrupt.dispose();
  }
}
