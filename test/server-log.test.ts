/**
 * Logs cannot be forged (issue 10, point 7): request paths holding `%0a`, `%0d`, `%1b`, `%00`,
 * an 8-bit CSI or a Unicode line separator reach the access log with every control character
 * escaped; through the pino logger every request is exactly one parseable JSON line, with no raw
 * control character and no password.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, escapeControl, sanitizeLogText } from '../src/core/log.js';
import { startTestServer, type TestServer } from './support/server-app.js';

const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

const HOSTILE_PATHS = [
  '/api/x%0a2026-12-01T00:00:00.000Z GET /api/admin 200 1ms user="root"',
  '/api/x%0d%0aforged',
  '/api/%1b[2J%1b[31mred',
  '/api/nul%00byte',
  '/api/c1%c2%9b31m',
  '/api/sep%e2%80%a8line',
  '/api/memories/%0a/history',
];

let s: TestServer;
beforeAll(async () => {
  s = await startTestServer('local');
});
afterAll(async () => {
  await s?.close();
});

describe('access log', () => {
  it('escapes control characters of hostile paths in every logged field', async () => {
    const from = s.logs.length;
    for (const path of HOSTILE_PATHS) await s.app.request(`http://localhost${path}`);
    const entries = s.logs.slice(from);
    expect(entries).toHaveLength(HOSTILE_PATHS.length);
    for (const entry of entries) {
      for (const value of Object.values(entry)) {
        if (typeof value === 'string') expect(value).not.toMatch(RAW_CONTROL);
      }
    }
    const paths = entries.map((e) => e.path).join(' ');
    expect(paths).toContain('\\x0a2026-12-01T00:00:00.000Z');
    expect(paths).toContain('\\x1b[2J');
    expect(paths).toContain('nul\\x00byte');
  });

  it('through pino: one JSON line per request, no raw control character, no password', async () => {
    let out = '';
    const sink = new Writable({
      write(chunk, _enc, done) {
        out += chunk.toString();
        done();
      },
    });
    const logger = createLogger({ level: 'info', destination: sink });
    const from = s.logs.length;
    for (const path of HOSTILE_PATHS) await s.app.request(`http://localhost${path}`);
    for (const entry of s.logs.slice(from)) logger.info(entry, 'request');
    logger.info(
      { url: 'postgres://u@h/db?password=Pw9xLogSecret' },
      'db %s',
      'host=h password=Pw9xLogSecret2',
    );
    logger.warn('a\nforged line\u001b[31m');
    logger.debug('not written at level info');
    await new Promise((r) => setImmediate(r));
    const lines = out.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(HOSTILE_PATHS.length + 2);
    expect(out).not.toContain('Pw9xLogSecret');
    for (const line of lines) {
      expect(line).not.toMatch(RAW_CONTROL);
      const doc = JSON.parse(line);
      expect(typeof doc.level).toBe('number');
      expect(typeof doc.time).toBe('string');
    }
    const requests = lines.slice(0, HOSTILE_PATHS.length).map((l) => JSON.parse(l));
    expect(requests.every((r) => r.msg === 'request' && r.method === 'GET' && r.status >= 400)).toBe(true);
    expect(JSON.parse(lines.at(-1) as string).msg).toBe('a\\x0aforged line\\x1b[31m');
  });

  it('escapeControl is unambiguous and leaves printable text alone', () => {
    expect(escapeControl('GET /api/me ünï 🧠')).toBe('GET /api/me ünï 🧠');
    expect(escapeControl('a\\x0ab')).toBe('a\\\\x0ab');
    expect(escapeControl('a\nb')).toBe('a\\x0ab');
    expect(escapeControl('\u202eevil')).toBe('\\u202eevil');
    expect(sanitizeLogText('x'.repeat(5000)).length).toBeLessThan(2010);
    expect(sanitizeLogText('postgres://u:Pw9x@h/db')).toBe('postgres://u:***@h/db');
  });
});
