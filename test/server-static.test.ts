/**
 * Static hosting of the web UI: files by path, the SPA fallback for HTML navigations, cache headers,
 * and refusal of every path that leaves the web root.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveWeb } from '../src/server/static.js';

let base: string;
let root: string;
let app: Hono;

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'sqlrecall-static-'));
  root = join(base, 'web');
  mkdirSync(join(root, 'assets'), { recursive: true });
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>app</title>');
  writeFileSync(join(root, 'assets', 'app-1234.js'), 'console.log(1)');
  writeFileSync(join(base, 'secret.txt'), 'top secret');
  app = new Hono();
  app.notFound(async (c) => (await serveWeb(c, root)) ?? c.text('nope', 404));
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

const get = (path: string, accept = '*/*', method = 'GET') =>
  app.request(`http://localhost${path}`, { method, headers: { accept } });

describe('serveWeb', () => {
  it('serves index.html at / and files by path with their type and cache policy', async () => {
    const index = await get('/');
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(await index.text()).toContain('<title>app</title>');
    const js = await get('/assets/app-1234.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/javascript/);
    expect(js.headers.get('cache-control')).toContain('immutable');
    expect(await js.text()).toBe('console.log(1)');
  });

  it('answers an HTML navigation to a client route with index.html, but not a missing asset', async () => {
    const route = await get('/conversations/42', 'text/html,application/xhtml+xml');
    expect(route.status).toBe(200);
    expect(await route.text()).toContain('<title>app</title>');
    expect((await get('/assets/missing.js', 'text/html')).status).toBe(404);
    expect((await get('/conversations/42', 'application/json')).status).toBe(404);
  });

  it('HEAD has no body; other methods are not served', async () => {
    const head = await get('/', '*/*', 'HEAD');
    expect(head.status).toBe(200);
    expect(await head.text()).toBe('');
    expect((await get('/', '*/*', 'POST')).status).toBe(404);
  });

  it.each([
    '/../secret.txt',
    '/assets/../../secret.txt',
    '/%2e%2e/secret.txt',
    '/assets/%2e%2e/%2e%2e/secret.txt',
    '/..%2fsecret.txt',
    '/..%5csecret.txt',
    '/assets/..\\..\\secret.txt',
    '//secret.txt',
    '/index.html%00.js',
  ])('never serves outside the root: %s', async (path) => {
    const res = await get(path);
    expect(await res.text()).not.toContain('top secret');
  });
});
