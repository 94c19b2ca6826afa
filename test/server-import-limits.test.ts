/**
 * Bounded import (issue 10, point 4): a body above the documented size is 413 (declared or
 * streamed), nesting deeper than the bound is 400, too many memories or too long a text is 413 —
 * each refused before any work (nothing imported, nothing embedded); a real export still imports.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  IMPORT_LIMITS,
  jsonDepthExceeds,
  MAX_IMPORT_BYTES,
  MAX_IMPORT_DEPTH,
} from '../src/server/import-limits.js';
import { startTestServer, type TestServer } from './support/server-app.js';

let s: TestServer;

const post = async (body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}) => {
  const res = await s.app.request('http://localhost/api/memories/import', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    ...(typeof body === 'string' ? {} : { duplex: 'half' }),
  } as RequestInit);
  // biome-ignore lint/suspicious/noExplicitAny: JSON documents of the API under test
  const json: any = await res.json();
  return { status: res.status, json };
};

const doc = (memories: unknown[], extra: Record<string, unknown> = {}) =>
  JSON.stringify({ format: 'sqlrecall-memory', version: 1, memories, history: [], ...extra });

const memory = (i: number, text = `only orders of region ${i}`) => ({
  id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
  kind: 'preference',
  text,
  status: 'active',
});

const count = async () => {
  const res = await s.app.request('http://localhost/api/memories?status=all');
  return ((await res.json()) as { memories: unknown[] }).memories.length;
};

beforeAll(async () => {
  s = await startTestServer('local');
});
afterAll(async () => {
  await s?.close();
});

describe('POST /api/memories/import is bounded', () => {
  it(`refuses a body above ${MAX_IMPORT_BYTES} bytes with 413, declared or streamed`, async () => {
    const big = doc([memory(1)], { padding: 'x'.repeat(MAX_IMPORT_BYTES) });
    const res = await post(big);
    expect(res.status).toBe(413);
    expect(res.json.error.code).toBe('too_large');
    expect(res.json.error.message).toMatch(/4 MiB/);
    const declared = await post(doc([]), { 'content-length': String(50 * 1024 * 1024) });
    expect(declared.status).toBe(413);
    // A chunked stream that never ends is cut off at the limit (the server stops reading).
    let sent = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    expect((await post(endless)).status).toBe(413);
    expect(sent).toBeLessThan(MAX_IMPORT_BYTES + 1024 * 1024);
    expect(await count()).toBe(0);
  });

  it(`refuses nesting deeper than ${MAX_IMPORT_DEPTH} with 400 before parsing`, async () => {
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const res = await post(doc([memory(1)], { x: '__DEEP__' }).replace('"__DEEP__"', deep));
    expect(res.status).toBe(400);
    expect(res.json.error.message).toMatch(/nested deeper than 8/);
    const nine = `${'['.repeat(8)}1${']'.repeat(8)}`; // depth 9 with the root object
    expect((await post(doc([memory(1)], { x: '__D__' }).replace('"__D__"', nine))).status).toBe(400);
    expect(await count()).toBe(0);
  });

  it('refuses too many memories or too long a text with 413, importing nothing', async () => {
    const many = Array.from({ length: IMPORT_LIMITS.memories + 1 }, (_, i) => memory(i));
    const embedsBefore = s.model.requests.filter((r) => r.path.includes('embed')).length;
    const res = await post(doc(many));
    expect(res.status).toBe(413);
    expect(res.json.error.message).toMatch(/at most 2000 memories/);
    const long = await post(doc([memory(1, 'y'.repeat(IMPORT_LIMITS.textChars + 1))]));
    expect(long.status).toBe(413);
    expect(long.json.error.message).toMatch(/memories\[0\]\.text is longer than 4000/);
    expect(s.model.requests.filter((r) => r.path.includes('embed')).length).toBe(embedsBefore);
    expect(await count()).toBe(0);
  });

  it('still imports a real export document', async () => {
    const res = await post(doc([memory(1), memory(2)]));
    expect(res.status).toBe(200);
    expect(res.json.imported).toBe(2);
    expect(await count()).toBe(2);
  });

  it('jsonDepthExceeds ignores brackets inside strings', () => {
    expect(jsonDepthExceeds('{"a":"[[[[[[[[[[[[[["}', 2)).toBe(false);
    expect(jsonDepthExceeds('{"a":"\\"[[[[","b":[[1]]}', 3)).toBe(false);
    expect(jsonDepthExceeds('{"b":[[[1]]]}', 3)).toBe(true);
  });
});
