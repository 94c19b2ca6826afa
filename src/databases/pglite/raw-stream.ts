/**
 * PGlite's protocol bytes, read as they leave the WebAssembly backend, before any parser decodes
 * them. `execProtocolRaw` copies a whole response into one buffer and decodes every DataRow into
 * strings on the way (PGlite's own parser, run inside the backend's write callback); a 600 MB value
 * then throws there. `execProtocolRawStream` hands each chunk the backend writes to a callback
 * instead: here it goes through a {@link BackendMessageGate} first.
 *
 * PGlite 0.5.14's `execProtocolRawStream` leaves its callback installed after it returns, so a
 * later `execProtocolRaw` on the same instance would send its output there: every raw exchange of
 * sqlrecall goes through {@link streamProtocol}, which installs its own callback each time, and
 * PGlite's own `query`/`exec` install theirs (`execProtocolStream`).
 */
import type { PGlite } from '@electric-sql/pglite';
import type { RawResult } from '../postgres/execute.js';
import { BackendMessageGate, type HeldBack } from '../postgres/wire-gate.js';

/**
 * Sends `message` (one or more frontend messages) to `db` and feeds every byte of the response
 * through a gate to `pass`. Exceptions of `pass` are kept, never thrown into the backend's write
 * callback (where PGlite would swallow them mid-statement).
 * @param arm the gate's budget for the exchange (see {@link BackendMessageGate.arm}); undefined:
 *   only the ceilings of `wire-gate.ts`
 * @returns the first held-back row, if any
 * @throws the first error of `pass` or of the gate, after the exchange ended
 */
export async function streamProtocol(
  db: PGlite,
  message: Uint8Array,
  pass: (bytes: Uint8Array) => void,
  options: { arm?: number; syncToFs?: boolean } = {},
): Promise<HeldBack | undefined> {
  let failure: unknown;
  let failed = false;
  const fail = (error: unknown): void => {
    if (!failed) {
      failed = true;
      failure = error;
    }
  };
  const gate = new BackendMessageGate({
    pass: (bytes) => {
      if (failed) return;
      try {
        pass(bytes);
      } catch (error) {
        fail(error);
      }
    },
    fail,
  });
  if (options.arm !== undefined) gate.arm(options.arm);
  await db.execProtocolRawStream(message, {
    syncToFs: options.syncToFs ?? true,
    onRawData: (chunk) => {
      try {
        gate.push(chunk);
      } catch (error) {
        fail(error);
      }
    },
  });
  if (failed) throw failure;
  return gate.take();
}

type Protocol = typeof import('@electric-sql/pglite')['protocol'];
let protocolModule: Promise<Protocol> | undefined;

/** PGlite's protocol serializer and parser (loaded with PGlite itself). */
function protocol(): Promise<Protocol> {
  protocolModule ??= import('@electric-sql/pglite').then((m) => m.protocol);
  return protocolModule;
}

/**
 * Runs ONE statement on the extended protocol (Parse, Bind with `params` as text, Describe,
 * Execute, Sync), rows as the server's text, with rows past `limitBytes` held back before decoding (see `RawResult.heldBack`).
 * Inside the caller's transaction; the caller holds the instance (its gate or a private instance).
 * @throws PGlite's `DatabaseError` (with `code`, SQLSTATE) for an error of the statement
 */
export async function queryRawStreamed(
  db: PGlite,
  text: string,
  limitBytes: number,
  params: readonly string[] = [],
): Promise<RawResult> {
  const { serialize, Parser } = await protocol();
  const parts = [
    serialize.parse({ text }),
    serialize.bind(params.length > 0 ? { values: [...params] } : {}),
    serialize.describe({ type: 'P' }),
    serialize.execute({}),
    serialize.sync(),
  ];
  const input = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0));
  let at = 0;
  for (const part of parts) {
    input.set(part, at);
    at += part.length;
  }
  const parser = new Parser();
  let fields: RawResult['fields'] = [];
  const rows: (string | null)[][] = [];
  let error: unknown;
  const heldBack = await db.runExclusive(() =>
    streamProtocol(
      db,
      input,
      // The chunk is a view into the backend's memory, valid only during the callback: copied.
      (bytes) =>
        parser.parse(bytes.slice(), (msg) => {
          if (msg.name === 'rowDescription') {
            const description = msg as unknown as { fields: { name: string; dataTypeID: number }[] };
            fields = description.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID }));
          } else if (msg.name === 'dataRow') {
            rows.push((msg as unknown as { fields: (string | null)[] }).fields);
          } else if (msg.name === 'error') {
            error ??= msg;
          }
        }),
      { arm: limitBytes, syncToFs: false },
    ),
  );
  if (error !== undefined) throw error;
  return { fields, rows, ...(heldBack ? { heldBack } : {}) };
}
