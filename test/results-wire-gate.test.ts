/**
 * No value can take the process down: rows are measured on the wire, before a driver decodes them
 * (`src/databases/postgres/wire-gate.ts`). The gate itself on synthetic bytes (every chunk split,
 * the ceilings), then both engines and the shared socket with a small budget (1 MiB) and a 5 MiB
 * value: the row is held back undecoded (the parsers never see its bytes), and a parser's
 * exception fails the statement, not the process. The real 600 MB case is in
 * docs/perf/large-values.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite, protocol } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { Gate, startWireMux, type WireMux } from '../src/databases/pglite/wire-mux.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { gatedClient } from '../src/databases/postgres/gated-client.js';
import {
  BackendMessageGate,
  MAX_DECODED_ROW_BYTES,
  MAX_NOTICE_BYTES,
  MAX_OTHER_MESSAGE_BYTES,
} from '../src/databases/postgres/wire-gate.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';

const MiB = 1024 * 1024;

/** A backend message: type letter, body. */
function msg(type: string, body: Uint8Array | number[]): Buffer {
  const bytes = Buffer.from(body instanceof Uint8Array ? body : Uint8Array.from(body));
  const head = Buffer.alloc(5);
  head.write(type, 0, 'latin1');
  head.writeInt32BE(bytes.length + 4, 1);
  return Buffer.concat([head, bytes]);
}

/** A DataRow of text values (null: SQL NULL). */
function dataRow(values: (string | null)[]): Buffer {
  const parts: Buffer[] = [Buffer.from([values.length >> 8, values.length & 0xff])];
  for (const value of values) {
    const len = Buffer.alloc(4);
    if (value === null) {
      len.writeInt32BE(-1);
      parts.push(len);
    } else {
      const text = Buffer.from(value, 'utf8');
      len.writeInt32BE(text.length);
      parts.push(len, text);
    }
  }
  return msg('D', Buffer.concat(parts));
}

const READY = msg('Z', [0x54]); // 'T'
const COMPLETE = msg('C', Buffer.from('FETCH 3\0'));

/** Splits concatenated messages into [type, body length] pairs. */
function frames(bytes: Buffer): [string, number][] {
  const out: [string, number][] = [];
  let at = 0;
  while (at + 5 <= bytes.length) {
    const length = bytes.readInt32BE(at + 1);
    out.push([String.fromCharCode(bytes[at]!), length - 4]);
    at += 1 + length;
  }
  expect(at).toBe(bytes.length);
  return out;
}

/** Runs `input` through a gate in chunks of `size` bytes; the bytes it passed and its failure. */
function through(
  input: Buffer,
  size: number,
  arm?: number,
): { out: Buffer; failure?: Error; gate: BackendMessageGate } {
  const parts: Buffer[] = [];
  let failure: Error | undefined;
  const gate = new BackendMessageGate({
    pass: (bytes) => parts.push(Buffer.from(bytes)),
    fail: (error) => {
      failure = error;
    },
  });
  if (arm !== undefined) gate.arm(arm);
  for (let at = 0; at < input.length; at += size) gate.push(input.subarray(at, at + size));
  return { out: Buffer.concat(parts), failure, gate };
}

