/**
 * Serves one embedded PGlite to other local processes over the PostgreSQL wire protocol on a Unix
 * socket, without letting two clients' messages interleave.
 *
 * PGlite is a single backend session. Clients (each a connection from another sqlrecall process,
 * or a PostgreSQL client such as `psql`) and the owning process itself take turns through one
 * {@link Gate}: a client takes the gate with its first message and keeps it until PGlite answers
 * ReadyForQuery with transaction status `I` (idle) — so a whole transaction (BEGIN … COMMIT, with
 * its `pg_advisory_xact_lock`s) or a whole extended-protocol exchange (Parse/Bind/Execute … Sync)
 * runs without anything else in between. Whenever the gate passes to another party, the session is
 * reset for it (`session-gate.ts`): what one client SET, prepared, created as temporary, listened
 * to or locked is gone before another client's statement runs, and each client gets back the
 * settings it SET or asked for in its startup `options` (`-c name=value`).
 *
 * A client that sits idle inside a transaction holds the whole database: while another party waits
 * for it longer than `idleInTransactionMs`, it is disconnected (FATAL 25P03, as PostgreSQL's
 * `idle_in_transaction_session_timeout` does) and its transaction rolled back. A client that
 * disconnects while holding the gate gets its transaction rolled back before the gate is handed on.
 *
 * Not supported: COPY FROM STDIN (PGlite reads COPY data from a file, not the connection),
 * NOTIFY delivery to another client, cancel requests.
 */
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import type { PGlite } from '@electric-sql/pglite';
import { errorResponse } from '../postgres/wire-gate.js';
import { DISK_FULL, type DiskGuard } from './disk-guard.js';
import { streamProtocol } from './raw-stream.js';
import type { Gate, Party, Setting } from './session-gate.js';

export { Gate, pgliteSessionSwitch } from './session-gate.js';

/** Protocol codes of the untyped first messages (PostgreSQL protocol 3.0, "Message Formats"). */
const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
const PROTOCOL_3 = 196608;

/** Name of the socket file: what `pg` opens for `host=<dir>` and port 5432. */
export const SOCKET_FILE_NAME = '.s.PGSQL.5432';

