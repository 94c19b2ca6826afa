/**
 * The end-to-end case of a cut reply: asked "how many pending orders over 5000", a server that cuts
 * `... WHERE status = 'pending' AND total_amount > 5000` after `'pending'` must not get the half
 * statement run. `ask` exits 5 with the server's situation in the message and prints no rows; the
 * same question with the whole reply answers (so the failure is the cut's, not the setup's).
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../src/demo/load.js';
import { runCliInProcess } from './support/in-process-cli.js';
import type { ScriptedReply } from './support/scripted/server.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { ndjsonReply, type OpenAiFamily, sseErrorEvent, sseReply } from './support/scripted/transcripts.js';
import { tempDir } from './support/temp-dir.js';

const CUT = ['SELECT count(*) AS pending_orders ', 'FROM orders ', "WHERE status = 'pending'"];
const WHOLE = [...CUT, ' AND total_amount > 5000'];
const QUESTION = 'how many pending orders over 5000';

describe('ask with a reply stream cut mid-statement', () => {
  let server: ScriptedOllama;
  let dir: string;
  let sqlReply: ScriptedReply = 'unused';

  beforeAll(async () => {
    dir = tempDir('sqlrecall-models-cut-');
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request) => (request.purpose === 'sql' ? sqlReply : 'There are that many pending orders.'),
    });
  }, 180_000);
  afterAll(() => server?.close());

  const run = (provider: 'openai' | 'ollama', home: string) =>
    runCliInProcess(['ask', '--no-memory', '--json', QUESTION], {
      env: {
        SQLRECALL_HOME: join(dir, home),
        DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
        ...(provider === 'openai'
          ? { SQLRECALL_PROVIDER: 'openai', SQLRECALL_BASE_URL: `${server.url}/v1` }
          : { OLLAMA_HOST: server.url }),
      },
    });

  it('the whole reply answers (control)', async () => {
    sqlReply = { raw: sseReply('llama.cpp', { content: WHOLE }) };
    const whole = await run('openai', 'control');
    expect(whole.code, whole.stderr).toBe(0);
    expect(JSON.parse(whole.stdout).sql).toContain('total_amount > 5000');
  });

  it.each<OpenAiFamily>(['llama.cpp', 'vllm', 'lmstudio', 'localai', 'ollama-v1'])(
    '%s: a cut or errored stream exits 5 and prints no rows',
    async (family) => {
      for (const [i, reply] of [
        sseReply(family, { content: CUT, complete: false }),
        sseReply(family, { content: CUT, complete: false, tail: [sseErrorEvent(family, 'slot 0 crashed')] }),
      ].entries()) {
        sqlReply = { raw: reply };
        const cut = await run('openai', `${family}-${i}`);
        expect(cut.code, cut.stderr).toBe(5);
        const out = JSON.parse(cut.stdout);
        expect(out).toMatchObject({ sql: null, rows: [], rowCount: 0, error: { code: 'model_output' } });
        expect(out.error.message).toMatch(i === 0 ? /before it was complete/ : /slot 0 crashed/);
        expect(cut.stdout + cut.stderr).not.toMatch(/Unexpected error|\n\s+at /);
      }
    },
  );

  it('Ollama native: a stream without done: true exits 5 and prints no rows', async () => {
    sqlReply = { raw: ndjsonReply({ content: CUT, complete: false }) };
    const cut = await run('ollama', 'native');
    expect(cut.code, cut.stderr).toBe(5);
    expect(JSON.parse(cut.stdout)).toMatchObject({ sql: null, rowCount: 0, error: { code: 'model_output' } });
  });

  it('without --json: exit 5, the reason on stderr, nothing on stdout', async () => {
    sqlReply = { raw: sseReply('vllm', { content: CUT, complete: false }) };
    const cut = await runCliInProcess(['ask', '--no-memory', QUESTION], {
      env: {
        SQLRECALL_HOME: join(dir, 'plain'),
        DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
        SQLRECALL_PROVIDER: 'openai',
        SQLRECALL_BASE_URL: `${server.url}/v1`,
      },
    });
    expect(cut.code, cut.stderr).toBe(5);
    expect(cut.stdout.trim()).toBe('');
    expect(cut.stderr).toMatch(/before it was complete/);
  });
});
