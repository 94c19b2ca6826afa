/**
 * The one redaction function (issue 10, point 3): a property run over connection-string shapes
 * (URL user info, `?password=`/`sslpassword=`/`sslkey=` parameters, keyword/value strings with
 * quoted values, PGPASSWORD) embedded in messages, JSON and log lines — the secret never survives,
 * and the parts that are not secret (host, database) stay readable. Plus GET /api/settings and a
 * connection error with a `?password=` URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { MASK, maskUrl, redactSecrets, redactValue } from '../src/core/redact.js';
import { openDatabase } from '../src/databases/open.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';

/** A password: a recognisable prefix (so it is never a substring of the rest) + random characters. */
const password = fc
  .string({ minLength: 0, maxLength: 24, unit: 'grapheme' })
  .map((rest) => `Pw9x${rest.replace(/\s/g, '')}`);
const safePassword = fc.stringMatching(/^[A-Za-z0-9._~!$*()+-]{0,20}$/).map((rest) => `Pw9x${rest}`);
const host = fc.constantFrom('db.example.com', 'localhost', '10.0.0.7', '[::1]');
const db = fc.constantFrom('shop', 'analytics', 'x');
const user = fc.constantFrom('analyst', 'u', '', 'svc.reader');
const scheme = fc.constantFrom('postgres', 'postgresql', 'POSTGRES');
const tail = fc.constantFrom('', '?sslmode=require', '?application_name=app&connect_timeout=5');

/** A connection string carrying `pw`, and whether its host/db must stay visible. */
const shapes = fc.oneof(
  // user info, percent-encoded password
  fc.tuple(scheme, user, password, host, db, tail).map(([s, u, p, h, d, t]) => ({
    text: `${s}://${u}:${encodeURIComponent(p)}@${h}:5432/${d}${t}`,
    secrets: [p, encodeURIComponent(p)],
    visible: [h, d],
  })),
  // user info, raw password (may hold @ / : ? #): masked, perhaps over-masked, never leaked
  fc
    .tuple(scheme, user, password, host, db)
    .map(([s, u, p, h, d]) => ({ text: `${s}://${u}:${p}@${h}/${d}`, secrets: [p], visible: [] })),
  // query parameters
  fc
    .tuple(
      scheme,
      host,
      db,
      fc.constantFrom('password', 'sslpassword', 'PASSWORD', 'sslkey'),
      password,
      fc.constantFrom('', '&sslmode=require', '#frag'),
      fc.boolean(),
    )
    .map(([s, h, d, k, p, t, first]) => ({
      text: first
        ? `${s}://analyst@${h}/${d}?${k}=${encodeURIComponent(p)}${t}`
        : `${s}://${h}/${d}?sslmode=require&${k}=${encodeURIComponent(p)}${t}`,
      secrets: [p, encodeURIComponent(p)],
      visible: [h, d],
    })),
  // keyword/value, bare or quoted values
  fc
    .tuple(
      host,
      db,
      fc.constantFrom('password', 'sslpassword', 'Password'),
      safePassword,
      fc.constantFrom('bare', 'single', 'double', 'spaced'),
    )
    .map(([h, d, k, p, form]) => {
      const value =
        form === 'bare'
          ? p
          : form === 'single'
            ? `'${p} with \\' quote'`
            : form === 'double'
              ? `"${p} and space"`
              : `'${p}'`;
      const sep = form === 'spaced' ? ' = ' : '=';
      return { text: `host=${h} port=5432 ${k}${sep}${value} dbname=${d}`, secrets: [p], visible: [h, d] };
    }),
  // environment and key files
  fc.tuple(safePassword).map(([p]) => ({ text: `PGPASSWORD=${p} psql`, secrets: [p], visible: ['psql'] })),
  fc.tuple(safePassword).map(([p]) => ({
    text: `sslkey=/home/me/.keys/${p}.pem sslmode=verify-full`,
    secrets: [p],
    visible: ['verify-full'],
  })),
);

