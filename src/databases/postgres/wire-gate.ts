/**
 * A filter on the bytes a PostgreSQL backend sends, placed before a driver's message parser (pg's
 * `pg-protocol`, PGlite's own): it reads each message's type and length from its 5-byte header and
 * decides before any byte of the body is decoded into a JavaScript string. Without it one value
 * (`SELECT repeat('x', 600000000)`) is gathered whole by the parser and decoded into a string
 * longer than V8 allows, and the parser's exception, thrown in a socket's `data` handler, ends the
 * process.
 *
 * - A DataRow is measured by its values' bytes (the UTF-8 text of each non-null value, the same
 *   measure as the result budget). While an exchange is armed ({@link BackendMessageGate.arm},
 *   until its ReadyForQuery), a row that would pass the remaining budget, and every row after it,
 *   is skipped in place; the exchange ends normally and {@link BackendMessageGate.take} reports it
 *   (the caller truncates the result, or refuses it when not even the first row fit).
 * - Outside an armed exchange a row larger than {@link MAX_DECODED_ROW_BYTES} fails the statement:
 *   it is replaced by an ErrorResponse (SQLSTATE 54000, routine {@link ROW_LIMIT_ROUTINE}) and the
 *   rest of the exchange up to its ReadyForQuery is dropped, as a server does after an error.
 * - An ErrorResponse or NoticeResponse longer than {@link MAX_NOTICE_BYTES} (PostgreSQL puts the
 *   offending value into "invalid input syntax" messages) is rebuilt with each field clipped.
 * - Any other message longer than {@link MAX_OTHER_MESSAGE_BYTES} cannot come from a sound server:
 *   the connection is failed.
 * Skipped bytes are counted, never kept: memory stays bounded by one socket chunk.
 */

/** `routine` field of the ErrorResponse that replaces a row too large to decode. */
export const ROW_LIMIT_ROUTINE = 'sqlrecall_row_limit';

/**
 * Largest row (bytes of its values) ever decoded: 256 MiB. A JavaScript string holds at most
 * 2^29 - 24 UTF-16 units (V8 on 64-bit), and a UTF-8 byte never decodes to more than one unit, so a
 * row under this size decodes with room for a second copy; a budget set higher does not lift it.
 */
export const MAX_DECODED_ROW_BYTES = 256 * 1024 * 1024;

/** ErrorResponse and NoticeResponse messages longer than this (1 MiB) are rebuilt with clipped fields. */
export const MAX_NOTICE_BYTES = 1024 * 1024;

/** Most bytes kept of one field of a clipped ErrorResponse/NoticeResponse: 4 KiB. */
const CLIPPED_FIELD_BYTES = 4096;

/**
 * Other messages (RowDescription, CommandComplete, ParameterStatus, …) longer than this (16 MiB)
 * fail the connection: PostgreSQL's largest, a RowDescription of 1,664 columns, is ~150 KB.
 */
export const MAX_OTHER_MESSAGE_BYTES = 16 * 1024 * 1024;

const DATA_ROW = 0x44; // 'D'
const ERROR_RESPONSE = 0x45; // 'E'
const NOTICE_RESPONSE = 0x4e; // 'N'
const READY_FOR_QUERY = 0x5a; // 'Z'

/** What an armed exchange held back (see {@link BackendMessageGate.take}). */
export interface HeldBack {
  /** Bytes of the values of the first row that did not fit. */
  rowBytes: number;
  /** The budget that row had left (bytes), at most {@link MAX_DECODED_ROW_BYTES}. */
  remainingBytes: number;
}

/** What to do with the body of the message being read. */
type Action = 'pass' | 'skip' | 'clip';

/** Callbacks of {@link BackendMessageGate}. */
export interface GateSink {
  /** Receives the bytes to parse, in order (views into the input: use or copy them at once). */
  pass(bytes: Uint8Array): void;
  /** Called once when the stream cannot go on (a malformed or oversized message); nothing is passed after. */
  fail(error: Error): void;
}

/** See the module comment. One gate per connection (per backend session), fed every byte in order. */
export class BackendMessageGate {
  private readonly head = new Uint8Array(7);
  private headLength = 0;
  private action: Action = 'pass';
  private remaining = 0;
  private clipped: Uint8Array | undefined;
  private clippedLength = 0;
  private dropUntilReady = false;
  private failed = false;
  private armed: { limit: number; used: number; heldBack?: HeldBack } | undefined;
  private outcome: HeldBack | undefined;

  constructor(private readonly sink: GateSink) {}

