/**
 * `sqlrecall chat`: a REPL on the same pipeline as `ask`. `exit`, `quit`, `/bye` or Ctrl-D leave;
 * Ctrl-C cancels the question being answered (and leaves when pressed at the prompt).
 */
import { createInterface } from 'node:readline';
import pc from 'picocolors';
import { toSqlrecallError } from '../../core/errors.js';
import { Runtime } from '../../runtime/runtime.js';
import type { CliIO } from '../io.js';
import { printError } from '../output.js';
import { configFrom, type GlobalOptions } from '../program.js';
import { answerQuestion } from './ask.js';

/** Words that end the REPL. */
export const EXIT_WORDS = new Set(['exit', 'quit', '/bye', '/exit', '/quit', '\\q']);

/** The REPL prompt, written to stdout. */
export const CHAT_PROMPT = 'sqlrecall> ';

/** Runs `chat` (optionally with a banner line, as `demo` does). */
export async function runChat(io: CliIO, opts: GlobalOptions, banner?: string): Promise<number> {
  let runtime: Runtime | undefined;
  try {
    const config = configFrom(io, opts);
    runtime = new Runtime(config);
    const db = await runtime.database();
    const assistant = await runtime.assistant();
    const { schema } = await assistant.schema();
    io.stderr.write(
      `${banner ?? ''}${pc.bold('sqlrecall chat')} on ${db.displayName} (${schema.tables.length} tables) with ${config.model}.\n` +
        `${pc.dim('Ask a question in plain language. Type exit or /bye to leave.')}\n`,
    );
    const rl = createInterface({
      input: io.stdin,
      output: io.stdout,
      terminal: io.interactive,
      prompt: CHAT_PROMPT,
    });
    let current: AbortController | undefined;
    rl.on('SIGINT', () => {
      if (current) {
        current.abort();
        io.stderr.write(`\n${pc.yellow('cancelled')}\n`);
      } else {
        rl.close();
      }
    });
    rl.prompt();
    for await (const line of rl) {
      const text = line.trim();
      if (EXIT_WORDS.has(text.toLowerCase())) break;
      if (text) {
        current = new AbortController();
        try {
          await answerQuestion(io, assistant, text, {
            json: false,
            user: config.user,
            maxRows: config.maxRows,
            signal: current.signal,
          });
        } finally {
          current = undefined;
        }
      }
      rl.prompt();
    }
    rl.close();
    io.stderr.write('bye\n');
    return 0;
  } catch (error) {
    const err = toSqlrecallError(error);
    printError(io, err);
    return err.exitCode;
  } finally {
    await runtime?.close();
  }
}