describe('the wire gate on synthetic bytes', () => {
  const stream = Buffer.concat([
    msg('T', Buffer.from('\0\0')),
    dataRow(['a', null, 'ü']),
    dataRow(['bb', 'c']),
    dataRow(['ddd']),
    COMPLETE,
    READY,
  ]);

  it('passes every message unchanged, whatever the chunk size, when nothing is over a limit', () => {
    for (let size = 1; size <= stream.length; size += 1) expect(through(stream, size).out).toEqual(stream);
  });

  it('an armed exchange holds back the row that passes the budget and every row after it', () => {
    // rows: 1 + 2 (ü) = 3 bytes, 3 bytes, 3 bytes; a budget of 6 keeps two
    for (let size = 1; size <= stream.length; size += 1) {
      const { out, gate } = through(stream, size, 6);
      expect(frames(out).map(([type]) => type)).toEqual(['T', 'D', 'D', 'C', 'Z']);
      expect(gate.take()).toEqual({ rowBytes: 3, remainingBytes: 0 });
    }
    const { out, gate } = through(stream, 7, 5);
    expect(frames(out).map(([type]) => type)).toEqual(['T', 'D', 'C', 'Z']);
    expect(gate.take()).toEqual({ rowBytes: 3, remainingBytes: 2 });
    // the next exchange is not armed: everything passes
    gate.push(stream);
    expect(gate.take()).toBeUndefined();
  });

  it('a row over the ceiling fails the statement: an ErrorResponse, then nothing up to ReadyForQuery', () => {
    const rowBytes = MAX_DECODED_ROW_BYTES + 10;
    const head = Buffer.alloc(11);
    head.write('D', 0, 'latin1');
    head.writeInt32BE(4 + 2 + 4 + rowBytes, 1);
    head.writeInt16BE(1, 5);
    head.writeInt32BE(rowBytes, 7);
    const parts: Buffer[] = [];
    const gate = new BackendMessageGate({ pass: (b) => parts.push(Buffer.from(b)), fail: () => {} });
    gate.push(head);
    const zeros = Buffer.alloc(MiB);
    let left = rowBytes;
    while (left > 0) {
      gate.push(zeros.subarray(0, Math.min(left, zeros.length)));
      left -= Math.min(left, zeros.length);
    }
    gate.push(Buffer.concat([dataRow(['x']), COMPLETE, READY, dataRow(['after'])]));
    const out = Buffer.concat(parts);
    expect(frames(out).map(([type]) => type)).toEqual(['E', 'Z', 'D']);
    const text = out.toString('latin1');
    expect(text).toContain('C54000');
    expect(text).toContain('Rsqlrecall_row_limit');
    expect(text).toContain('256 MiB');
    expect(out.length).toBeLessThan(1000);
  });

  it('an error message longer than 1 MiB is rebuilt with its fields clipped', () => {
    const huge = `invalid input syntax for type integer: "${'x'.repeat(MAX_NOTICE_BYTES + 10)}"`;
    const error = msg('E', Buffer.from(`SERROR\0C22P02\0M${huge}\0Fnumutils.c\0\0`));
    const { out } = through(Buffer.concat([error, READY]), 65_536);
    const [first] = frames(out);
    expect(first?.[0]).toBe('E');
    expect(first![1]).toBeLessThan(5000);
    const text = out.toString('utf8');
    expect(text).toContain('C22P02');
    expect(text).toContain('Minvalid input syntax for type integer: "xxx');
    expect(text).toContain('…');
  });

  it('another message longer than 16 MiB fails the stream', () => {
    const head = Buffer.alloc(5);
    head.write('T', 0, 'latin1');
    head.writeInt32BE(MAX_OTHER_MESSAGE_BYTES + 100, 1);
    const { out, failure } = through(head, 5);
    expect(out.length).toBe(0);
    expect(failure?.message).toMatch(/message of type "T"/);
  });
});

/**
 * Bytes the drivers' parsers received while `fn` ran: PGlite's protocol parser, and pg's
 * (`pg-protocol`, loaded the way pg loads it).
 */
