/**
 * One embedded PGlite data directory for every local process: the memory store and a
 * user's `pglite:` database alike.
 *
 * PGlite is one PostgreSQL session inside one process and does not stop a second process from
 * opening (and corrupting) the same data directory. So: the first process to open a data
 * directory writes `<dir>/sqlrecall-memory.lock` (its pid), opens PGlite and serves it on the Unix
 * socket `<dir>/.run/.s.PGSQL.5432` (directory 0700, socket 0600, never TCP; a short private
 * directory instead when that path is too long for a socket, {@link socketDirOf}) through the
 * serializing multiplexer of `wire-mux.ts`, which gives every client (and this process) a clean
 * session on its turn (`session-gate.ts`). Every later process finds the lock held by a live pid
 * and connects to that socket with `pg`. When the owner exits (or is killed), its lock's pid is
 * dead: the next process to open removes the stale lock and socket and becomes the owner.
 * A directory opened twice in one process shares one PGlite (reference-counted).
 *
 * The lock file keeps the name it had when only the memory store was shared, so every sqlrecall
 * version that shares a directory sees the same lock.
 */
import { createHash, randomUUID } from 'node:crypto';
import { lstatSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, isAbsolute, join } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { envVariable, processEnv } from '../../config/env.js';
import { processAlive } from '../../core/process.js';
import { isConnectionError } from '../postgres/errors.js';
import { DiskGuard } from './disk-guard.js';
import { Gate, pgliteSessionSwitch, type Setting } from './session-gate.js';
import { pgliteStartParams } from './start-params.js';
import { seedFromTemplate, type TemplateName, templateBlob } from './template.js';
import { SOCKET_FILE_NAME, socketPathIn, startWireMux, type WireMux } from './wire-mux.js';

/** Name of the lock file that marks a data directory as owned by a running process. */
export const LOCK_FILE_NAME = 'sqlrecall-memory.lock';

/**
 * Default wait for a directory another process is opening or handing over: 30 s (PGlite's own
 * start is 1–3.5 s, LIBRARIES.md; a takeover adds one more start).
 */
export const SHARED_PGLITE_WAIT_MS = 30_000;

/** The data directory's own run directory, where its socket lives when the path is short enough. */
export function runDirOf(dir: string): string {
  return join(dir, '.run');
}

/**
 * A directory only this user can enter: with `create`, made 0700 when missing; refused when it is
 * missing, a symlink, not a directory, owned by another user, or open to group or others (then
 * another local user could put their own socket where this process looks for the owner's).
 */
function privateDirectory(path: string, create: boolean): boolean {
  if (create) {
    try {
      mkdirSync(path, { mode: 0o700 });
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') return false;
    }
  }
  try {
    const stat = lstatSync(path);
    const uid = process.getuid?.();
    return stat.isDirectory() && (uid === undefined || stat.uid === uid) && (stat.mode & 0o077) === 0;
  } catch {
    return false;
  }
}

/** The short name of `dir`'s socket directory: 16 hex digits of SHA-256 of its real path. */
function shortName(dir: string): string {
  let real = dir;
  try {
    real = realpathSync(dir);
  } catch {
    // not created yet: its path as given
  }
  return createHash('sha256').update(real).digest('hex').slice(0, 16);
}

/**
 * Where the owner of `dir` (an absolute path) serves its socket, or undefined when it cannot:
 * - `<dir>/.run` when `<dir>/.run/.s.PGSQL.5432` fits a Unix socket path (`MAX_SOCKET_PATH_BYTES`);
 * - else `<base>/<16 hex digits of SHA-256 of its real path>` for the first base that fits and is
 *   private ({@link privateDirectory}): `<os.tmpdir()>/sqlrecall-<uid>`, then
 *   `$XDG_RUNTIME_DIR/sqlrecall`;
 * - undefined when none does: then the directory is used by the process that opened it alone.
 * The owner writes its choice into the lock file, so a client started with another environment
 * (another TMPDIR or XDG_RUNTIME_DIR) still finds it ({@link lockedSocketDir}).
 */
export function socketDirOf(dir: string): string | undefined {
  const own = runDirOf(dir);
  if (socketPathIn(own).fits) return own;
  const runtime = envVariable('XDG_RUNTIME_DIR');
  const bases = [
    join(tmpdir(), `sqlrecall-${process.getuid?.() ?? 'user'}`),
    ...(runtime && isAbsolute(runtime) ? [join(runtime, 'sqlrecall')] : []),
  ];
  const name = shortName(dir);
  for (const base of bases) {
    const runDir = join(base, name);
    if (socketPathIn(runDir).fits && privateDirectory(base, true)) return runDir;
  }
  return undefined;
}

