/**
 * A `pg` Client whose connection passes the backend's bytes through a {@link BackendMessageGate}
 * before pg's parser sees them, and contains any exception of that parser.
 *
 * pg 8 reads a connection in `Connection.attachListeners(stream)`, which hands the socket (or, with
 * SSL, the TLS socket, so the bytes are already decrypted) to `pg-protocol`'s `parse`: it listens
 * to the stream's `data` and `end` events and nothing else. The client below replaces that method on
 * its own connection: the parser gets an emitter fed by the gate instead of the socket. An
 * exception thrown while parsing or dispatching a message (which in pg escapes from the socket's
 * `data` handler and ends the process) destroys the socket with that error instead: the client
 * reports it as a connection error to the query in flight, and the pool discards the client.
 * Checked against pg 8.23.1 (`lib/connection.js`); `test/results-wire-gate.test.ts` fails if a
 * pg version stops calling `attachListeners`.
 */
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import { BackendMessageGate, type HeldBack } from './wire-gate.js';

/** The part of pg's internal Connection this replaces. */
interface PgConnection {
  attachListeners(stream: NodeJS.EventEmitter): void;
}

function isPgConnection(value: unknown): value is PgConnection {
  return typeof (value as Partial<PgConnection> | null)?.attachListeners === 'function';
}

/** A stream as pg hands it over (net.Socket or tls.TLSSocket). */
type ByteStream = NodeJS.EventEmitter & { destroy(error?: Error): void };

/** The gate of each gated client's connection, once it is connected. */
const gates = new WeakMap<object, BackendMessageGate>();

const classes = new WeakMap<typeof pg, typeof pg.Client>();

/**
 * The gated Client class of a loaded `pg` module (the module is passed in: the memory store loads
 * pg lazily with `createRequire`), for `new pg.Pool({ Client: gatedClient(pg) })`.
 */
export function gatedClient(pgModule: typeof pg): typeof pg.Client {
  let gated = classes.get(pgModule);
  if (gated) return gated;
  gated = class GatedClient extends pgModule.Client {
    constructor(config?: string | pg.ClientConfig) {
      super(config);
      const connection: unknown = Reflect.get(this, 'connection');
      if (!isPgConnection(connection)) return;
      const attach = connection.attachListeners.bind(connection);
      connection.attachListeners = (stream) => attach(this.gateStream(stream as ByteStream));
    }

    /** An emitter that gives pg's parser the gated bytes of `stream`. */
    private gateStream(stream: ByteStream): NodeJS.EventEmitter {
      const parsed = new EventEmitter();
      const gate = new BackendMessageGate({
        pass: (bytes) =>
          parsed.emit(
            'data',
            Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
          ),
        fail: (error) => stream.destroy(error),
      });
      gates.set(this, gate);
      stream.on('data', (chunk: Buffer) => {
        try {
          gate.push(chunk);
        } catch (error) {
          stream.destroy(error instanceof Error ? error : new Error(String(error)));
        }
      });
      stream.on('end', () => parsed.emit('end'));
      return parsed;
    }
  };
  classes.set(pgModule, gated);
  return gated;
}

/**
 * Runs `run` (one query on `client`) with its rows held to `limitBytes` (see
 * {@link BackendMessageGate.arm}). A client that is not gated runs it unbounded.
 * @returns `run`'s result and the first row held back, if any
 */
export async function withRowBudget<T>(
  client: object,
  limitBytes: number,
  run: () => Promise<T>,
): Promise<{ value: T; heldBack: HeldBack | undefined }> {
  const gate = gates.get(client);
  gate?.arm(limitBytes);
  try {
    const value = await run();
    return { value, heldBack: gate?.take() };
  } finally {
    gate?.take();
  }
}
