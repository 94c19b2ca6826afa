/**
 * `sqlrecall chat`: a REPL on the same pipeline as `ask`. `exit`, `quit`, `/bye` or Ctrl-D leave;
 * Ctrl-C cancels the question being answered (and leaves when pressed at the prompt).
 */
import { randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { lastConversationId } from '../../app/conversations.js';
import { listMemories } from '../../app/memory.js';
import { toSqlrecallError } from '../../core/errors.js';
import { userTimeZone } from '../../memory/expiry.js';
import { visibleSchema } from '../../policy/visibility.js';
import type { MemoryRuntime } from '../../runtime/memory-runtime.js';
import { pc } from '../colors.js';
import type { CliIO } from '../io.js';
import { printError } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { withRuntime } from '../with-runtime.js';
import { answerQuestion, warnTo } from './ask.js';
import { memoryLine } from './memory.js';

/** Words that end the REPL. */
export const EXIT_WORDS = new Set(['exit', 'quit', '/bye', '/exit', '/quit', '\\q']);

/** The REPL prompt, written to stdout. */
export const CHAT_PROMPT = 'sqlrecall> ';

/** REPL commands besides questions (shown by /help). */
export const CHAT_HELP = [
  '/memory                 what I remember about you',
  '/forget <id or words>   forget one memory (e.g. /forget india filter)',
  '/without <id> <question> answer once without that memory',
  '/help                   this list; exit or /bye leaves',
].join('\n');

/**
 * Runs `chat` (optionally with a banner line, as `demo` does); `--resume` continues the last
 * conversation; `--show-thinking` shows a thinking model's reasoning dimmed on stderr.
 */
export async function runChat(
  io: CliIO,
  opts: GlobalOptions & { resume?: boolean; showThinking?: boolean },
  banner?: string,
): Promise<number> {
  return withRuntime(
    io,
    opts,
    async (runtime, config) => {
      const db = await runtime.database();
      const assistant = await runtime.assistant();
      const policy = await runtime.policyFor(
        config.user,
        config.team !== undefined ? { team: config.team } : {},
      );
      // The banner counts the tables this user may see.
      const schema = visibleSchema((await assistant.schema()).schema, policy);
      const memory = config.memoryEnabled ? await runtime.memory().catch(() => undefined) : undefined;
      const scope = { user: config.user };
      let conversationId: string = randomUUID();
      let resumed = false;
      if (opts.resume && memory) {
        const last = await lastConversationId(memory, scope);
        if (last) {
          conversationId = last;
          resumed = true;
        }
      }
      io.stderr.write(
        `${banner ?? ''}${pc.bold('sqlrecall chat')} on ${db.displayName} (${schema.tables.length} tables) with ${config.model}.\n` +
          `${pc.dim(`${resumed ? 'Continuing' : 'Conversation'} ${conversationId.slice(0, 8)} as ${config.user}${memory ? '' : ' (memory off)'}. Ask a question in plain language; /help for commands. Type exit or /bye to leave.`)}\n`,
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
        const command = /^\/(memory|memories|forget|without|help)\b\s*(.*)$/i.exec(text);
        if (command && command[1]!.toLowerCase() !== 'without') {
          await chatCommand(io, memory, scope, command[1]!.toLowerCase(), command[2]!.trim());
        } else if (text) {
          let question = text;
          const without: string[] = [];
          if (command) {
            const [id = '', ...rest] = command[2]!.trim().split(/\s+/);
            without.push(id);
            question = rest.join(' ');
          }
          current = new AbortController();
          try {
            if (question) {
              await answerQuestion(io, assistant, question, {
                json: false,
                surface: 'chat',
                user: config.user,
                team: config.team,
                policy,
                maxRows: config.maxRows,
                signal: current.signal,
                conversationId,
                without,
                onStatement: runtime.auditListener({ user: config.user, frontEnd: 'cli', question }),
              });
            } else {
              io.stderr.write('usage: /without <id> <question>\n');
            }
          } finally {
            current = undefined;
          }
        }
        rl.prompt();
      }
      rl.close();
      io.stderr.write('bye\n');
      return 0;
    },
    {
      warn: warnTo(io),
      // A thinking model's reasoning, dimmed on stderr: never part of the answer or the SQL.
      ...(opts.showThinking ? { thinking: (text: string) => io.stderr.write(pc.dim(text)) } : {}),
      onError: (error) => {
        const err = toSqlrecallError(error);
        printError(io, err);
        return err.exitCode;
      },
    },
  );
}

/** `/memory`, `/forget …` and `/help` in the REPL. */
async function chatCommand(
  io: CliIO,
  memory: MemoryRuntime | undefined,
  scope: { user: string },
  name: string,
  argument: string,
): Promise<void> {
  if (name === 'help') {
    io.stdout.write(`${CHAT_HELP}\n`);
    return;
  }
  if (!memory) {
    io.stdout.write('Memory is off for this session.\n');
    return;
  }
  try {
    if (name === 'memory' || name === 'memories') {
      const { memories } = await listMemories(memory, scope, { zone: userTimeZone(io.env) });
      if (memories.length === 0) io.stdout.write('I do not remember anything about you yet.\n');
      for (const m of memories) io.stdout.write(`${memoryLine(m, undefined, userTimeZone(io.env))}\n`);
      return;
    }
    if (!argument) {
      io.stdout.write('usage: /forget <id or words>\n');
      return;
    }
    const result = await memory.service.forget(scope, argument);
    if (result.deleted) {
      io.stdout.write(`Forgot ${memoryLine(result.deleted)}\n`);
    } else if (result.candidates.length === 0) {
      io.stdout.write(`I have no memory matching "${argument}".\n`);
    } else {
      io.stdout.write('Which one? /forget <id>:\n');
      for (const m of result.candidates) io.stdout.write(`${memoryLine(m)}\n`);
    }
  } catch (error) {
    printError(io, toSqlrecallError(error));
  }
}
