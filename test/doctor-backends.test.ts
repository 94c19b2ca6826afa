/**
 * Issue 17: `sqlrecall doctor` with each model backend up and down, and the exact fix printed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

let server: ScriptedOllama;
let downUrl: string;
const home = tempDir('sqlrecall-doctor-');

beforeAll(async () => {
  server = await startScriptedOllama();
  const stopped = await startScriptedOllama();
  downUrl = stopped.url;
  await stopped.close();
});
afterAll(() => server.close());

const openai = (baseUrl: string, extra: Record<string, string> = {}) => ({
  SQLRECALL_HOME: home,
  SQLRECALL_PROVIDER: 'openai',
  SQLRECALL_BASE_URL: baseUrl,
  ...extra,
});

describe('doctor with --provider openai', () => {
  it('up: server reachable, both models listed, embedding dimension reported', async () => {
    const run = await runCliInProcess(['doctor', '--json'], {
      env: openai(`${server.url}/v1`, { SQLRECALL_API_KEY: 'sk-doctor-secret-42' }),
    });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as { ok: boolean; checks: Array<{ name: string; message: string }> };
    expect(doc.ok).toBe(true);
    expect(doc.checks.map((c) => c.name)).toEqual([
      'model server',
      'chat model',
      'context window',
      'structured output',
      'embedding model',
      'embeddings',
      'database',
    ]);
    expect(doc.checks[5]!.message).toContain('384-dimensional');
    expect(run.stdout + run.stderr).not.toContain('sk-doctor-secret-42');
    const listed = server.requests.filter((r) => r.path === '/v1/models').at(-1)!;
    expect(listed.headers.authorization).toBe('Bearer sk-doctor-secret-42');
  });

  it('up through the flags: --provider openai --base-url', async () => {
    const run = await runCliInProcess(['doctor', '--provider', 'openai', '--base-url', `${server.url}/v1`], {
      env: { SQLRECALL_HOME: home },
    });
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toContain(`OpenAI-compatible server at ${server.url}/v1`);
  });

  it('down: exit 5 with the exact fix', async () => {
    const run = await runCliInProcess(['doctor'], { env: openai(`${downUrl}/v1`) });
    expect(run.code).toBe(5);
    expect(run.stdout).toContain(
      `Cannot reach the OpenAI-compatible server at ${downUrl}/v1: connection refused`,
    );
    expect(run.stdout).toContain(
      'fix: Start your OpenAI-compatible model server (e.g. `llama-server -m model.gguf --port 8080`',
    );
    expect(run.stdout).toContain(
      `set SQLRECALL_BASE_URL (or --base-url) to its address including /v1 (now ${downUrl}/v1)`,
    );
  });

  it('a model the server does not serve: exit 5, fix names the setting', async () => {
    const run = await runCliInProcess(['doctor'], {
      env: openai(`${server.url}/v1`, { SQLRECALL_MODEL: 'llama3.1:70b' }),
    });
    expect(run.code).toBe(5);
    expect(run.stdout).toContain('The chat model llama3.1:70b is not listed');
    expect(run.stdout).toContain(
      'fix: Load llama3.1:70b in the server, or set SQLRECALL_MODEL to one of the listed names.',
    );
  });
});

describe('doctor with the default ollama backend', () => {
  it('up: exit 0', async () => {
    const run = await runCliInProcess(['doctor'], { env: { SQLRECALL_HOME: home, OLLAMA_HOST: server.url } });
    expect(run.code, run.stdout).toBe(0);
    expect(run.stdout).toMatch(/ok\s+Ollama 0\.12\.6 at/);
  });

  it('down: exit 5 with the exact fix', async () => {
    const run = await runCliInProcess(['doctor'], { env: { SQLRECALL_HOME: home, OLLAMA_HOST: downUrl } });
    expect(run.code).toBe(5);
    expect(run.stdout).toContain('fix: Install Ollama from https://ollama.com/download');
    expect(run.stdout).toContain(`or point OLLAMA_HOST at a running server (now ${downUrl})`);
  });
});