  /**
   * Arms the next exchange (every message up to its ReadyForQuery) with a budget of `limitBytes`
   * for its rows' values (capped at {@link MAX_DECODED_ROW_BYTES} per row).
   */
  arm(limitBytes: number): void {
    this.armed = { limit: Math.max(0, limitBytes), used: 0 };
    this.outcome = undefined;
  }

  /** The last armed exchange's first held-back row (undefined: every row passed), and disarms. */
  take(): HeldBack | undefined {
    const outcome = this.armed?.heldBack ?? this.outcome;
    this.armed = undefined;
    this.outcome = undefined;
    return outcome;
  }

  /** Feeds the next bytes from the backend. */
  push(chunk: Uint8Array): void {
    let at = 0;
    let runStart = 0;
    const flush = (end: number): void => {
      if (end > runStart && !this.failed) this.sink.pass(chunk.subarray(runStart, end));
      runStart = end;
    };
    while (at < chunk.length && !this.failed) {
      if (this.remaining > 0) {
        const n = Math.min(this.remaining, chunk.length - at);
        if (this.action !== 'pass') {
          flush(at);
          if (this.action === 'clip') this.keep(chunk.subarray(at, at + n));
          runStart = at + n;
        }
        at += n;
        this.remaining -= n;
        if (this.remaining === 0 && this.action === 'clip') this.emitClipped();
        continue;
      }
      // A message header: type (1 byte), length (4 bytes, itself included), and for a DataRow its
      // column count (2 bytes).
      const headStart = at;
      const carried = this.headLength;
      while (at < chunk.length && this.headLength < this.headNeeded())
        this.head[this.headLength++] = chunk[at++]!;
      if (this.headLength < this.headNeeded()) {
        flush(headStart); // the partial header is withheld until the decision
        runStart = chunk.length;
        break;
      }
      const decision = this.decide();
      this.headLength = 0;
      if (decision === 'fail') return;
      if (decision === 'keep-head') {
        if (carried > 0) {
          // The header began in an earlier chunk: pass its withheld part, then go on from here.
          flush(headStart);
          this.sink.pass(this.head.slice(0, carried));
        }
        continue;
      }
      flush(headStart);
      runStart = at;
      if (decision !== 'drop-head') this.sink.pass(decision);
      if (this.remaining === 0 && this.action === 'clip') this.emitClipped();
    }
    flush(at);
  }

  /** Header bytes needed before deciding: 7 for a DataRow (its column count), else 5. */
  private headNeeded(): number {
    return this.headLength >= 1 && this.head[0] === DATA_ROW ? 7 : 5;
  }

  /**
   * Decides the current message from its header: sets `action` and `remaining` (body bytes left
   * after the header bytes read), and returns whether the header itself is passed as read
   * ('keep-head'), dropped ('drop-head'), replaced by other bytes, or the stream failed.
   */
  private decide(): 'keep-head' | 'drop-head' | 'fail' | Uint8Array {
    const type = this.head[0]!;
    const length = readInt32(this.head, 1);
    if (length < 4 || (type === DATA_ROW && length < 6)) {
      this.failWith(`The database sent a malformed message (type ${typeName(type)}, length ${length}).`);
      return 'fail';
    }
    const headBody = this.headLength - 5; // body bytes already read into the header
    this.remaining = length - 4 - headBody;
    if (type === READY_FOR_QUERY) {
      this.dropUntilReady = false;
      if (this.armed) {
        this.outcome = this.armed.heldBack;
        this.armed = undefined;
      }
      this.action = 'pass';
      return 'keep-head';
    }
    if (this.dropUntilReady) {
      this.action = 'skip';
      return 'drop-head';
    }
    if (type === DATA_ROW) {
      const columns = (this.head[5]! << 8) | this.head[6]!;
      // Each column has a 4-byte length (-1 for NULL, which has no bytes): the rest are its value.
      const rowBytes = length - 4 - 2 - 4 * columns;
      return this.decideRow(Math.max(0, rowBytes));
    }
    if (type === ERROR_RESPONSE || type === NOTICE_RESPONSE) {
      if (length - 4 <= MAX_NOTICE_BYTES) {
        this.action = 'pass';
        return 'keep-head';
      }
      this.action = 'clip';
      this.clipped = new Uint8Array(64 * 1024);
      this.clippedLength = 0;
      this.clippedType = type;
      return 'drop-head';
    }
    if (length - 4 > MAX_OTHER_MESSAGE_BYTES) {
      this.failWith(
        `The database sent a ${formatMiB(length)} message of type ${typeName(type)}, more than the ${formatMiB(MAX_OTHER_MESSAGE_BYTES)} any such message needs; the connection was closed.`,
      );
      return 'fail';
    }
    this.action = 'pass';
    return 'keep-head';
  }

