/**
 * `sqlrecall ask "<question>"`: one question through the whole pipeline.
 */
import pc from 'picocolors';
import type { Assistant } from '../../agent/assistant.js';
import { toSqlrecallError } from '../../core/errors.js';
import type { QueryResult } from '../../core/ports.js';
import type { Attempt } from '../../core/steps.js';
import { Runtime } from '../../runtime/runtime.js';
import type { CliIO } from '../io.js';
import { errorJson, printError, printJson, printResult, printSql } from '../output.js';
import { configFrom, type GlobalOptions } from '../program.js';
import { startSpinner } from '../progress.js';

/** The `ask --json` document (DESIGN.md "CLI contract"). */
export interface AskJson {
  question: string;
  sql: string | null;
  columns: string[];
  rows: QueryResult['rows'];
  rowCount: number;
  truncated: boolean;
  answer: string | null;
  appliedMemories: { id: string; kind: string; text: string }[];
  attempts: Attempt[];
  error?: { code: string; message: string };
}

/** Options of {@link answerQuestion}. */
export interface AnswerOptions {
  json: boolean;
  user: string;
  maxRows: number;
  skipAnswer?: boolean;
  signal?: AbortSignal;
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
    rows: [],
    rowCount: 0,
    truncated: false,
    answer: null,
    appliedMemories: [],
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
          doc.truncated = step.result.truncated;
          if (human) printResult(io, step.result, options.maxRows);
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
          break;
        case 'done':
          doc.attempts = step.outcome.attempts;
          doc.appliedMemories = step.outcome.appliedMemories;
          if (human && doc.appliedMemories.length > 0) {
            io.stdout.write(`${pc.dim(`Applied: ${doc.appliedMemories.map((m) => m.text).join('; ')}`)}\n`);
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
    if (!doc.sql && typeof err.details.sql === 'string') doc.sql = err.details.sql;
    printError(io, err);
    if (options.json) printJson(io, { ...doc, error: errorJson(err) });
    return err.exitCode;
  }
}

/** Runs `ask`. */
export async function runAsk(
  io: CliIO,
  opts: GlobalOptions & { answer?: boolean },
  question: string,
): Promise<number> {
  const json = Boolean(opts.json);
  let runtime: Runtime | undefined;
  try {
    const config = configFrom(io, opts);
    runtime = new Runtime(config);
    const assistant = await runtime.assistant();
    return await answerQuestion(io, assistant, question, {
      json,
      user: config.user,
      maxRows: config.maxRows,
      skipAnswer: opts.answer === false,
    });
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    if (json) printJson(io, { question, error: errorJson(err) });
    return err.exitCode;
  } finally {
    await runtime?.close();
  }
}