/** A simple-protocol Query message. */
function queryMessage(sql: string): Buffer {
  const body = Buffer.from(`${sql}\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('Q', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * Sync, then roll back: what runs for a client that left while holding the gate (the next party's
 * switch then discards the rest of its session, `session-gate.ts`).
 */
const RESET = Buffer.concat([
  Buffer.from([0x53, 0, 0, 0, 4]), // Sync ends any half-sent extended-protocol exchange
  queryMessage('ROLLBACK'),
]);

/** An ErrorResponse message with severity FATAL. */
export function fatalMessage(sqlState: string, text: string): Buffer {
  const fields = Buffer.from(`SFATAL\0VFATAL\0C${sqlState}\0M${text}\0\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('E', 0, 'latin1');
  head.writeInt32BE(fields.length + 4, 1);
  return Buffer.concat([head, fields]);
}

/**
 * The settings a StartupMessage asks for in its `options` parameter (`-c name=value`,
 * `-cname=value` or `--name=value`, separated by spaces, a backslash escaping the next character,
 * as libpq and the server read it); other startup parameters are not applied (PGlite never did).
 * @throws Error naming the first option that is not a setting
 */
export function startupSettings(message: Buffer): Setting[] {
  const parts = message.subarray(8).toString('utf8').split('\0');
  let options = '';
  for (let i = 0; i + 1 < parts.length; i += 2) if (parts[i] === 'options') options = parts[i + 1] ?? '';
  const words: string[] = [];
  let word = '';
  let escaped = false;
  for (const char of `${options} `) {
    if (escaped) {
      word += char;
      escaped = false;
    } else if (char === '\\') escaped = true;
    else if (char === ' ' || char === '\t' || char === '\n') {
      if (word) words.push(word);
      word = '';
    } else word += char;
  }
  const settings: Setting[] = [];
  for (let i = 0; i < words.length; i += 1) {
    const current = words[i] as string;
    const pair = current === '-c' ? words[++i] : /^-c(.+)$|^--(.+)$/.exec(current)?.slice(1).find(Boolean);
    const at = pair?.indexOf('=') ?? -1;
    if (!pair || at <= 0) throw new Error(`invalid command-line argument in the startup options: ${current}`);
    settings.push([pair.slice(0, at).replace(/-/g, '_'), pair.slice(at + 1)]);
  }
  return settings;
}

/** Transaction status of the last ReadyForQuery in `response`, or undefined when there is none. */
export function lastReadyStatus(response: Uint8Array): string | undefined {
  let status: string | undefined;
  let at = 0;
  const view = Buffer.from(response.buffer, response.byteOffset, response.byteLength);
  while (at + 5 <= view.length) {
    const length = view.readInt32BE(at + 1);
    if (view[at] === 0x5a && length === 5 && at + 6 <= view.length) {
      status = String.fromCharCode(view[at + 5] as number);
    }
    at += 1 + length;
  }
  return status;
}

/** Whether bytes streaming past held an ErrorResponse field `C53100` (disk_full). */
class DiskFullWatch {
  private carry = '';
  seen = false;

  push(bytes: Uint8Array): void {
    if (this.seen) return;
    const text =
      this.carry + Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
    if (text.includes(`\0C${DISK_FULL}\0`)) this.seen = true;
    this.carry = text.slice(-8);
  }
}

/**
 * The transaction status of a response that ends with ReadyForQuery, from its last 6 bytes as
 * they stream past ({@link lastReadyStatus} for a response held whole).
 */
export class ReadyTail {
  private readonly last = new Uint8Array(6);
  private length = 0;

  /** Notes the next bytes of the response. */
  push(bytes: Uint8Array): void {
    if (bytes.length >= 6) {
      this.last.set(bytes.subarray(bytes.length - 6));
      this.length = 6;
      return;
    }
    const keep = Math.min(this.length, 6 - bytes.length);
    this.last.copyWithin(0, this.length - keep, this.length);
    this.last.set(bytes, keep);
    this.length = keep + bytes.length;
  }

  /** `I`, `T` or `E` when the bytes so far end with a ReadyForQuery, else undefined. */
  status(): string | undefined {
    return this.length === 6 ? lastReadyStatus(this.last) : undefined;
  }
}

/**
 * Longest Unix socket path, in bytes, that every supported system accepts: `sun_path` holds 108
 * bytes on Linux and 104 on macOS, NUL included. A longer path is refused before `listen` (on
 * Linux a too-long path made `listen` never call back).
 */
export const MAX_SOCKET_PATH_BYTES = 103;

/** The socket path of `runDir`, and whether it fits {@link MAX_SOCKET_PATH_BYTES}. */
export function socketPathIn(runDir: string): { path: string; fits: boolean } {
  const path = `${runDir}/${SOCKET_FILE_NAME}`;
  return { path, fits: Buffer.byteLength(path) <= MAX_SOCKET_PATH_BYTES };
}

/** Options of {@link startWireMux}. */
export interface WireMuxOptions {
  /**
   * How long a client may sit idle inside a transaction (or a half-sent extended-protocol exchange)
   * while another party waits for the database before it is disconnected and rolled back; default
   * {@link IDLE_IN_TRANSACTION_MS}.
   */
  idleInTransactionMs?: number;
  /** The instance's disk guard: a stopped instance answers every client with its reason. */
  disk?: DiskGuard;
}

/**
 * Default of {@link WireMuxOptions.idleInTransactionMs}: 10 s. Long enough for a person typing
 * the next statement of a short transaction in `psql`; short enough that a forgotten `BEGIN` stalls
 * a question (whose own statement timeout is 30 s by default) for seconds, not for good.
 */
export const IDLE_IN_TRANSACTION_MS = 10_000;

/** A running multiplexer; `close()` stops listening, drops clients and removes the socket file. */
export interface WireMux {
  readonly socketPath: string;
  /**
   * Client connections open now, and when the last one opened or closed (epoch ms; the start of
   * the multiplexer before any): what a keep-warm holder (`sqlrecall hold`) measures idle time by.
   */
  activity(): { clients: number; changedAt: number };
  close(): Promise<void>;
}

/**
 * Listens on `<runDir>/.s.PGSQL.5432` (the directory made 0700, the socket 0600, never TCP) and
 * serves `db` to every client through `gate`. The server and its sockets are unref'd: they never
 * keep a finished process alive.
 * @throws Error when the socket path is longer than {@link MAX_SOCKET_PATH_BYTES}, or from `listen`
 */
export async function startWireMux(
  db: PGlite,
  gate: Gate,
  runDir: string,
  options: WireMuxOptions = {},
): Promise<WireMux> {
  const idleLimitMs = options.idleInTransactionMs ?? IDLE_IN_TRANSACTION_MS;
  const { path: socketPath, fits } = socketPathIn(runDir);
  if (!fits) throw new Error(`The socket path ${socketPath} is longer than ${MAX_SOCKET_PATH_BYTES} bytes.`);
  mkdirSync(runDir, { recursive: true, mode: 0o700 });
  chmodSync(runDir, 0o700);
  rmSync(socketPath, { force: true }); // left by a process that died (its lock was stale)
  const sockets = new Set<Socket>();
  let changedAt = Date.now();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    changedAt = Date.now();
    socket.unref();
    serveClient(db, gate, socket, { idleLimitMs, disk: options.disk }, () => {
      sockets.delete(socket);
      changedAt = Date.now();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => {
      server.off('error', reject);
      resolve();
    });
  });
  chmodSync(socketPath, 0o600);
  server.on('error', () => {});
  server.unref();
  return {
    socketPath,
    activity: () => ({ clients: sockets.size, changedAt }),
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      });
      rmSync(socketPath, { force: true });
    },
  };
}

