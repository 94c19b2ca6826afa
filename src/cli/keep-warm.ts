/**
 * Keep-warm: a one-shot command that had to start PGlite itself (no other
 * sqlrecall process held the data directory) may hand the directories to a background
 * `sqlrecall hold` as it exits. The next command then finds a live owner and reaches the store
 * through its socket instead of starting PGlite again: ≈ 0.5 s of wall time and ≈ 1 s of CPU per
 * data directory on a 2-core machine (docs/perf/2026-12-01-keep-warm-and-prepared-statements.md).
 * Off unless `SQLRECALL_KEEP_WARM` / `--keep-warm` is above 0, like Ollama's own keep-alive but
 * opt-in: a process that outlives the command should be asked for.
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config/config.js';
import { parseDatabaseUrl } from '../databases/open.js';
import { directoriesStartedHere } from '../databases/pglite/sharing.js';
import { memoryStoreOptions } from '../runtime/memory-runtime.js';
import type { CliIO } from './io.js';

/**
 * The launcher, from this module's own location (src/cli, dist/cli and dist/bundle all sit two
 * levels below the package root), not from `process.argv`, which names the test runner when the
 * CLI runs inside another program.
 */
const ENTRY = fileURLToPath(new URL('../../bin/sqlrecall.js', import.meta.url));

/** The embedded data directories a configuration names, with pgvector for the memory store's. */
export function embeddedDirectories(config: Config): { dir: string; vector: boolean; role: string }[] {
  const out: { dir: string; vector: boolean; role: string }[] = [];
  if (config.memoryEnabled) {
    const store = memoryStoreOptions(config);
    if ('dataDir' in store && store.dataDir !== undefined)
      out.push({ dir: resolve(store.dataDir), vector: true, role: 'memory store' });
  }
  if (config.databaseUrl) {
    const target = parseDatabaseUrl(config.databaseUrl);
    if (target.engine === 'pglite' && target.dataDir !== undefined)
      out.push({ dir: resolve(target.dataDir), vector: false, role: 'database' });
  }
  return out;
}

/**
 * Starts a detached `sqlrecall hold` for the embedded directories this process started PGlite on,
 * when `config.keepWarmSeconds` > 0; does nothing otherwise, or when this process started none
 * (it reached them through another process's socket). Call it after the runtime is closed (the
 * locks released), so the holder can take the directories over. The holder gets no terminal
 * (stdio ignored, its own process group: Ctrl-C in this shell does not reach it), the same
 * environment and working directory, and the directories as absolute paths on its command line
 * (`--memory-dir`, `--database-dir`): never a URL (a server URL could carry a password, visible to
 * `ps`).
 * @returns the holder's pid, or undefined when none was started (never throws: a holder that
 *   could not start only means the next command starts PGlite itself)
 */
export function startKeepWarmHolder(io: CliIO, config: Config): number | undefined {
  if (config.keepWarmSeconds <= 0) return undefined;
  const started = new Set(directoriesStartedHere());
  if (started.size === 0) return undefined;
  let wanted: ReturnType<typeof embeddedDirectories>;
  try {
    wanted = embeddedDirectories(config).filter((d) => started.has(d.dir));
  } catch {
    return undefined; // a configuration error, reported by the command already
  }
  if (wanted.length === 0) return undefined;
  // Exactly the directories this process started, by path: not through the configuration, whose
  // DATABASE_URL (environment or .env) may name a database this command never opened.
  const args = [ENTRY, 'hold', '--idle', String(config.keepWarmSeconds)];
  for (const d of wanted) args.push(d.vector ? '--memory-dir' : '--database-dir', d.dir);
  try {
    const child = spawn(process.execPath, args, {
      cwd: io.cwd,
      env: io.env,
      detached: true,
      stdio: 'ignore',
    });
    child.on('error', () => undefined);
    child.unref();
    return child.pid;
  } catch {
    return undefined;
  }
}
