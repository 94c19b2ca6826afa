/** Small node:http helpers for the scripted server. */
import type { IncomingMessage, ServerResponse } from 'node:http';

/** Largest request body accepted (a long prompt is well below this). */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** Reads the whole request body as UTF-8 text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new Error('request body too large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Sends one JSON document. */
export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** Sends an Ollama-style error `{ "error": message }`. */
export function sendError(res: ServerResponse, status: number, message: string): void {
  sendJson(res, status, { error: message });
}

/** Starts an NDJSON stream (Ollama's streaming content type). */
export function startNdjson(res: ServerResponse): void {
  res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
}

/** Writes one NDJSON line; false when the client has gone. */
export function writeLine(res: ServerResponse, value: unknown): boolean {
  if (res.destroyed || res.writableEnded) return false;
  res.write(`${JSON.stringify(value)}\n`);
  return true;
}

/** Waits `ms` milliseconds, or less when `signal` aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (ms <= 0 || signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/**
 * Writes a programmed response verbatim (see `ScriptedRawReply`): status, headers, each part with
 * its pauses, then ends, keeps the connection open until the client leaves, or drops the socket.
 */
export async function writeRaw(
  res: ServerResponse,
  raw: {
    status?: number;
    headers?: Record<string, string>;
    parts: Array<string | { delayMs: number }>;
    after?: 'end' | 'open' | 'destroy';
  },
  defaultContentType: string,
  closed: AbortSignal,
): Promise<void> {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(raw.status ?? 200, raw.headers ?? { 'Content-Type': defaultContentType });
  for (const part of raw.parts) {
    if (closed.aborted || res.destroyed) return;
    if (typeof part === 'string') res.write(part);
    else await sleep(part.delayMs, closed);
  }
  const after = raw.after ?? 'end';
  if (after === 'end') res.end();
  else if (after === 'destroy') res.socket?.destroy();
  else
    await new Promise<void>((resolve) => {
      if (closed.aborted) resolve();
      else closed.addEventListener('abort', () => resolve(), { once: true });
    });
}
