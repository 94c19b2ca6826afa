/**
 * A bound on one MCP message (one line of JSON-RPC on stdin). The SDK's stdio transport buffers
 * up to 10 MiB and, past it, closes the transport: `sqlrecall mcp` then ended with exit 0 and no
 * answer. Here stdin passes through {@link limitLines} first: whole lines up to
 * {@link MAX_MCP_LINE_BYTES} go on; a longer one is dropped as it arrives (never held whole) and
 * answered with a JSON-RPC error (-32600 Invalid Request) carrying its `id` when the line's first
 * or last bytes show it, `null` otherwise; the next line is served as usual.
 */
import { Transform } from 'node:stream';

/**
 * Largest MCP message line: 1 MiB, the HTTP API's body limit. The largest legitimate request, a
 * `sql` call at the input limit (100,000 characters), is at most ~600 KB of JSON.
 */
export const MAX_MCP_LINE_BYTES = 1024 * 1024;

/** Bytes kept from each end of a dropped line to find its `id`. */
const EDGE_BYTES = 512;

/** JSON-RPC's Invalid Request error code. */
export const INVALID_REQUEST = -32600;

/** The `id` of a JSON-RPC message from its first or last bytes, or null when neither shows it. */
export function idFromEdges(head: string, tail: string): string | number | null {
  const value = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
  // The SDK writes `{"method":…,"params":…,"jsonrpc":"2.0","id":7}`: a top-level id ends the line.
  const last = new RegExp(String.raw`"id"\s*:\s*${value}\s*\}\s*$`).exec(tail);
  // Others write it first: `{"jsonrpc":"2.0","id":7,…`.
  const first = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${value}`).exec(
    head,
  );
  const raw = last?.[1] ?? first?.[1];
  if (raw === undefined) return null;
  try {
    return JSON.parse(raw) as string | number;
  } catch {
    return null;
  }
}

/**
 * Passes whole lines of `maxBytes` or fewer; calls `oversized` with the `id` (see
 * {@link idFromEdges}) of each longer line, which is dropped.
 */
export function limitLines(
  oversized: (id: string | number | null, bytes: number) => void,
  maxBytes = MAX_MCP_LINE_BYTES,
): Transform {
  let held: Buffer[] = [];
  let heldBytes = 0;
  let dropping = false;
  let droppedBytes = 0;
  let head = Buffer.alloc(0);
  let tail = Buffer.alloc(0);
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      let at = 0;
      while (at < chunk.length) {
        const newline = chunk.indexOf(0x0a, at);
        const end = newline === -1 ? chunk.length : newline + 1;
        const part = chunk.subarray(at, end);
        at = end;
        if (!dropping && heldBytes + part.length > maxBytes + (newline === -1 ? 0 : 1)) {
          // Over the limit: keep only the line's first and last bytes from here on.
          const start = Buffer.concat([...held, part]);
          head = start.subarray(0, EDGE_BYTES);
          tail = start.subarray(Math.max(0, start.length - EDGE_BYTES));
          droppedBytes = start.length;
          held = [];
          heldBytes = 0;
          dropping = true;
        } else if (dropping) {
          droppedBytes += part.length;
          tail = Buffer.concat([tail, part]).subarray(-EDGE_BYTES);
        } else {
          held.push(part);
          heldBytes += part.length;
        }
        if (newline === -1) break;
        if (dropping) {
          dropping = false;
          oversized(idFromEdges(head.toString('utf8'), tail.toString('utf8')), droppedBytes);
        } else {
          this.push(Buffer.concat(held));
          held = [];
          heldBytes = 0;
        }
      }
      done();
    },
    flush(done) {
      if (!dropping && heldBytes > 0) this.push(Buffer.concat(held));
      done();
    },
  });
}

/** The JSON-RPC error line answering an oversized message. */
export function oversizedReply(
  id: string | number | null,
  bytes: number,
  maxBytes = MAX_MCP_LINE_BYTES,
): string {
  const mib = (n: number) => `${Number((n / 1024 / 1024).toFixed(1))} MiB`;
  return `${JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: INVALID_REQUEST,
      message: `The message is ${mib(bytes)}, larger than the ${mib(maxBytes)} one MCP message may have; it was not read.`,
    },
  })}\n`;
}
