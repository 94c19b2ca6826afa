/**
 * Bounded everywhere: `sql` takes at most the statement size `POST /api/sql` takes (argument and
 * stdin; a usage error naming the limit, exit 2), and `sqlrecall mcp` answers a message line over
 * its limit with a JSON-RPC error and goes on serving (it used to end with exit 0, no answer).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SQL_CHARS } from '../src/agent/run-sql.js';
import { runCli } from '../src/cli/program.js';
import { idFromEdges, limitLines, MAX_MCP_LINE_BYTES } from '../src/mcp/line-limit.js';
import { runCliInProcess } from './support/in-process-cli.js';

describe('sql has the input limit of POST /api/sql', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-bounds-'));
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });
  const env = () => ({ SQLRECALL_HOME: home, DATABASE_URL: `pglite:${join(home, 'db')}` });
  const longStatement = `SELECT 1 WHERE 1 IN (${Array.from({ length: 30_000 }, (_, i) => i).join(',')})`;

  it('an argument over 100,000 characters is a usage error naming the limit (exit 2), before any database work', async () => {
    expect(longStatement.length).toBeGreaterThan(MAX_SQL_CHARS);
    const run = await runCliInProcess(['sql', longStatement], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('longer than 100,000 characters');
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
  });

  it('stdin over the limit likewise, without reading a huge input whole', async () => {
    const run = await runCliInProcess(['sql', '-'], { env: env(), input: `${longStatement}\n` });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('SQL on standard input is longer than 100,000 characters');
    const huge = await runCliInProcess(['sql', '-', '--json'], {
      env: env(),
      input: 'x'.repeat(3 * 1024 * 1024),
    });
    expect(huge.code).toBe(2);
    expect(JSON.parse(huge.stdout).error.code).toBe('usage');
  });
});

describe('an MCP message over the line limit', () => {
  it('finds the id at the end (as the SDK writes it) or at the start, else null', () => {
    expect(idFromEdges('{"method":"tools/call","params":{"a":"xxx', 'xxx"}},"jsonrpc":"2.0","id":7}')).toBe(
      7,
    );
    expect(idFromEdges('{"jsonrpc":"2.0","id":"r-1","method":"x","params":{"a":"', 'zzz"}}')).toBe('r-1');
    expect(idFromEdges('{"method":"x","params":{"id":3,"a":"', 'zz","id":4}}')).toBeNull();
  });

  it('the splitter passes whole lines, drops a long one as it streams and reports it', () => {
    const refused: [unknown, number][] = [];
    const out: string[] = [];
    const limiter = limitLines((id, bytes) => refused.push([id, bytes]), 100);
    limiter.on('data', (d: Buffer) => out.push(d.toString()));
    limiter.write('{"id":1}\n{"jsonrpc":"2.0","id":2,"x":"');
    for (let i = 0; i < 10; i += 1) limiter.write('y'.repeat(50));
    limiter.write('"}\n{"id":3}');
    limiter.end('\n');
    expect(out.join('')).toBe('{"id":1}\n{"id":3}\n');
    expect(refused).toEqual([[2, 29 + 500 + 3]]);
  });

  it('sqlrecall mcp answers it with a JSON-RPC error and serves the next request', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-mcp-bounds-'));
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    const lines: Record<string, unknown>[] = [];
    let buffered = '';
    stdout.on('data', (d: Buffer) => {
      buffered += d.toString();
      let newline = buffered.indexOf('\n');
      while (newline >= 0) {
        lines.push(JSON.parse(buffered.slice(0, newline)));
        buffered = buffered.slice(newline + 1);
        newline = buffered.indexOf('\n');
      }
    });
    const waitFor = async (id: number) => {
      for (let i = 0; i < 500 && !lines.some((l) => l.id === id); i += 1)
        await new Promise((resolve) => setTimeout(resolve, 20));
      return lines.find((l) => l.id === id);
    };
    const consoleLog = console.log;
    const consoleInfo = console.info;
    const exit = runCli(['mcp'], {
      stdin,
      stdout,
      stderr,
      env: { HOME: home, SQLRECALL_HOME: home, DATABASE_URL: `pglite:${join(home, 'db')}` },
      cwd: home,
      interactive: false,
      stderrIsTTY: false,
    });
    try {
      const send = (message: Record<string, unknown>) => stdin.write(`${JSON.stringify(message)}\n`);
      send({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      });
      expect(await waitFor(1)).toHaveProperty('result');
      send({ jsonrpc: '2.0', method: 'notifications/initialized' });
      // 12 MiB: past the SDK's own 10 MiB buffer too, sent in pieces as a client would.
      const big = JSON.stringify({
        method: 'tools/call',
        params: { name: 'sql', arguments: { sql: 'x'.repeat(12 * 1024 * 1024) } },
        jsonrpc: '2.0',
        id: 2,
      });
      for (let at = 0; at < big.length; at += 65_536) stdin.write(big.slice(at, at + 65_536));
      stdin.write('\n');
      const refused = (await waitFor(2)) as { error?: { code: number; message: string } };
      expect(refused?.error?.code).toBe(-32600);
      expect(refused?.error?.message).toContain(`${MAX_MCP_LINE_BYTES / 1024 / 1024} MiB`);
      send({ jsonrpc: '2.0', id: 3, method: 'tools/list' });
      const listed = (await waitFor(3)) as { result?: { tools: unknown[] } };
      expect(listed?.result?.tools.length).toBeGreaterThan(0);
    } finally {
      stdin.end();
      expect(await exit).toBe(0);
      console.log = consoleLog;
      console.info = consoleInfo;
      rmSync(home, { recursive: true, force: true });
    }
  }, 60_000);
});