/** One client connection: frames its messages and runs them through the gate in order. */
function serveClient(
  db: PGlite,
  gate: Gate,
  socket: Socket,
  { idleLimitMs, disk }: { idleLimitMs: number; disk: DiskGuard | undefined },
  onGone: () => void,
): void {
  let buffered: Buffer = Buffer.alloc(0);
  let started = false;
  let batch: Buffer[] = [];
  let release: (() => void) | undefined;
  let chain: Promise<void> = Promise.resolve();
  let gone = false;
  let inFlight = 0;
  let idleTimer: NodeJS.Timeout | undefined;
  /** This connection's turn on the session: its settings come from its startup `options`. */
  const party: Party = { settings: [] };

  const stopIdleTimer = (): void => {
    if (idleTimer) clearTimeout(idleTimer);
    idleTimer = undefined;
  };
  /** Holding the gate with nothing to run: disconnect once someone has waited too long (module comment). */
  const watchIdleHolder = (): void => {
    stopIdleTimer();
    let idleMs = 0;
    const step = Math.min(idleLimitMs, 1_000);
    const check = (): void => {
      idleMs = gate.waiting > 0 ? idleMs + step : 0;
      if (idleMs < idleLimitMs) {
        idleTimer = setTimeout(check, step).unref();
        return;
      }
      idleTimer = undefined;
      if (!gone && socket.writable)
        socket.write(
          fatalMessage(
            '25P03',
            `terminating connection due to idle-in-transaction timeout: another client of this embedded database waited ${Math.round(idleLimitMs / 1000)} s`,
          ),
        );
      socket.destroy();
    };
    idleTimer = setTimeout(check, step).unref();
  };

  const exec = async (message: Buffer): Promise<void> => {
    stopIdleTimer();
    try {
      if (!release) release = await gate.acquire(party);
    } catch {
      // The session could not be switched to this client (PGlite closed, or its disk stopped it;
      // the gate is passed on already): drop the client, with the reason when there is one.
      if (disk?.stopped) refuse(disk);
      else socket.destroy();
      return;
    }
    if (disk?.stopped) {
      // The instance is never entered again (disk-guard.ts): the client gets the reason.
      refuse(disk);
      return;
    }
    // The response goes to the socket chunk by chunk as the backend writes it, through the wire
    // gate (never decoded here: a row too large to decode becomes an error for this client only).
    const tail = new ReadyTail();
    const diskFull = new DiskFullWatch();
    try {
      await streamProtocol(db, new Uint8Array(message), (bytes) => {
        tail.push(bytes);
        if (disk) diskFull.push(bytes);
        if (!gone && socket.writable) socket.write(Buffer.from(bytes));
      });
      if (diskFull.seen) disk?.noteDiskFull();
    } catch {
      // PGlite itself failed (closed under us), or the response could not be passed on: drop
      // this client, hand the gate on.
      release();
      release = undefined;
      socket.destroy();
      return;
    }
    const status = tail.status();
    if (status === 'I' && release) {
      release();
      release = undefined;
    }
  };

  /** The startup message: the session is switched to this client with its options, then PGlite answers. */
  const startup = async (message: Buffer): Promise<void> => {
    try {
      party.settings = startupSettings(message);
      release = await gate.acquire(party);
    } catch (error) {
      if (disk?.stopped) {
        refuse(disk);
        return;
      }
      // Options PostgreSQL would refuse at connection: refused the same way, nothing changed.
      if (socket.writable) socket.write(fatalMessage('22023', (error as Error).message));
      socket.end();
      return;
    }
    await exec(message);
  };

  /** Queues one exchange behind the earlier ones; watches an idle holder once all of them ran. */
  const enqueue = (run: () => Promise<void>): void => {
    inFlight += 1;
    chain = chain.then(run).finally(() => {
      inFlight -= 1;
      if (inFlight === 0 && release && !gone) watchIdleHolder();
    });
  };

  /** Answers with the stopped instance's reason and hands the gate on; the client is dropped. */
  const refuse = (guard: DiskGuard): void => {
    const error = guard.note(new Error('stopped')) as Error;
    if (!gone && socket.writable) {
      socket.write(
        Buffer.concat([
          errorResponse([
            ['S', 'FATAL'],
            ['V', 'FATAL'],
            ['C', DISK_FULL],
            ['M', error.message],
          ]),
          Buffer.from([0x5a, 0, 0, 0, 5, 0x49]), // ReadyForQuery, idle
        ]),
      );
    }
    release?.();
    release = undefined;
    socket.end();
  };

  const finish = (): void => {
    if (gone) return;
    gone = true;
    stopIdleTimer();
    onGone();
    chain = chain.then(async () => {
      if (release && !disk?.stopped) {
        try {
          await streamProtocol(db, new Uint8Array(RESET), () => {});
        } catch {
          // the instance is closing anyway
        }
      }
      gate.forget(party); // nothing of this connection is restored for anyone
      release?.();
      release = undefined;
    });
  };

  const handle = (chunk: Buffer): void => {
    buffered = buffered.length === 0 ? chunk : Buffer.concat([buffered, chunk]);
    for (;;) {
      if (!started) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (buffered.length < length) return;
        const message = buffered.subarray(0, length);
        buffered = buffered.subarray(length);
        const code = message.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write('N');
          continue;
        }
        if (code === CANCEL_REQUEST || code !== PROTOCOL_3) {
          socket.destroy();
          return;
        }
        started = true;
        const first = Buffer.from(message);
        enqueue(() => startup(first));
        continue;
      }
      if (buffered.length < 5) return;
      const length = 1 + buffered.readInt32BE(1);
      if (buffered.length < length) return;
      const message = Buffer.from(buffered.subarray(0, length));
      buffered = buffered.subarray(length);
      const type = String.fromCharCode(message[0] as number);
      if (type === 'X') {
        socket.end();
        finish();
        return;
      }
      batch.push(message);
      // Sync, a simple Query, Flush, CopyDone and CopyFail ask for an answer now; the rest waits.
      if (type === 'S' || type === 'Q' || type === 'H' || type === 'c' || type === 'f') {
        const whole = Buffer.concat(batch);
        batch = [];
        enqueue(() => exec(whole));
      }
    }
  };

  socket.on('data', handle);
  socket.on('error', finish);
  socket.on('close', finish);
}