/**
 * The socket directory a live owner wrote on the second line of its lock file (`recorded`), if it
 * is one a client may trust: `<dir>/.run`, or `<private base>/<dir's short name>` that fits. A
 * lock without that line (an older sqlrecall, or an owner that could not serve) means `<dir>/.run`
 * when that fits, else none: the owner serves nobody.
 */
function lockedSocketDir(dir: string, recorded: string | undefined): string | undefined {
  const own = runDirOf(dir);
  if (recorded === undefined || recorded === '') return socketPathIn(own).fits ? own : undefined;
  if (recorded === own) return own;
  const valid =
    isAbsolute(recorded) &&
    basename(recorded) === shortName(dir) &&
    socketPathIn(recorded).fits &&
    privateDirectory(dirname(recorded), false); // never created from what a lock file says
  return valid ? recorded : undefined;
}

/**
 * Tries to take the lock file: a release function and the socket directory to serve on when taken
 * (undefined: none fits), else the live owner's pid (-1 when it cannot be read yet) and the socket
 * directory it serves on (undefined: it serves nobody). The lock holds `<pid> <random token>` and,
 * on a second line, this process's socket directory when it will serve one. A lock whose pid is
 * dead (crash, SIGKILL) is removed with the socket it left.
 */
function tryLock(
  dir: string,
): { release: () => void; socketDir?: string } | { pid: number; socketDir?: string } {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, LOCK_FILE_NAME);
  const socketDir = socketDirOf(dir);
  const content = `${process.pid} ${randomUUID()}${socketDir ? `\n${socketDir}` : ''}`;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    try {
      writeFileSync(file, content, { flag: 'wx', mode: 0o600 });
      return {
        socketDir,
        release: () => {
          try {
            if (readFileSync(file, 'utf8') === content) rmSync(file, { force: true });
          } catch {
            // already gone
          }
        },
      };
    } catch (error) {
      if ((error as { code?: string }).code !== 'EEXIST') throw error;
      let lines: string[];
      try {
        lines = readFileSync(file, 'utf8').split('\n');
      } catch {
        continue; // vanished meanwhile: retry
      }
      const pid = Number.parseInt(lines[0]?.split(' ')[0] ?? '', 10);
      // A lock just created may not hold its pid yet (empty file): treat as live, wait and retry.
      if (!Number.isInteger(pid)) return { pid: -1 };
      if (pid !== process.pid && processAlive(pid)) return { pid, socketDir: lockedSocketDir(dir, lines[1]) };
      rmSync(file, { force: true }); // stale: its process is gone (or ours, not released)
      const left = lockedSocketDir(dir, lines[1]);
      if (left) rmSync(join(left, SOCKET_FILE_NAME), { force: true });
    }
  }
  return { pid: -1 };
}

/**
 * Opens a PGlite on `dir` (undefined: in memory) with a 16MB buffer pool (start-params.ts: −120 MB
 * RSS per instance) and, with `vector`, the pgvector extension. A new database starts from the
 * installation's initialized cluster instead of running initdb (`template.ts`). Loads the WASM
 * package on demand, so a process that only talks to another process's socket never loads it.
 */
export async function openPglite(
  dir: string | undefined,
  vector: boolean,
  template: TemplateName = 'pgdata',
): Promise<PGlite> {
  const [{ PGlite }, extensions] = await Promise.all([
    import('@electric-sql/pglite'),
    vector ? import('@electric-sql/pglite-pgvector').then((m) => ({ vector: m.vector })) : undefined,
  ]);
  // On disk, the cluster is copied into the directory (lighter than PGlite's own tarball loading,
  // which keeps a second copy in WebAssembly memory); in memory, PGlite loads the archive.
  if (dir !== undefined) seedFromTemplate(dir, processEnv(), template);
  const loadDataDir = dir === undefined ? templateBlob() : undefined;
  // Object form (PGlite ignores the options argument when the data dir argument is undefined).
  const db = new PGlite({
    dataDir: dir,
    ...(loadDataDir ? { loadDataDir } : {}),
    ...(extensions ? { extensions } : {}),
    startParams: pgliteStartParams(PGlite.defaultStartParams),
  });
  await db.waitReady;
  return db;
}

/** An open PGlite owned by this process, shared by everything in it that opened its directory. */
interface Owner {
  db: PGlite;
  gate: Gate;
  /** Stops every use of `db` once its disk filled up (see `disk-guard.ts`). */
  disk: DiskGuard;
  /** Undefined when the directory's socket path is too long to serve (then it is not shared). */
  mux: WireMux | undefined;
  refs: number;
  release: () => void;
}

