/**
 * `sqlrecall ask "<question>"`: one question through the whole pipeline.
 */

import { type AskDocument, type AskPipeline, AskProgress, askSteps } from '../../app/ask.js';
import { lastConversationId } from '../../app/conversations.js';
import { NO_STATEMENT, policyOrRecordedRefusal } from '../../audit/policy-refusal.js';
import type { StatementListener } from '../../core/audit.js';
import { SqlrecallError, toSqlrecallError } from '../../core/errors.js';
import { checkQuestion } from '../../core/limits.js';
import { userTimeZone } from '../../memory/expiry.js';
import type { EffectivePolicy } from '../../policy/types.js';
import { pc } from '../colors.js';
import { EXIT_INTERRUPTED, onInterrupt } from '../interrupt.js';
import type { CliIO } from '../io.js';
import { printError, printJson, printResult, printSql } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { startSpinner } from '../progress.js';
import { withRuntime } from '../with-runtime.js';

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
  /** The user's data policy (what they may see, privacy mode); default nothing restricted. */
  policy?: EffectivePolicy;
  /** Told of every statement run or refused for the question (the audit trail). */
  onStatement?: StatementListener;
}

/** The line printed after an answer written in privacy mode (the web UI says the same). */
export const PRIVACY_MODE_NOTE = 'Privacy mode: answers are written without showing the data to the model.';

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
  assistant: AskPipeline,
  question: string,
  options: AnswerOptions,
): Promise<number> {
  const human = !options.json;
  const spinner = startSpinner(io, 'Writing SQL…');
  const progress = new AskProgress(question);
  let answering = false;
  // What the human output has shown so far (the steps arrive in pipeline order).
  let sql: string | null = null;
  let answer: string | null = null;
  let kind: string | undefined;
  try {
    const steps = askSteps(assistant, {
      user: options.user,
      question,
      signal: options.signal,
      skipAnswer: options.skipAnswer,
      team: options.team,
      conversationId: options.conversationId,
      without: options.without,
      confirmDeletes: options.confirmDeletes,
      timeZone: userTimeZone(io.env),
      noModel: options.noModel,
      ...(options.policy ? { policy: options.policy } : {}),
      ...(options.onStatement ? { onStatement: options.onStatement } : {}),
    });
    let doc: AskDocument;
    for (;;) {
      const next = await steps.next();
      if (next.done) {
        doc = next.value;
        break;
      }
      const step = next.value;
      progress.see(step);
      switch (step.type) {
        case 'sql':
          sql = step.sql;
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
          if (human)
            printResult(io, step.result, options.maxRows, options.maxResultBytes, {
              surface: options.surface ?? 'command',
              ...(sql !== null ? { sql } : {}),
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
          answer = step.text;
          if (human) io.stdout.write('\n');
          if (kind === 'both') spinner.start('Remembering…');
          break;
        case 'classified':
          kind = step.kind;
          break;
        case 'fallback':
          spinner.stop();
          if (human)
            io.stderr.write(
              `${pc.dim(step.path === 'example' ? `reused example [${step.exampleId!.slice(0, 8)}] (${step.why})` : `rule-based answer (${step.why})`)}\n`,
            );
          break;
        case 'reply':
          spinner.stop();
          answer = step.text;
          if (human) io.stdout.write(`${step.text}\n`);
          break;
        case 'remembered':
          spinner.stop();
          if (human && (sql !== null || answer !== null)) {
            // After an answer: say what was learned from the instruction part of the message.
            for (const c of step.changes)
              io.stdout.write(`${pc.dim(`Remembered [${c.id?.slice(0, 8) ?? '-'}]: ${c.text}`)}\n`);
            for (const p of step.problems) io.stderr.write(`${pc.yellow('note:')} ${p}\n`);
          }
          break;
        case 'done': {
          const { appliedMemories, recalledMemories } = step.outcome;
          if (human && appliedMemories.length > 0)
            io.stdout.write(`${pc.dim(appliedLine(appliedMemories))}\n`);
          if (human && recalledMemories.length > 0)
            io.stdout.write(`${pc.dim(recalledLine(recalledMemories))}\n`);
          if (human && step.outcome.privacyMode) io.stderr.write(`${pc.dim(PRIVACY_MODE_NOTE)}\n`);
          break;
        }
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
    // Ctrl-C (or a closed caller): say what was stopped, in place of the stopped call's own error.
    const err = options.signal?.aborted ? cancelledError(error, progress.stage()) : toSqlrecallError(error);
    printError(io, err);
    if (options.json) printJson(io, progress.failed(err));
    return err.exitCode;
  }
}

/**
 * The error of a question stopped with Ctrl-C, saying what was stopped: the model request (nothing
 * was run), the running statement (cancelled on the database server), or the written answer (the
 * rows shown are whole). Code `cancelled`: exit 130, as the README's table says.
 */
export function cancelledError(cause: unknown, stage: 'model' | 'statement' | 'answer'): SqlrecallError {
  const message =
    stage === 'statement'
      ? 'Cancelled; the running statement was stopped on the database server.'
      : stage === 'answer'
        ? 'Cancelled while the answer was being written; the rows shown are complete.'
        : 'Cancelled; the model request was stopped and no statement was run.';
  // The statements tried before the stop stay in the --json document.
  const attempts = toSqlrecallError(cause).details.attempts;
  return new SqlrecallError('cancelled', message, { cause, details: attempts ? { attempts } : {} });
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
    if (json) printJson(io, new AskProgress(question).failed(err));
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
          conversationId = await lastConversationId(memory, { user: config.user });
        }
        const onStatement = runtime.auditListener({ user: config.user, frontEnd: 'cli', question });
        // A policy that cannot be decided (an invalid file) refuses the question: recorded too.
        const policy = await policyOrRecordedRefusal(
          () => runtime.policyFor(config.user, config.team !== undefined ? { team: config.team } : {}),
          onStatement,
          { sql: NO_STATEMENT, origin: 'model' },
        );
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
          policy,
          onStatement,
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
          if (json) printJson(io, new AskProgress(question).failed(err));
          return interrupt.interrupted ? EXIT_INTERRUPTED : err.exitCode;
        },
      },
    );
  } finally {
    interrupt.dispose();
  }
}