/** Where a connection string may appear. */
const wrappers = fc.constantFrom(
  (s: string) => s,
  (s: string) => `connect to "${s}" failed: connection refused`,
  (s: string) => `Cannot connect to ${s}.`,
  (s: string) => JSON.stringify({ database: s, other: 'x' }),
  (s: string) => `url=${s}\nnext line`,
);

describe('redactSecrets', () => {
  it('masks the secret of every connection-string shape, wherever it appears', () => {
    fc.assert(
      fc.property(shapes, wrappers, ({ text, secrets, visible }, wrap) => {
        const out = redactSecrets(wrap(text));
        for (const secret of secrets) expect(out).not.toContain(secret);
        expect(out).toContain(MASK);
        for (const v of visible) expect(out).toContain(v);
        expect(redactSecrets(out)).toBe(out);
      }),
      { numRuns: 2000 },
    );
  });

  it('leaves text without secrets alone', () => {
    for (const text of [
      'password authentication failed for user "analyst"',
      'postgres://analyst@db.example.com:5432/shop?sslmode=require',
      'SELECT count(*) FROM orders',
      'pglite:/tmp/shop',
      'http://127.0.0.1:11434',
    ])
      expect(redactSecrets(text)).toBe(text);
  });

  it('keeps the user name of a URL and masks only the password', () => {
    expect(maskUrl('postgres://u:secret@h/db')).toBe('postgres://u:***@h/db');
    expect(maskUrl('postgres://u@h/db?password=secret&sslmode=require')).toBe(
      'postgres://u@h/db?password=***&sslmode=require',
    );
    expect(maskUrl("host=h password='a b\\'c' dbname=d")).toBe("host=h password='***' dbname=d");
  });

  it('redactValue masks strings inside objects and secret-named keys', () => {
    const out = redactValue({ a: ['postgres://u:pw1234@h/d'], nested: { password: 'pw5678' }, n: 3 });
    expect(JSON.stringify(out)).not.toMatch(/pw1234|pw5678/);
    expect(out.n).toBe(3);
  });
});

describe('connection errors never carry a password in any URL form', () => {
  it.each([
    'postgres://analyst@127.0.0.1:1/shop?password=Pw9xQuerySecret',
    'postgres://analyst:Pw9xQuerySecret@127.0.0.1:1/shop',
    'postgres://127.0.0.1:1/shop?sslmode=disable&password=Pw9xQuerySecret',
  ])('%s', async (url) => {
    let message = '';
    try {
      const db = await openDatabase(url);
      await db.execute('SELECT 1', { maxRows: 1, timeoutMs: 2000 });
      await db.close();
    } catch (error) {
      message = `${(error as Error).message} ${JSON.stringify((error as { details?: unknown }).details ?? {})}`;
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('Pw9xQuerySecret');
  });
});

describe('GET /api/settings never shows a password in any URL form', () => {
  it.each([
    'postgres://analyst@127.0.0.1:1/shop?password=Pw9xSettingsSecret&sslmode=disable',
    'postgres://analyst:Pw9xSettingsSecret@127.0.0.1:1/shop',
    'postgresql://127.0.0.1:1/shop?sslpassword=Pw9xSettingsSecret&sslkey=/keys/Pw9xSettingsSecret.pem',
  ])('%s', async (url) => {
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-redact-'));
    const config = loadConfig({
      env: {},
      cwd: home,
      flags: { databaseUrl: url, home, user: 'me', logLevel: 'silent' },
    });
    const client = memoryClient(config);
    const runtime = new Runtime(config);
    try {
      const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'local', user: 'me' }, client }));
      const res = await app.request('http://localhost/api/settings');
      const text = await res.text();
      expect(res.status).toBe(200);
      expect(text).toContain('127.0.0.1');
      expect(text).not.toContain('Pw9xSettingsSecret');
    } finally {
      await runtime.close();
      await client.close().catch(() => undefined);
      rmSync(home, { recursive: true, force: true });
    }
  });
});
