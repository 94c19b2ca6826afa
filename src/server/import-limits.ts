/**
 * Bounded cost of `POST /api/memories/import`. An 18 MiB nested document used
 * to take 11 s and 1.3 GB to reject while other users waited. The middleware here refuses a hostile
 * document before any expensive work, in this order:
 * 1. `Content-Length` above {@link MAX_IMPORT_BYTES} → 413 without reading the body;
 * 2. the body is read as a stream and abandoned as soon as it passes {@link MAX_IMPORT_BYTES} → 413;
 * 3. while it streams, each chunk is scanned for nesting deeper than {@link MAX_IMPORT_DEPTH}
 *    → 400 (deep nesting is what makes `JSON.parse` and validators slow or overflow the stack);
 *    the scan and UTF-8 decoding work chunk by chunk, so no request blocks others for long;
 * 4. `JSON.parse`, then counts and sizes are checked ({@link IMPORT_LIMITS}) → 413, before any
 *    embedding or database work.
 * The parsed text is handed to the route's validator through Hono's body cache (read once).
 */
import type { MiddlewareHandler } from 'hono';
import { SqlrecallError } from '../core/errors.js';
import type { AppEnv } from './context.js';

/** Largest import body: 4 MiB (an export of 2,000 memories with SQL and history is well below). */
export const MAX_IMPORT_BYTES = 4 * 1024 * 1024;
/** Deepest nesting of arrays/objects: an export document needs 4 (root → memories → memory → tables). */
export const MAX_IMPORT_DEPTH = 8;

/** Counts and sizes of an import document, checked before any work. */
export const IMPORT_LIMITS = {
  /** Memories per document. */
  memories: 2000,
  /** History entries per document. */
  history: 20_000,
  /** Characters of a memory text (the add route allows 2,000; older memories may be longer). */
  textChars: 4000,
  /** Characters of a memory's SQL (the feedback route allows 20,000). */
  sqlChars: 20_000,
  /** Characters of any other string field (history texts, ids, dates). */
  fieldChars: 20_000,
  /** Entries of a memory's `tables` or `columns` list. */
  listEntries: 500,
} as const;

const tooLarge = (message: string) =>
  new SqlrecallError('too_large', message, {
    details: {
      hint: `Split the document: at most ${IMPORT_LIMITS.memories} memories and ${MAX_IMPORT_BYTES / 1024 / 1024} MiB per import.`,
    },
  });

/**
 * Incremental nesting-depth scanner over JSON text (as UTF-8 bytes or as UTF-16 code units: the
 * characters it looks at — `"`, `\\`, `[`, `]`, `{`, `}` — are ASCII and never part of a multi-byte
 * sequence). Feed it chunk by chunk; `exceeded` turns true as soon as the depth passes `limit`.
 */
export class DepthScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** True once nesting went deeper than the limit. */
  exceeded = false;

  constructor(private readonly limit: number) {}

  /** Scans one more chunk; returns {@link exceeded}. */
  feed(chunk: ArrayLike<number> | string): boolean {
    if (this.exceeded) return true;
    const text = typeof chunk === 'string';
    const n = chunk.length;
    for (let i = 0; i < n; i++) {
      const ch = text ? (chunk as string).charCodeAt(i) : (chunk as ArrayLike<number>)[i]!;
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (ch === 0x5c) this.escaped = true;
        else if (ch === 0x22) this.inString = false;
      } else if (ch === 0x22) this.inString = true;
      else if (ch === 0x5b || ch === 0x7b) {
        if (++this.depth > this.limit) {
          this.exceeded = true;
          return true;
        }
      } else if (ch === 0x5d || ch === 0x7d) this.depth--;
    }
    return false;
  }
}

/** True when the JSON text nests arrays/objects deeper than `limit` (outside strings). Linear. */
export function jsonDepthExceeds(text: string, limit: number): boolean {
  return new DepthScanner(limit).feed(text);
}

/**
 * Reads at most `max` bytes of `body`, decoding UTF-8 and scanning the nesting depth chunk by chunk
 * (no 4 MiB synchronous pass). `too_large` when longer (the stream is cancelled), `deep` as soon as
 * the depth passes `depthLimit`, `not_utf8` for invalid UTF-8.
 */
