/**
 * Static hosting of the built web UI (`dist/web`, made by `vite build web`): files by path, and
 * `index.html` for any other GET that accepts HTML (client-side routes). No CDN at runtime.
 */
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import type { Context } from 'hono';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

async function fileIn(root: string, path: string): Promise<string | null> {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return null;
  }
  if (decoded.includes('\0')) return null;
  const full = normalize(join(root, decoded));
  if (full !== root && !full.startsWith(root.endsWith(sep) ? root : root + sep)) return null;
  try {
    return (await stat(full)).isFile() ? full : null;
  } catch {
    return null;
  }
}

/**
 * Serves `c`'s path from `root`, or index.html for an HTML navigation; null when neither applies
 * (the caller answers 404).
 */
export async function serveWeb(c: Context, root: string): Promise<Response | null> {
  if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return null;
  const path = c.req.path === '/' ? '/index.html' : c.req.path;
  let file = await fileIn(root, path);
  const wantsHtml = (c.req.header('accept') ?? '').includes('text/html');
  if (!file && wantsHtml && !extname(path)) file = await fileIn(root, '/index.html');
  if (!file) return null;
  const body = await readFile(file);
  const immutable = file.includes(`${sep}assets${sep}`);
  return new Response(c.req.method === 'HEAD' ? null : body, {
    status: 200,
    headers: {
      'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    },
  });
}