/** Data directories this process owns (absolute path → owner being opened or open). */
const owners = new Map<string, Promise<Owner>>();

/** Every data directory this process has opened as owner (started PGlite on), released or not. */
const startedHere = new Set<string>();

/**
 * The data directories this process started PGlite on (as owner) since it began, released or not:
 * what a one-shot command hands to a keep-warm holder (`sqlrecall hold`) when it exits, so the next
 * command finds an owner and skips that start. Absolute paths, in the order first opened.
 */
export function directoriesStartedHere(): string[] {
  return [...startedHere];
}

/**
 * Opens `dir` as its owner and serves it on `runDir` (the one written into the lock); undefined
 * `runDir`: no socket path fits, so the directory is used by this process alone.
 */
async function openOwner(
  dir: string,
  options: { vector?: boolean; settings?: Setting[]; template?: TemplateName },
  runDir: string | undefined,
  release: () => void,
): Promise<Owner> {
  let db: PGlite | undefined;
  try {
    db = await openPglite(dir, options.vector ?? false, options.template);
    // Every turn of this process on the session starts clean, with its own settings (session-gate.ts).
    const disk = new DiskGuard(dir);
    const gate = new Gate(pgliteSessionSwitch(db, disk), options.settings);
    const mux = runDir ? await startWireMux(db, gate, runDir, { disk }) : undefined;
    return { db, gate, disk, mux, refs: 0, release };
  } catch (error) {
    await db?.close().catch(() => undefined);
    release();
    throw error;
  }
}

async function closeOwner(owner: Owner): Promise<void> {
  try {
    await owner.mux?.close();
    // Let a client's transaction in flight finish (or be rolled back) before closing.
    await owner.gate.run(async () => {
      // A stopped instance is never entered again, not even to close it (it would not return).
      if (!owner.db.closed && !owner.disk.stopped) await owner.db.close();
    });
  } finally {
    owner.release();
  }
}

/** Socket-level failures (Node error codes look like SQLSTATEs to `isConnectionError`: EPIPE). */
const SOCKET_CODES = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ENOENT', 'ETIMEDOUT']);

/** True when an owner's socket is gone or the connection to it broke. */
export function brokenConnection(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  return isConnectionError(error);
}

/**
 * This process owns the directory: run every use of `db` inside `gate.run` (socket clients take
 * the same gate per transaction); call `release()` once when done (the last release closes it).
 */
export interface OwnedPglite {
  kind: 'owner';
  db: PGlite;
  gate: Gate;
  /** Check it before each use of `db` and pass it each error (see `disk-guard.ts`). */
  disk: DiskGuard;
  /** Other processes' connections to this directory's socket now (see `WireMux.activity`); undefined when it is not served. */
  activity(): { clients: number; changedAt: number } | undefined;
  release(): Promise<void>;
}

/** Another process owns the directory: `client` reaches it through the owner's socket. */
export interface SocketPglite<C> {
  kind: 'client';
  client: C;
  /** The owner's pid when it could be read (-1 otherwise). */
  ownerPid: number;
}

/** Options of {@link acquireSharedPglite}. */
export interface AcquireOptions<C> {
  /** Load pgvector when this process opens the directory; default false. */
  vector?: boolean;
  /**
   * Settings this process relies on in the session when it opens the directory (e.g. the memory
   * store's `search_path`): applied on each of its turns, whatever the database's defaults or
   * another client did (`session-gate.ts`). Default none: the database's own defaults.
   */
  settings?: Setting[];
  /** The installation's cluster a new directory starts from (`template.ts`); default `pgdata`. */
  template?: TemplateName;
  /** Longest wait for a directory that is locked but does not answer; default {@link SHARED_PGLITE_WAIT_MS}. */
  waitMs?: number;
  /**
   * Connects to the owner's socket in `runDir` (host for `pg`, port 5432) and proves it answers.
   * Must throw an error {@link brokenConnection} recognizes when nobody answers (then this waits
   * and retries); any other error is passed on.
   */
  connect(runDir: string): Promise<C>;
  /** The error thrown when the wait ends (`ownerPid` -1 when unknown). */
  unavailable(ownerPid: number, cause: unknown): Error;
}

/**
 * Opens `dir` (an absolute path) as its owner, or connects to the process that owns it (see the
 * module comment). A directory this process owns already is shared in-process (its `vector`
 * option is the first opener's).
 * @throws the `unavailable` error when the directory stays locked and unreachable for `waitMs`;
 *   PGlite's own start errors when this process becomes the owner
 */
