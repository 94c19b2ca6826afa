/**
 * The demo shop as the default database: with no database configured (no `--db`, no
 * `DATABASE_URL`) and a demo shop made by `sqlrecall demo` in the home folder, the commands that
 * question a database use it, and say so in one line, instead of failing with "No database is
 * configured" right after the user made one.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { DEMO_MARKER_FILE } from '../demo/marker.js';
import { demoDatabaseDir } from './runtime.js';

/**
 * `config` with `databaseUrl` set to the demo shop when none is configured and the demo shop exists
 * (its marker file is written last, so a half-made demo never counts); `notice` is then called
 * once with the line to show. Otherwise `config` itself.
 */
export function withDemoDefault(config: Config, notice: (line: string) => void): Config {
  if (config.databaseUrl) return config;
  const dir = demoDatabaseDir(config);
  if (!existsSync(join(dir, DEMO_MARKER_FILE))) return config;
  const url = `pglite:${dir}`;
  notice(
    `No database is configured: using the demo shop ${url} (pass --db or set DATABASE_URL to question your own).`,
  );
  return { ...config, databaseUrl: url };
}
