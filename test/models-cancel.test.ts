/**
 * Ctrl-C during a model call (the real binary, SIGINT): the model request is aborted at once (the
 * scripted server sees the client go away), the command exits 130 with "cancelled", never
 * "Unexpected error". Both backends. And when the model server is down, the hint names the
 * configured backend and address (no "ollama serve" with --provider openai).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../src/demo/load.js';
import { startSqlrecall } from './support/cli.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

describe('Ctrl-C during a model call', () => {
  let server: ScriptedOllama;
  let dir: string;

  beforeAll(async () => {
    dir = tempDir('sqlrecall-models-cancel-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    // The SQL call streams one token, then waits: a model busy generating.
    server = await startScriptedOllama({
      chat: (request) =>
        request.purpose === 'sql'
          ? { text: 'SELECT count(*) FROM customers -- slow', chunkDelayMs: 60_000 }
          : 'ok',
    });
  }, 180_000);
  afterAll(() => server?.close());

  it.each(['ollama', 'openai'] as const)(
    '%s: exits 130 with "cancelled" and aborts the request',
    async (provider) => {
      server.reset();
      const run = startSqlrecall(['ask', '--no-memory', 'how many customers are there?'], {
        SQLRECALL_HOME: join(dir, `home-${provider}`),
        DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
        ...(provider === 'openai'
          ? { SQLRECALL_PROVIDER: 'openai', SQLRECALL_BASE_URL: `${server.url}/v1` }
          : { OLLAMA_HOST: server.url }),
      });
      const deadline = Date.now() + 60_000;
      while (!server.requests.some((r) => r.chat?.purpose === 'sql')) {
        if (Date.now() > deadline || run.child.exitCode !== null)
          throw new Error(`no SQL call:\n${run.out()}`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await new Promise((r) => setTimeout(r, 300)); // the first token is streaming
      const sent = Date.now();
      run.child.kill('SIGINT');
      const code = await run.exited;
      expect(Date.now() - sent).toBeLessThan(5_000);
      expect(code, run.out()).toBe(130);
      expect(run.out()).toMatch(/cancelled/i);
      expect(run.out()).not.toMatch(/Unexpected error|aborted/i);
      expect(server.requests.find((r) => r.chat?.purpose === 'sql')!.aborted).toBe(true);
    },
  );
});

describe('hints name the configured backend', () => {
  it('--provider openai with the server down: no "ollama serve", the base URL instead', async () => {
    const stopped = await startScriptedOllama();
    await stopped.close();
    const dir = tempDir('sqlrecall-models-hint-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    const run = await runCliInProcess(
      ['ask', '--no-memory', '--json', 'which customers ordered twice last month?'],
      {
        env: {
          SQLRECALL_HOME: join(dir, 'home'),
          DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
          SQLRECALL_PROVIDER: 'openai',
          SQLRECALL_BASE_URL: `${stopped.url}/v1`,
        },
      },
    );
    expect(run.code).toBe(5);
    const out = JSON.parse(run.stdout);
    const text = JSON.stringify(out.error) + run.stderr;
    expect(text).not.toMatch(/ollama serve/i);
    expect(text).toContain(`${stopped.url}/v1`);
  }, 120_000);
});
