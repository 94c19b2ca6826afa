/**
 * The `sqlrecall` command line: builds the commander program and runs it
 * with a {@link CliIO}, returning the exit code instead of exiting, so tests can call it in-process.
 */
import { Command, CommanderError, Option } from 'commander';
import {
  ENVIRONMENT_ONLY,
  type GlobalOptions,
  SETTINGS,
  type SettingDeclaration,
} from '../config/settings.js';
import { packageVersion } from '../config/version.js';
import { EXIT_CODE_MEANINGS, SqlrecallError } from '../core/errors.js';
import type { FrontEnds } from '../runtime/http-front-end.js';
// Each command's module is imported when that command runs (process start stays short), so `ask`
// never loads the HTTP server, the eval harness or the other commands' dependencies, and
// `--version` / `--help` load neither the configuration schema (zod) nor the table printer:
// `configFrom` lives in `config-from.ts`, `reportError` in `report.ts`.
import { MCP_HELP } from './commands/mcp-help.js';
import type { CliIO } from './io.js';
import { MEMORY_SUBCOMMANDS } from './memory-subcommands.js';

/** Options shared by every command (flags win over environment and `.env`), from `config/settings.ts`. */
export type { GlobalOptions };

const EXAMPLES = `
Examples:
  $ sqlrecall demo                                   # embedded demo shop + chat: no database server
                                                     # needed, a model server (Ollama) is
  $ sqlrecall ask "top 5 customers by revenue" --db postgres://me@localhost/shop
  $ sqlrecall ask "orders per month in 2025" --json  # one JSON document on stdout
  $ sqlrecall sql "SELECT count(*) FROM orders"      # same guard and read-only execution, no model
  $ sqlrecall schema                                 # the catalog as the model sees it
  $ sqlrecall schema context "late orders" --json    # tables chosen for a question, reasons, tokens
  $ sqlrecall doctor                                 # checks Ollama, models and the database
  $ sqlrecall ask --user priya "Always show me customers from India"   # remembered for priya
  $ sqlrecall ask --user priya --without 3f2a9c1b "top customers"     # once without that memory
  $ sqlrecall ask --conversation q3 "how many of those were wholesale?" # follow-up in a conversation
  $ sqlrecall chat --resume                          # continue your last conversation
  $ sqlrecall memory list --user priya               # also ${MEMORY_SUBCOMMANDS.filter((c) => c !== 'list').join(', ')}
                                                     # (--team T)

${configurationHelp()}

${exitCodesHelp()}`;

/**
 * The "Configuration:" lines of the help: the variables that have no option above (each option's
 * own line names its variable in brackets), from the settings table.
 */
