/**
 * Loads and validates the settings declared in `settings.ts` with zod. Together with `env.ts`, the
 * only reader of the process environment and `.env`. Precedence: command-line flags > environment >
 * `.env` in the working directory > defaults.
 */
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';
import { z } from 'zod';
import { SqlrecallError } from '../core/errors.js';
import { maskUrl } from '../core/redact.js';
import { processEnv } from './env.js';
import { type Config, flagName, SETTINGS, type SettingDeclaration, type SettingKey } from './settings.js';

export type { Config } from './settings.js';

/** Inputs to {@link loadConfig}. */
export interface ConfigSources {
  /** Values given as flags, keyed like {@link Config}; undefined entries are ignored. */
  flags?: Partial<Record<SettingKey, string | number | undefined>>;
  /** Environment; default the process's. */
  env?: NodeJS.ProcessEnv;
  /** Folder whose `.env` is read; default `process.cwd()`. */
  cwd?: string;
}

/**
 * Reads and validates the configuration.
 * @throws SqlrecallError `config` with one sentence naming the setting (flag or variable) and the
 *   problem; URL values in the message are masked.
 */
export function loadConfig(sources: ConfigSources = {}): Config {
  const env = sources.env ?? processEnv();
  const dotenv = readDotEnv(resolve(sources.cwd ?? process.cwd(), '.env'));
  const out: Partial<Config> = {};
  for (const key of Object.keys(SETTINGS) as SettingKey[]) {
    const setting: SettingDeclaration = SETTINGS[key];
    const flagValue = sources.flags?.[key];
    let raw: unknown;
    let origin: string;
    if (flagValue !== undefined) {
      raw = String(flagValue);
      origin = setting.flag === undefined ? setting.env : flagName(setting.flag);
    } else if (env[setting.env] !== undefined && env[setting.env] !== '') {
      raw = env[setting.env];
      origin = setting.env;
    } else if (dotenv[setting.env] !== undefined && dotenv[setting.env] !== '') {
      raw = dotenv[setting.env];
      origin = `${setting.env} (from .env)`;
    } else {
      raw = typeof setting.default === 'function' ? setting.default() : setting.default;
      origin = `${setting.env} (default)`;
    }
    const parsed = setting.schema(z).safeParse(raw);
    if (!parsed.success) {
      const why = parsed.error.issues[0]?.message ?? 'invalid value';
      const shown = typeof raw === 'string' ? ` (got "${maskUrl(raw).slice(0, 120)}")` : '';
      throw new SqlrecallError('config', `Setting ${origin} is invalid: ${why}${shown}.`, {
        details: { setting: setting.env },
      });
    }
    assign(out, key, parsed.data as Config[typeof key]);
  }
  out.home = resolve(String(out.home).replace(/^~(?=$|\/)/, homedir()));
  // A relative policy path means the folder the command was started in, as for `.env`.
  if (out.policy)
    out.policy = resolve(sources.cwd ?? process.cwd(), out.policy.replace(/^~(?=$|\/)/, homedir()));
  // Complete: the loop above set every key of SETTINGS, which are the keys of Config.
  return out as Config;
}

/** `out[key] = value`, typed per key. */
function assign<K extends SettingKey>(out: Partial<Config>, key: K, value: Config[K]): void {
  out[key] = value;
}

function readDotEnv(path: string): Record<string, string> {
  if (!existsSync(path)) return {};
  try {
    return parseEnv(readFileSync(path, 'utf8')) as Record<string, string>;
  } catch (cause) {
    throw new SqlrecallError('config', `The file ${path} could not be read as KEY=value lines.`, { cause });
  }
}
