/**
 * Static hosting of the built web UI (`dist/web`, made by `vite build web`): files by path through
 * `@hono/node-server`'s `serveStatic` (which refuses `..` segments, doubled or back slashes and
 * percent-encoded tricks), and `index.html` for any other GET that accepts HTML (client-side routes).
 * No CDN at runtime.
 */
import { extname } from 'node:path';
import { serveStatic } from '@hono/node-server/serve-static';
import type { Context, MiddlewareHandler } from 'hono';

/** Cache policy: hashed files under `/assets/` never change; everything else is revalidated. */
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** Runs one `serveStatic` middleware; its response, or null when it passed the request on. */
async function tryServe(handler: MiddlewareHandler, c: Context): Promise<Response | null> {
  let passed = false;
  const res = await handler(c, async () => {
    passed = true;
  });
  return passed || !(res instanceof Response) ? null : res;
}

/**
 * Serves `c`'s path from `root` (an absolute directory), or `root/index.html` for an HTML
 * navigation to a path without an extension; null when neither applies (the caller answers 404).
 * Only GET and HEAD are served.
 */
export async function serveWeb(c: Context, root: string): Promise<Response | null> {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return null;
  let res = await tryServe(serveStatic({ root }), c);
  const wantsHtml = (c.req.header('accept') ?? '').includes('text/html');
  if (!res && wantsHtml && !extname(c.req.path)) {
    res = await tryServe(serveStatic({ root, path: 'index.html' }), c);
  }
  if (!res) return null;
  const immutable =
    !res.headers.get('content-type')?.startsWith('text/html') && c.req.path.startsWith('/assets/');
  res.headers.set('Cache-Control', immutable ? IMMUTABLE : 'no-cache');
  return res;
}