  private clippedType = ERROR_RESPONSE;

  private decideRow(rowBytes: number): 'keep-head' | 'drop-head' | Uint8Array {
    const armed = this.armed;
    if (armed) {
      const left = Math.min(armed.limit - armed.used, MAX_DECODED_ROW_BYTES);
      if (armed.heldBack || rowBytes > left) {
        armed.heldBack ??= { rowBytes, remainingBytes: Math.max(0, left) };
        this.action = 'skip';
        return 'drop-head';
      }
      armed.used += rowBytes;
      this.action = 'pass';
      return 'keep-head';
    }
    if (rowBytes <= MAX_DECODED_ROW_BYTES) {
      this.action = 'pass';
      return 'keep-head';
    }
    this.action = 'skip';
    this.dropUntilReady = true;
    return errorResponse([
      ['S', 'ERROR'],
      ['V', 'ERROR'],
      ['C', '54000'],
      [
        'M',
        `A row of ${formatMiB(rowBytes)} is larger than the ${formatMiB(MAX_DECODED_ROW_BYTES)} one row may have; it was not read`,
      ],
      ['R', ROW_LIMIT_ROUTINE],
    ]);
  }

  private keep(bytes: Uint8Array): void {
    const room = (this.clipped?.length ?? 0) - this.clippedLength;
    if (!this.clipped || room <= 0) return;
    const part = bytes.subarray(0, room);
    this.clipped.set(part, this.clippedLength);
    this.clippedLength += part.length;
  }

  /** Passes the clipped ErrorResponse/NoticeResponse rebuilt from its first bytes. */
  private emitClipped(): void {
    const kept = this.clipped?.subarray(0, this.clippedLength) ?? new Uint8Array(0);
    this.clipped = undefined;
    this.action = 'pass';
    const fields: [string, Uint8Array][] = [];
    let at = 0;
    while (at < kept.length && kept[at] !== 0) {
      const code = String.fromCharCode(kept[at]!);
      const end = kept.indexOf(0, at + 1);
      const value = kept.subarray(at + 1, end === -1 ? kept.length : end);
      fields.push([code, clipUtf8(value, CLIPPED_FIELD_BYTES, end === -1)]);
      if (end === -1) break;
      at = end + 1;
    }
    if (!this.failed) this.sink.pass(message(this.clippedType, fields));
  }

  private failWith(text: string): void {
    if (this.failed) return;
    this.failed = true;
    this.sink.fail(new Error(text));
  }
}

/** `"D"`, or the byte's number when it is not a printable letter. */
function typeName(type: number): string {
  return type >= 0x41 && type <= 0x7a ? `"${String.fromCharCode(type)}"` : `0x${type.toString(16)}`;
}

function formatMiB(bytes: number): string {
  return `${Number((bytes / 1024 / 1024).toFixed(1))} MiB`;
}

function readInt32(bytes: Uint8Array, at: number): number {
  return (bytes[at]! << 24) | (bytes[at + 1]! << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]! | 0;
}

const ELLIPSIS = new Uint8Array([0xe2, 0x80, 0xa6]);

/** `value` cut to at most `max` bytes on a UTF-8 character boundary, with "…" when cut (or `cut`). */
function clipUtf8(value: Uint8Array, max: number, cut: boolean): Uint8Array {
  if (value.length <= max && !cut) return value;
  let end = Math.min(value.length, max);
  // Step back over continuation bytes (10xxxxxx) so no character is split.
  while (end > 0 && end < value.length && (value[end]! & 0xc0) === 0x80) end -= 1;
  const out = new Uint8Array(end + ELLIPSIS.length);
  out.set(value.subarray(0, end));
  out.set(ELLIPSIS, end);
  return out;
}

/** A backend message of `type` with NUL-terminated `fields` (ErrorResponse/NoticeResponse layout). */
function message(type: number, fields: [string, Uint8Array][]): Uint8Array {
  const size = 4 + fields.reduce((sum, [, value]) => sum + 2 + value.length, 0) + 1;
  const out = new Uint8Array(1 + size);
  out[0] = type;
  new DataView(out.buffer).setInt32(1, size);
  let at = 5;
  for (const [code, value] of fields) {
    out[at++] = code.charCodeAt(0);
    out.set(value, at);
    at += value.length;
    out[at++] = 0;
  }
  out[at] = 0;
  return out;
}

/** An ErrorResponse with the given (code, text) fields. */
export function errorResponse(fields: [string, string][]): Uint8Array {
  const encoder = new TextEncoder();
  return message(
    ERROR_RESPONSE,
    fields.map(([code, text]) => [code, encoder.encode(text)]),
  );
}
