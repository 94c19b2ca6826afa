/**
 * The configuration of one CLI run: `loadConfig` with the command line's flags applied. Its own
 * module so that `program.ts` (and so `--version` / `--help`) does not load the configuration's
 * validators (zod): process start stays short.
 */
import { type Config, loadConfig } from '../config/config.js';
import {
  flagAttribute,
  type GlobalOptions,
  SETTINGS,
  type SettingDeclaration,
  type SettingKey,
} from '../config/settings.js';
import { withDemoDefault } from '../runtime/demo-default.js';
import type { CliIO } from './io.js';

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
  return loadConfig({ env: io.env, cwd: io.cwd, flags: flagValues(opts) });
}

/**
 * The settings given as flags, keyed like {@link Config}: a value flag's string, or the declared
 * `flagValue` of a flag without a value (`--no-memory` → `off`) when it was given.
 */
export function flagValues(opts: GlobalOptions): Partial<Record<SettingKey, string>> {
  const parsed = opts as Record<string, unknown>;
  const flags: Partial<Record<SettingKey, string>> = {};
  for (const [key, declaration] of Object.entries(SETTINGS) as [SettingKey, SettingDeclaration][]) {
    if (declaration.flag === undefined) continue;
    const value = parsed[flagAttribute(declaration.flag)];
    const given = declaration.flag.startsWith('--no-') ? value === false : value === true;
    if (typeof value === 'string') flags[key] = value;
    else if (given && declaration.flagValue !== undefined) flags[key] = declaration.flagValue;
  }
  return flags;
}