async function parsedBytes(fn: () => Promise<unknown>): Promise<number> {
  const pgProtocol = createRequire(createRequire(import.meta.url).resolve('pg'))(
    'pg-protocol/dist/parser',
  ) as {
    Parser: { prototype: { parse(buffer: Uint8Array, cb: unknown): void } };
  };
  let bytes = 0;
  const count = (buffer: Uint8Array) => {
    bytes += buffer.byteLength;
  };
  const parsers = [protocol.Parser.prototype, pgProtocol.Parser.prototype];
  const spies = parsers.map((proto) => {
    const original = proto.parse;
    return vi.spyOn(proto, 'parse').mockImplementation(function (this: unknown, buffer, cb) {
      count(buffer as Uint8Array);
      return original.call(this, buffer as never, cb as never);
    });
  });
  try {
    await fn().catch(() => undefined);
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return bytes;
}

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

const FIVE_MIB = `SELECT repeat('x', ${5 * MiB}) AS big`;

describe.each(ENGINES)('values larger than the budget on %s', (engine) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(engine, 'sqlrecall_wire_gate');
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it('a 5 MiB value under a 1 MiB budget is result_too_large, and its bytes never reach a parser', async () => {
    let error: SqlrecallError | undefined;
    const bytes = await parsedBytes(async () => {
      error = await failure(
        db.connector.execute(FIVE_MIB, { maxRows: 10, timeoutMs: 20_000, maxBytes: MiB }),
      );
    });
    expect(error?.code).toBe('result_too_large');
    expect(error?.exitCode).toBe(4);
    expect(error?.httpStatus).toBe(422);
    expect(error?.message).toContain('(5 MiB)');
    expect(error?.message).toContain('1 MiB');
    expect(bytes).toBeLessThan(MiB);
  });

  it('rows before the one that does not fit are kept; later rows are never decoded', async () => {
    let result: Awaited<ReturnType<TestDatabase['connector']['execute']>> | undefined;
    const sql = `SELECT g, repeat('y', CASE WHEN g < 3 THEN 1000 ELSE ${3 * MiB} END) AS v FROM generate_series(1, 6) g`;
    const bytes = await parsedBytes(async () => {
      result = await db.connector.execute(sql, { maxRows: 100, timeoutMs: 20_000, maxBytes: MiB });
    });
    expect(result).toMatchObject({ rowCount: 2, truncated: true, truncatedReason: 'max_bytes' });
    expect(bytes).toBeLessThan(MiB);
  });

  it("an error message carrying a long value is clipped, the error's code kept", async () => {
    const error = await failure(
      db.connector.execute(`SELECT repeat('x', ${2 * MiB})::int AS n`, { maxRows: 1, timeoutMs: 20_000 }),
    );
    expect(error.code).toBe('db_query');
    expect(error.details).toMatchObject({ sqlState: '22P02' });
    expect(error.message).toContain('invalid input syntax');
    expect(error.message.length).toBeLessThan(10_000);
  });

  it('the connection is usable afterwards', async () => {
    const result = await db.connector.execute('SELECT 1 AS one', { maxRows: 1, timeoutMs: 10_000 });
    expect(result.rows).toEqual([[1]]);
  });
});

describe('the shared socket (an owner serving PGlite to another process)', () => {
  let dir: string;
  let owner: PGlite;
  let mux: WireMux;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-gate-'));
    owner = new PGlite(inMemoryPgliteOptions());
    await owner.waitReady;
    mux = await startWireMux(owner, new Gate(), join(dir, 'run'));
  });
  afterAll(async () => {
    await mux?.close();
    await owner?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a 5 MiB value is held back by the client; the owner decodes nothing and keeps serving', async () => {
    const connector = createPostgresConnector({
      url: 'postgres://postgres@localhost/postgres',
      socketDir: join(dir, 'run'),
      cancel: false,
    });
    try {
      let error: SqlrecallError | undefined;
      const bytes = await parsedBytes(async () => {
        error = await failure(connector.execute(FIVE_MIB, { maxRows: 10, timeoutMs: 20_000, maxBytes: MiB }));
      });
      expect(error?.code).toBe('result_too_large');
      expect(bytes).toBeLessThan(MiB);
      const after = await connector.execute('SELECT 2 AS two', { maxRows: 1, timeoutMs: 10_000 });
      expect(after.rows).toEqual([[2]]);
      // The owner's own queries still get their results after the streamed exchanges.
      expect((await owner.query<{ n: number }>('SELECT 3 AS n')).rows).toEqual([{ n: 3 }]);
    } finally {
      await connector.close();
    }
  }, 60_000);
});

describe('an exception inside pg’s parser', () => {
  let server: Server;
  let port = 0;
  afterEach(() => {
    server?.close();
  });

  it('fails the query with an error; the process goes on', async () => {
    // A fake server: trust login, then answers any query with a RowDescription that claims a
    // field it does not contain (pg-protocol reads past the end of its buffer and throws).
    server = createServer((socket) => {
      let started = false;
      socket.on('data', () => {
        if (!started) {
          started = true;
          socket.write(Buffer.concat([msg('R', [0, 0, 0, 0]), msg('Z', [0x49])]));
          return;
        }
        socket.write(msg('T', [0, 1]));
      });
      socket.on('error', () => {});
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    port = typeof address === 'object' && address ? address.port : 0;
    const uncaught = vi.fn();
    process.on('uncaughtException', uncaught);
    const Client = gatedClient(pg);
    const client = new Client({ host: '127.0.0.1', port, user: 'x', database: 'x', query_timeout: 5000 });
    client.on('error', () => {});
    try {
      await client.connect();
      await expect(client.query('SELECT 1')).rejects.toThrow();
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(uncaught).not.toHaveBeenCalled();
    } finally {
      process.off('uncaughtException', uncaught);
      await client.end().catch(() => undefined);
    }
  });
});