async function readCapped(
  body: ReadableStream<Uint8Array>,
  max: number,
  depthLimit: number,
): Promise<{ text: string } | { problem: 'too_large' | 'deep' | 'not_utf8' }> {
  const reader = body.getReader();
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const scanner = new DepthScanner(depthLimit);
  const parts: string[] = [];
  let size = 0;
  const stop = async (problem: 'too_large' | 'deep' | 'not_utf8') => {
    await reader.cancel().catch(() => undefined);
    return { problem };
  };
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) return stop('too_large');
    if (scanner.feed(value)) return stop('deep');
    try {
      parts.push(decoder.decode(value, { stream: true }));
    } catch {
      return stop('not_utf8');
    }
  }
  try {
    parts.push(decoder.decode());
  } catch {
    return { problem: 'not_utf8' };
  }
  return { text: parts.join('') };
}

/** Lets other requests run between the synchronous phases (decode, scan, parse) of a large body. */
const yieldToOthers = () => new Promise<void>((resolve) => setImmediate(resolve));

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Checks the counts and string sizes of a parsed import document against {@link IMPORT_LIMITS}.
 * Shape errors are left to the route's validator; only sizes are judged here.
 * @throws SqlrecallError `too_large`
 */
export function checkImportSizes(doc: unknown): void {
  if (!isObject(doc)) return;
  const { memories, history } = doc;
  if (Array.isArray(memories) && memories.length > IMPORT_LIMITS.memories)
    throw tooLarge(`An import holds at most ${IMPORT_LIMITS.memories} memories (got ${memories.length}).`);
  if (Array.isArray(history) && history.length > IMPORT_LIMITS.history)
    throw tooLarge(
      `An import holds at most ${IMPORT_LIMITS.history} history entries (got ${history.length}).`,
    );
  const field = (where: string, value: unknown, max: number) => {
    if (typeof value === 'string' && value.length > max)
      throw tooLarge(`${where} is longer than ${max} characters (${value.length}).`);
  };
  for (const [i, m] of (Array.isArray(memories) ? memories : []).entries()) {
    if (!isObject(m)) continue;
    for (const [key, value] of Object.entries(m)) {
      const max =
        key === 'text'
          ? IMPORT_LIMITS.textChars
          : key === 'sql'
            ? IMPORT_LIMITS.sqlChars
            : IMPORT_LIMITS.fieldChars;
      field(`memories[${i}].${key.slice(0, 40)}`, value, max);
      if (Array.isArray(value)) {
        if (value.length > IMPORT_LIMITS.listEntries)
          throw tooLarge(
            `memories[${i}].${key.slice(0, 40)} has more than ${IMPORT_LIMITS.listEntries} entries.`,
          );
        for (const entry of value)
          field(`memories[${i}].${key.slice(0, 40)}[]`, entry, IMPORT_LIMITS.fieldChars);
      }
    }
  }
  for (const [i, h] of (Array.isArray(history) ? history : []).entries()) {
    if (!isObject(h)) continue;
    for (const [key, value] of Object.entries(h))
      field(`history[${i}].${key.slice(0, 40)}`, value, IMPORT_LIMITS.fieldChars);
  }
}

/**
 * Middleware for the import route: size, depth, counts and text sizes checked before any work
 * (see the module comment).
 * @throws SqlrecallError `too_large` (413) or `usage` (400)
 */
export function importLimits(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== 'POST') return next();
    const declared = c.req.header('content-length');
    if (declared !== undefined && Number(declared) > MAX_IMPORT_BYTES)
      throw tooLarge(`An import document is at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB.`);
    const body = c.req.raw.body;
    if (!body) return next();
    const read = await readCapped(body, MAX_IMPORT_BYTES, MAX_IMPORT_DEPTH);
    if ('problem' in read) {
      if (read.problem === 'too_large')
        throw tooLarge(`An import document is at most ${MAX_IMPORT_BYTES / 1024 / 1024} MiB.`);
      if (read.problem === 'deep')
        throw new SqlrecallError(
          'usage',
          `Invalid request: the import document is nested deeper than ${MAX_IMPORT_DEPTH} levels.`,
        );
      throw new SqlrecallError('usage', 'Invalid request: the import document is not UTF-8 text.');
    }
    const text = read.text;
    await yieldToOthers();
    let doc: unknown;
    try {
      doc = JSON.parse(text);
    } catch {
      throw new SqlrecallError('usage', 'Invalid request: the import document is not valid JSON.');
    }
    await yieldToOthers();
    checkImportSizes(doc);
    // Hand the text to the route's validator (Hono reads `c.req.json()` from this cache).
    // Hono declares bodyCache as `Partial<Body>` (text: string) but caches promises at runtime
    // (hono/dist/request.js `cachedBody`): the declaration is wrong, so this one cast stays.
    (c.req as unknown as { bodyCache: Record<string, Promise<unknown>> }).bodyCache.text =
      Promise.resolve(text);
    return next();
  };
}