export function configurationHelp(): string {
  const rows = Object.values(SETTINGS as Record<string, SettingDeclaration>)
    .filter((s) => s.flag === undefined || s.hidden)
    .map((s) => [s.env, `${s.help}${defaultSuffix(s)}`] as const)
    .concat(ENVIRONMENT_ONLY.map((e) => [e.env, `${e.help} (default ${e.defaultText})`] as const));
  const width = Math.max(...rows.map(([env]) => env.length)) + 2;
  return [
    'Configuration: flags win over environment variables, which win over .env in the working folder.',
    'Each option above names its variable in brackets; these are not listed above:',
    ...rows.map(([env, text]) => `  ${env.padEnd(width)}${text.replaceAll('`', '')}`),
  ].join('\n');
}

/** ` (default …)` for a help line when the default is a plain value; the README shows the rest. */
function defaultSuffix(setting: SettingDeclaration): string {
  const value = setting.default;
  return typeof value === 'number' || (typeof value === 'string' && value !== '')
    ? ` (default ${value})`
    : '';
}

/** The "Exit codes:" lines of the help, from {@link EXIT_CODE_MEANINGS} (the README lists the same). */
export function exitCodesHelp(): string {
  const items = EXIT_CODE_MEANINGS.map(([code, meaning]) => `${code} ${meaning}`);
  const lines: string[] = [];
  let line = 'Exit codes:';
  for (const [i, item] of items.entries()) {
    const piece = ` ${item}${i < items.length - 1 ? ',' : '.'}`;
    if (line.length + piece.length > 100) {
      lines.push(line);
      line = `           `;
    }
    line += piece;
  }
  lines.push(line);
  return lines.join('\n');
}

const HOLD_HELP = `
Every embedded data directory (the memory store under SQLRECALL_HOME, a pglite:DIR database) is
opened by one process, which serves it to the others on an owner-only Unix socket. A short command
such as ask or sql that finds no such process starts PostgreSQL-in-WebAssembly itself (~0.5 s and
~1 s of CPU per directory). hold is that owner, kept in the background:

  $ sqlrecall hold --db pglite:./shop --idle 600 &   # by hand, for ten minutes without use
  $ export SQLRECALL_KEEP_WARM=300                   # or: ask and sql start one as they exit

It exits after --idle seconds with no client connected (a running chat or serve counts as one),
on Ctrl+C or SIGTERM, and releases the directories so the next command can open them. A directory
another sqlrecall process holds already is left to it.`;

/** Builds the program; actions report their exit code through `setExit`. */
function buildProgram(io: CliIO, setExit: (code: number) => void, frontEnds: FrontEnds): Command {
  const program = new Command('sqlrecall')
    .description('Ask your own PostgreSQL database questions in plain language, fully locally.')
    .version(packageVersion(), '-V, --version');
  for (const declaration of Object.values(SETTINGS as Record<string, SettingDeclaration>)) {
    if (declaration.flag === undefined) continue;
    const option = new Option(
      declaration.flag,
      `${declaration.help}${defaultSuffix(declaration)} [${declaration.env}]`,
    );
    program.addOption(declaration.hidden ? option.hideHelp() : option);
  }
  program
    .option('--json', 'print one JSON document on stdout')
    .addHelpText('after', EXAMPLES)
    // Every subcommand's help lists the global options (--json, --db, --user, …) it accepts too.
    .configureHelp({ showGlobalOptions: true })
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });

  const run = (fn: (opts: GlobalOptions & Record<string, unknown>) => Promise<number>) =>
    async function (this: Command) {
      setExit(await fn(this.optsWithGlobals()));
    };

  program
    .command('ask')
    .description('answer one question: prints the SQL, the result table and a short answer')
    .argument('<question...>', 'the question, in plain language')
    .option('--no-answer', 'skip the written answer (SQL and rows only)')
    .option('--conversation <id>', 'continue (or start) this conversation: follow-ups see its earlier SQL')
    .option('--continue', 'continue your last conversation')
    .option(
      '--without <id>',
      'do not apply this memory to this question (repeatable)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('-y, --yes', 'let a "forget …" in the question delete the memory it names without asking')
    .option('--no-model', 'answer only from saved examples and simple rules, never calling the model')
    .action(async function (this: Command, words: string[]) {
      // `--no-model` shares its attribute with the global `--model <name>`: keep the name a string.
      const opts = this.optsWithGlobals();
      const noModel = this.opts().model === false || opts.model === false;
      if (typeof opts.model !== 'string') delete opts.model;
      setExit(await (await import('./commands/ask.js')).runAsk(io, { ...opts, noModel }, words.join(' ')));
    });

  program
    .command('chat')
    .description('interactive questions (type exit or /bye to leave; /memory, /forget, /without, /help)')
    .option('--resume', 'continue your last conversation')
    .option('--show-thinking', "show a thinking model's reasoning, dimmed (never part of the answer)")
    .action(run(async (opts) => (await import('./commands/chat.js')).runChat(io, opts)));

  program
    .command('memory')
    .description(`manage memories: ${MEMORY_SUBCOMMANDS.join('|')} (--user U, --team T)`)
    .argument('<command>', `${MEMORY_SUBCOMMANDS.slice(0, -1).join(', ')} or ${MEMORY_SUBCOMMANDS.at(-1)}`)
    .argument('[args...]', 'text, id or file, depending on the command')
    .option('--kind <kind>', 'preference, term, metric, entity, example or context (add, edit, list)')
    .option('--sql <fragment>', 'compiled SQL for add/edit, e.g. "customers.country = \'India\'"')
    .option(
      '--until <date>',
      'add, edit: the memory expires after this day (YYYY-MM-DD, friday, "this week", "3 days"; not a day already over)',
    )
    .option('--pin', 'add: pin the memory (always recalled); also `memory pin ID` / `memory unpin ID`')
    .option('--all', 'list: every status; delete: every memory of the scope')
    .option('--purge', 'with delete --all: remove history and conversations too (no restore)')
    .option('--top-k <n>', 'search: most results (default 5)')
    .option('--out <file>', 'export: write to a file instead of stdout')
    .option('--delete', 'audit: remove the memories holding a credential for good')
    .action(async function (this: Command, command: string, args: string[]) {
      setExit(
        await (await import('./commands/memory.js')).runMemory(io, this.optsWithGlobals(), command, args),
      );
    });

  program
    .command('sql')
    .description('run one statement through the same read-only guard and execution (no model)')
    .argument('<sql...>', 'the statement; use - to read it from stdin')
    // A statement may start with a `--` or `/* */` comment: an unknown "option" is part of it.
    .allowUnknownOption()
    .action(async function (this: Command, words: string[]) {
      setExit(await (await import('./commands/sql.js')).runSql(io, this.optsWithGlobals(), words.join(' ')));
    });

  const schemaCommand = program
    .command('schema')
    .description('show the catalog as the model sees it (--json for every detail)')
    .action(run(async (opts) => (await import('./commands/schema.js')).runSchema(io, opts)));
  schemaCommand
    .command('context')
    .description('the tables and columns chosen for a question, why, and the estimated prompt tokens')
    .argument('<question...>', 'the question, in plain language')
    .action(async function (this: Command, words: string[]) {
      setExit(
        await (await import('./commands/schema-context.js')).runSchemaContext(
          io,
          this.optsWithGlobals(),
          words.join(' '),
        ),
      );
    });

  program
    .command('hold')
    .description(
      'keep the embedded memory store and pglite: database open for other sqlrecall commands until idle (what SQLRECALL_KEEP_WARM starts after ask or sql)',
    )
    .option(
      '--idle <seconds>',
      'exit after this many seconds without a client [SQLRECALL_KEEP_WARM, else 300]',
    )
    // What keep-warm passes: the directories the command started, instead of the configuration's.
    .addOption(new Option('--memory-dir <dir>', 'embedded memory store directory to hold').hideHelp())
    .addOption(new Option('--database-dir <dir>', 'embedded database directory to hold').hideHelp())
    .addHelpText('after', HOLD_HELP)
    .action(run(async (opts) => (await import('./commands/hold.js')).runHold(io, opts)));

  program
    .command('doctor')
    .description('check the model server, the models and the database, with the fix for each problem')
    .action(run(async (opts) => (await import('./commands/doctor.js')).runDoctor(io, opts)));

  program
    .command('demo')
    .description('create the embedded demo shop database (first run) and open chat on it')
    .option('-y, --yes', 'pull missing models without asking')
    .option('--no-chat', 'only prepare the demo database and models')
    .action(run(async (opts) => (await import('./commands/demo.js')).runDemo(io, opts)));

  program
    .command('eval')
    .description('benchmark: execution accuracy on a defog-format dataset, memory ablation, timings')
    .option('--dataset <file>', 'questions CSV (question, query, db_name[, query_category, instructions])')
    .option('--dumps <dir>', 'folder with one <db_name>.sql dump per database')
    .option('--memory-mode <mode>', 'none | prompt | taught | all (default prompt)')
    .option(
      '--out <file>',
      'results JSONL (default <home>/eval/results/<dataset>.jsonl; replaced unless --resume)',
    )
    .option('--resume', 'skip questions already in the results file')
    .option('--limit <n>', 'at most n questions')
    .option('--category <name>', 'only this query_category')
    .option('--db-name <name>', 'only questions on this database')
    .addOption(new Option('--db-prefix <prefix>', 'server database name prefix').hideHelp())
    .action(run(async (opts) => (await import('./commands/eval.js')).runEvalCommand(io, opts)));

  program
    .command('serve')
    .description('HTTP API and web UI (local mode on 127.0.0.1; --users for sign-in with access tokens)')
    .option('--port <n>', 'port (0: any free port)', '8484')
    .option('--host <address>', 'address to bind; beyond loopback implies --users', '127.0.0.1')
    .option('--users', 'multi-user mode: personal access tokens from `sqlrecall users add NAME`')
    .addOption(new Option('--web <dir>', 'folder of the built web UI').hideHelp())
    .action(run(async (opts) => (await import('./commands/serve.js')).runServe(io, opts, frontEnds)));

  program
    .command('users')
    .description(
      'users of `serve --users`: add NAME [--team T] [--admin] [--team-admin] [--restore-memories] | list | remove NAME | token NAME | admin NAME [--revoke]',
    )
    .argument('<command>', 'add, list, remove, token or admin')
    .argument('[name]', 'user name')
    .option(
      '--admin',
      'add: an administrator: reads the audit trail and the policy status (with --team, also administers the team)',
    )
    .option('--team-admin', 'add: the user administers their team (changes team memories)')
    .option('--revoke', 'admin: take the administrator right away instead of granting it')
    .option(
      '--restore-memories',
      'add: bring back the memories and conversations of the most recently removed account of this name (a new account otherwise starts empty)',
    )
    .action(async function (this: Command, command: string, name: string | undefined) {
      setExit(
        await (await import('./commands/users.js')).runUsers(io, this.optsWithGlobals(), command, name),
      );
    });

  program
    .command('policy')
    .description(
      'the data policy file (--policy FILE): check [FILE] | explain [TABLE] (for --user) | export --postgres',
    )
    .argument('<command>', 'check, explain or export')
    .argument('[arg]', 'check: the file (default --policy); explain: one table')
    .option('--postgres', 'export: as PostgreSQL row-level security policies and column grants')
    .action(async function (this: Command, command: string, arg: string | undefined) {
      setExit(
        await (await import('./commands/policy.js')).runPolicy(io, this.optsWithGlobals(), command, arg),
      );
    });

  program
    .command('audit')
    .description('statements run or refused per user, newest first (the audit trail; --user NAME: one user)')
    .option('--since <when>', 'only since this time: an ISO date or time, or a duration such as 24h or 7d')
    .option('--limit <n>', 'most records (default 100, at most 1000)')
    .action(run(async (opts) => (await import('./commands/audit.js')).runAudit(io, opts)));

  program
    .command('mcp')
    .description('Model Context Protocol server on stdio for one user (for desktop assistants and editors)')
    .option('--max-bytes <n>', 'byte cap of each tool result (default 65536)')
    .addHelpText('after', MCP_HELP)
    .action(run(async (opts) => (await import('./commands/mcp.js')).runMcp(io, opts)));

  return program;
}

/**
 * Runs the CLI with `argv` (without the node and script entries) and returns the exit code.
 * `frontEnds`: the other front ends `serve` starts, handed in by the process entry (`src/main.ts`);
 * without an HTTP server, `serve` fails with exit 1.
 * Never throws: every failure becomes a message on stderr (or a JSON error document with --json).
 */
export async function runCli(argv: string[], io: CliIO, frontEnds: FrontEnds = {}): Promise<number> {
  let exitCode = 0;
  const program = buildProgram(
    io,
    (code) => {
      exitCode = code;
    },
    frontEnds,
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (
        error.code === 'commander.helpDisplayed' ||
        error.code === 'commander.version' ||
        error.exitCode === 0
      )
        return 0;
      if (error.code === 'commander.help') return 0;
      return 2;
    }
    const { reportError } = await import('./report.js');
    return reportError(io, Boolean(program.opts().json), error);
  }
}

export { SqlrecallError };
