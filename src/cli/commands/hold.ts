/**
 * `sqlrecall hold [--idle SECONDS]`: opens the embedded memory store and the embedded (`pglite:`)
 * database of the configuration as their owner and serves them on their sockets, like a running
 * `chat` does, until no other process has used them for SECONDS (keep-warm). Started in
 * the background by `ask` and `sql` when `SQLRECALL_KEEP_WARM` is above 0 (`keep-warm.ts`), or by
 * hand. A directory another process already holds is left to it; with none left to hold, exits 0
 * at once. SIGINT/SIGTERM: releases the directories (lock and socket removed) and exits 0.
 */
import { resolve } from 'node:path';
import { SqlrecallError } from '../../core/errors.js';
import { acquireSharedPglite, type OwnedPglite } from '../../databases/pglite/sharing.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import { embeddedDirectories } from '../keep-warm.js';
import type { GlobalOptions } from '../program.js';
import { reportError } from '../report.js';

/** Thrown by the acquisition when another process is opening the directory: it is left to that one. */
const HELD_ELSEWHERE = new Error('held by another process');

/** Idle time of a `hold` started by hand without `--idle` or `SQLRECALL_KEEP_WARM`: 300 s. */
export const DEFAULT_HOLD_IDLE_SECONDS = 300;

/** How often the holder looks at its sockets' activity: 1 s (or the idle time, if shorter). */
const CHECK_EVERY_MS = 1_000;

/** How long to wait for a directory another process is opening right now before leaving it to that process. */
const LOCK_WAIT_MS = 5_000;

/**
 * Parses `--idle`: whole seconds from 1 to 86,400.
 * @throws SqlrecallError `usage` otherwise
 */
export function parseIdleSeconds(raw: string): number {
  const value = Number(raw);
  if (!/^\d+$/.test(raw.trim()) || !Number.isInteger(value) || value < 1 || value > 86_400)
    throw new SqlrecallError(
      'usage',
      `--idle must be a whole number of seconds from 1 to 86400 (got "${raw.slice(0, 40)}").`,
    );
  return value;
}

/** Runs `hold`; resolves with the exit code once the directories are released. */
export async function runHold(
  io: CliIO,
  opts: GlobalOptions & { idle?: string; memoryDir?: string; databaseDir?: string },
): Promise<number> {
  const held: { role: string; dir: string; owned: OwnedPglite }[] = [];
  // Listened for from the start: a stop that comes while PGlite is opening still releases.
  const stop = stopSignal();
  try {
    const config = configFrom(io, opts, {
      demoDefault: opts.memoryDir === undefined && opts.databaseDir === undefined,
    });
    const idleSeconds =
      opts.idle !== undefined
        ? parseIdleSeconds(opts.idle)
        : config.keepWarmSeconds > 0
          ? config.keepWarmSeconds
          : DEFAULT_HOLD_IDLE_SECONDS;
    // Started by keep-warm: exactly the directories the command started; by hand: the configuration's.
    const given = [
      ...(opts.memoryDir ? [{ dir: resolve(opts.memoryDir), vector: true, role: 'memory store' }] : []),
      ...(opts.databaseDir ? [{ dir: resolve(opts.databaseDir), vector: false, role: 'database' }] : []),
    ];
    const targets = given.length > 0 ? given : embeddedDirectories(config);
    if (targets.length === 0) {
      throw new SqlrecallError(
        'usage',
        'Nothing to hold: the memory store is off or on a server, and the database is not an embedded pglite:DIR.',
        {
          details: { hint: 'Run it with --db pglite:DIR, or with the embedded memory store (the default).' },
        },
      );
    }
    for (const target of targets) {
      if (stop.requested()) break;
      const got = await acquireSharedPglite<'elsewhere'>(target.dir, {
        vector: target.vector,
        waitMs: LOCK_WAIT_MS,
        // Held by another live process: it serves the directory already; nothing to connect to.
        connect: async () => 'elsewhere',
        unavailable: () => HELD_ELSEWHERE,
      }).catch((error: unknown) => {
        if (error === HELD_ELSEWHERE) return undefined;
        throw error;
      });
      if (got?.kind !== 'owner') {
        io.stderr.write(
          `The ${target.role} ${target.dir} is held by another sqlrecall process already; left to it.\n`,
        );
      } else if (got.activity() === undefined) {
        await got.release();
        io.stderr.write(
          `The ${target.role} ${target.dir} cannot be served to other processes here (no socket path fits); not held.\n`,
        );
      } else {
        held.push({ role: target.role, dir: target.dir, owned: got });
      }
    }
    if (held.length === 0 || stop.requested()) return 0;
    io.stderr.write(
      `Holding ${held.map((h) => `the ${h.role} ${h.dir}`).join(' and ')} for other sqlrecall commands; exits after ${idleSeconds} s without one (Ctrl+C stops it now).\n`,
    );
    await whileUsed(held, idleSeconds * 1000, stop);
    return 0;
  } catch (error) {
    return reportError(io, Boolean(opts.json), error);
  } finally {
    stop.dispose();
    for (const h of held) await h.owned.release().catch(() => undefined);
  }
}

/** SIGINT/SIGTERM, listened for until `dispose()`: replaces Node's default (exit at once, lock left behind). */
interface StopSignal {
  requested(): boolean;
  /** Resolves on the first signal (at once if one came already). */
  wait(): Promise<void>;
  dispose(): void;
}

function stopSignal(): StopSignal {
  let requested = false;
  let wake: (() => void) | undefined;
  const waiting = new Promise<void>((resolve) => {
    wake = resolve;
  });
  const onSignal = () => {
    requested = true;
    wake?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return {
    requested: () => requested,
    wait: () => waiting,
    dispose: () => {
      process.off('SIGINT', onSignal);
      process.off('SIGTERM', onSignal);
    },
  };
}

/** Resolves once every held directory has had no client for `idleMs`, or on a stop signal. */
function whileUsed(held: { owned: OwnedPglite }[], idleMs: number, stop: StopSignal): Promise<void> {
  return new Promise<void>((resolve) => {
    const done = () => {
      clearInterval(timer);
      resolve();
    };
    const timer = setInterval(
      () => {
        const now = Date.now();
        const idle = held.every(({ owned }) => {
          const activity = owned.activity();
          return activity === undefined || (activity.clients === 0 && now - activity.changedAt >= idleMs);
        });
        if (idle) done();
      },
      Math.min(CHECK_EVERY_MS, idleMs),
    );
    void stop.wait().then(done);
  });
}
