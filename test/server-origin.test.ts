/**
 * Local-mode CSRF (issue 10, point 5): every state-changing route refuses a foreign `Origin` or a
 * cross-site `Sec-Fetch-Site` with 403, whatever the content type and also without a body (a plain
 * HTML form can POST to `/api/memories/{id}/restore`); nothing changes. Same-origin requests and
 * non-browser clients (no Origin, no Sec-Fetch-Site) still work.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { crossSiteReason } from '../src/server/origin.js';
import { startTestServer, type TestServer } from './support/server-app.js';

const BASE = 'http://localhost:8484';
let s: TestServer;
let memoryId: string;

const send = (path: string, method: string, headers: Record<string, string> = {}, body?: string) =>
  s.app.request(`${BASE}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) });

// biome-ignore lint/suspicious/noExplicitAny: JSON documents of the API under test
const json = async (res: Response): Promise<any> => res.json();

const state = async () => {
  const res = await send('/api/memories?status=all', 'GET');
  const enabled = await send('/api/memories/enabled', 'GET');
  return JSON.stringify([(await json(res)).memories, await json(enabled)]);
};

beforeAll(async () => {
  s = await startTestServer('local');
  const added = await send(
    '/api/memories',
    'POST',
    { 'content-type': 'application/json' },
    JSON.stringify({ kind: 'preference', text: 'only customers from India' }),
  );
  expect(added.status).toBe(200);
  memoryId = (await json(added)).changes[0].id;
  expect((await send(`/api/memories/${memoryId}`, 'DELETE')).status).toBe(200);
});
afterAll(async () => {
  await s?.close();
});

describe('local mode refuses cross-site changes', () => {
  const foreign: Record<string, string>[] = [
    { origin: 'http://evil.example' },
    { origin: 'http://localhost:3000' },
    { origin: 'https://localhost:8484' },
    { origin: 'null' },
    { 'sec-fetch-site': 'cross-site' },
    { 'sec-fetch-site': 'same-site' },
    { origin: 'http://localhost:8484', 'sec-fetch-site': 'cross-site' },
  ];

  it('a body-less POST /api/memories/{id}/restore from a foreign origin is 403 and restores nothing', async () => {
    const before = await state();
    for (const headers of foreign) {
      const res = await send(`/api/memories/${memoryId}/restore`, 'POST', headers);
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect((await json(res)).error.code).toBe('forbidden');
    }
    expect(await state()).toBe(before);
  });

  it('every state-changing route refuses a foreign Origin whatever the content type', async () => {
    const before = await state();
    const routes: [string, string, string | undefined][] = [
      ['/api/memories', 'POST', JSON.stringify({ kind: 'preference', text: 'only pending orders' })],
      [`/api/memories/${memoryId}`, 'PATCH', JSON.stringify({ text: 'pwned' })],
      [`/api/memories/${memoryId}`, 'DELETE', undefined],
      ['/api/memories/enabled', 'PUT', JSON.stringify({ enabled: false })],
      ['/api/memories/import', 'POST', JSON.stringify({ memories: [] })],
      ['/api/feedback', 'POST', JSON.stringify({ rating: 'up', question: 'q', sql: 'SELECT 1' })],
      ['/api/ask', 'POST', JSON.stringify({ question: 'revenue per customer' })],
    ];
    const types = [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data',
    ];
    const prompts = s.sqlPrompts.length;
    for (const [path, method, body] of routes) {
      for (const type of types) {
        const res = await send(path, method, { origin: 'http://evil.example', 'content-type': type }, body);
        expect(res.status, `${method} ${path} ${type}`).toBe(403);
      }
    }
    expect(s.sqlPrompts.length).toBe(prompts);
    expect(await state()).toBe(before);
  });

  it('same-origin requests and non-browser clients still change state', async () => {
    const same = await send(`/api/memories/${memoryId}/restore`, 'POST', {
      origin: BASE,
      'sec-fetch-site': 'same-origin',
    });
    expect(same.status).toBe(200);
    expect(
      (await send(`/api/memories/${memoryId}`, 'DELETE', { 'sec-fetch-site': 'same-origin' })).status,
    ).toBe(200);
    expect((await send(`/api/memories/${memoryId}/restore`, 'POST')).status).toBe(200);
    // Reads stay open to the page's own scripts (the browser withholds cross-origin responses).
    expect((await send('/api/me', 'GET', { origin: 'http://evil.example' })).status).toBe(200);
  });

  it('crossSiteReason: safe methods pass, typed navigations pass, other origins do not', () => {
    expect(crossSiteReason({ method: 'GET', url: `${BASE}/x`, origin: 'http://evil.example' })).toBeNull();
    expect(crossSiteReason({ method: 'POST', url: `${BASE}/x`, secFetchSite: 'none' })).toBeNull();
    expect(crossSiteReason({ method: 'POST', url: `${BASE}/x`, origin: 'HTTP://LOCALHOST:8484' })).toBeNull();
    expect(crossSiteReason({ method: 'post', url: `${BASE}/x`, origin: 'not a url' })).toMatch(/not a URL/);
    expect(crossSiteReason({ method: 'DELETE', url: `${BASE}/x`, origin: 'http://localhost:8485' })).toMatch(
      /another origin/,
    );
  });
});