export async function acquireSharedPglite<C>(
  dir: string,
  options: AcquireOptions<C>,
): Promise<OwnedPglite | SocketPglite<C>> {
  const deadline = Date.now() + (options.waitMs ?? SHARED_PGLITE_WAIT_MS);
  let lastPid = -1;
  let lastError: unknown;
  for (;;) {
    let opening = owners.get(dir);
    let socketDir: string | undefined;
    if (!opening) {
      const lock = tryLock(dir);
      if ('release' in lock) {
        opening = openOwner(dir, options, lock.socketDir, lock.release);
        startedHere.add(dir);
        const mine = opening;
        owners.set(dir, mine);
        mine.catch(() => {
          if (owners.get(dir) === mine) owners.delete(dir);
        });
      } else {
        lastPid = lock.pid;
        socketDir = lock.socketDir;
        // A holder whose lock names no socket this process may use: waiting would not help.
        if (lock.pid > 0 && !socketDir)
          throw options.unavailable(
            lastPid,
            new Error(
              `The holder of ${dir} serves it on no usable socket: the path is too long for a Unix socket and no private short directory was found, or its lock names a directory that is not private.`,
            ),
          );
      }
    }
    if (opening) {
      const owner = await opening;
      owner.refs += 1;
      let released = false;
      return {
        kind: 'owner',
        db: owner.db,
        gate: owner.gate,
        disk: owner.disk,
        activity: () => owner.mux?.activity(),
        release: async () => {
          if (released) return;
          released = true;
          owner.refs -= 1;
          if (owner.refs > 0) return;
          owners.delete(dir);
          await closeOwner(owner);
        },
      };
    }
    try {
      if (socketDir) return { kind: 'client', client: await options.connect(socketDir), ownerPid: lastPid };
    } catch (error) {
      if (!brokenConnection(error)) throw error;
      lastError = error;
    }
    if (Date.now() >= deadline) throw options.unavailable(lastPid, lastError);
    await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(Math.random() * 100)));
  }
}

/** Options of {@link sharedAccess}. */
export interface SharedAccessOptions<M> {
  /** Resolves a mode: usually {@link acquireSharedPglite} wrapped into the caller's own shape. */
  resolve(): Promise<M>;
  /** The error to throw when resolving failed (the next call resolves again). */
  error(cause: unknown): unknown;
  /** True for a socket client's mode (an owner's calls never lose their connection). */
  isClient(mode: M): boolean;
  /** True when a client's call failed because the owner's socket went away. */
  ownerGone(error: unknown): boolean;
  /** Closes a client mode that was dropped after its owner went away. */
  dropClient(mode: M): Promise<void>;
}

/**
 * How this process reaches one shared data directory, as its owner or as a client of the owner's
 * socket: resolved on first use, again after a failed resolution, and again when a client's call
 * failed because the owner went away (then this process may take the directory over).
 */
export interface SharedAccess<M> {
  /** The current mode, resolved when there is none. @throws `options.error(cause)` when resolving fails */
  current(): Promise<M>;
  /**
   * Runs `fn` on the current mode. When `fn` fails on a client mode because its owner went away,
   * drops that mode, resolves a new one and runs `fn` once more (its error, if any, is final).
   */
  run<T>(fn: (mode: M) => Promise<T>): Promise<T>;
  /** Detaches the current mode, for closing it: the next call resolves a new one. Undefined when none, or it failed. */
  detach(): Promise<M | undefined>;
}

/** How many times one call follows the directory to a new owner after its owner went away. */
const OWNER_CHANGES_FOLLOWED = 4;

/** See {@link SharedAccess}: the mode cell shared by the memory store and the `pglite:` connector. */
export function sharedAccess<M>(options: SharedAccessOptions<M>): SharedAccess<M> {
  let mode: Promise<M> | undefined;
  const current = (): Promise<M> => {
    mode ??= options.resolve();
    return mode.catch((cause: unknown) => {
      mode = undefined;
      throw options.error(cause);
    });
  };
  return {
    current,
    async run<T>(fn: (m: M) => Promise<T>): Promise<T> {
      // Several processes may own the directory one after another while this one works (each
      // exits when its command is done), so an owner that vanishes is followed a few times.
      for (let attempt = 1; ; attempt += 1) {
        const held = await current();
        try {
          return await fn(held);
        } catch (error) {
          if (!options.isClient(held) || !options.ownerGone(error) || attempt >= OWNER_CHANGES_FOLLOWED)
            throw error;
          if (mode) {
            const stale = mode;
            mode = undefined;
            void stale.then((m) => options.dropClient(m)).catch(() => undefined);
          }
        }
      }
    },
    async detach(): Promise<M | undefined> {
      const closing = mode;
      mode = undefined;
      return closing?.catch(() => undefined);
    },
  };
}
