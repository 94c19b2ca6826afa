/**
 * The configuration of one CLI run: `loadConfig` with the command line's flags applied. Its own
 * module so that `program.ts` (and so `--version` / `--help`) does not load the configuration
 * schema (to keep process start short).
 */
import { type Config, loadConfig } from '../config/config.js';
import { withDemoDefault } from '../runtime/demo-default.js';
import type { CliIO } from './io.js';
import type { GlobalOptions } from './program.js';

/** Options of {@link configFrom}. */
export interface ConfigFromOptions {
  /**
   * A command that questions a database (ask, sql, chat, schema, serve, mcp, doctor, hold): with no
   * database configured, use the demo shop when it exists, saying so in one line on stderr
   * (`runtime/demo-default.ts`). Default false.
   */
  demoDefault?: boolean;
}

/** Reads the configuration with the command line's flags applied. */
export function configFrom(io: CliIO, opts: GlobalOptions, options: ConfigFromOptions = {}): Config {
  const config = readConfig(io, opts);
  return options.demoDefault ? withDemoDefault(config, (line) => io.stderr.write(`${line}\n`)) : config;
}

function readConfig(io: CliIO, opts: GlobalOptions): Config {
  return loadConfig({
    env: io.env,
    cwd: io.cwd,
    flags: {
      databaseUrl: opts.db,
      user: opts.user,
      model: opts.model,
      embedModel: opts.embedModel,
      ollamaHost: opts.ollamaHost,
      home: opts.home,
      maxRows: opts.maxRows,
      statementTimeoutMs: opts.timeoutMs,
      maxResultBytes: opts.maxResultBytes,
      schemas: opts.schemas,
      numCtx: opts.numCtx,
      maxRepairs: opts.maxRepairs,
      logLevel: opts.logLevel,
      allowTables: opts.allowTables,
      allowFunctions: opts.allowFunctions,
      team: opts.team,
      memoryEnabled: opts.memory === false ? 'off' : undefined,
      maxSqlTokens: opts.maxSqlTokens,
      keepWarmSeconds: opts.keepWarm,
      provider: opts.provider,
      baseUrl: opts.baseUrl,
      contextLength: opts.contextLength,
    },
  });
}
