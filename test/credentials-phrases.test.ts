/**
 * Secrets said in plain words ("my password is hunter2", "my api key is sk-live-abc123") and
 * sqlrecall's own `sqr_` tokens are credentials: `memory add` refuses them with nothing stored,
 * and `memory audit` finds them in rows stored before the rule existed. Ordinary teaching that
 * merely mentions passwords or tokens is still accepted.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findCredentials, maskCredentials } from '../src/core/credentials.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

const TOKEN = 'sqr_5XojQ2b9kLmN0pRsTuVwXyZ_abcdefghijk-1234567';

const SECRETS: [text: string, secret: string][] = [
  ['remember that my api key is sk-live-abc123', 'sk-live-abc123'],
  ['my password is hunter2', 'hunter2'],
  ['My Password is hunter2.', 'hunter2'],
  ['the passphrase is "open sesame"', 'open sesame'],
  ['my passcode is 4711 for the door', '4711'],
  ['pwd is Tr0ub4dor&3', 'Tr0ub4dor&3'],
  ['the db password is swordfish', 'swordfish'],
  [`the sqlrecall token is ${TOKEN}`, TOKEN],
  [`use ${TOKEN} for the reports`, TOKEN],
  ['the access token is 9f8e7d6c5b4a', '9f8e7d6c5b4a'],
  ['api_key: a1b2c3d4e5', 'a1b2c3d4e5'],
  ['the secret is sk_live_x1', 'sk_live_x1'],
];

const ORDINARY = [
  'the password column is never shown',
  'the password is never shown to analysts',
  'the password is hashed.',
  'a password is required',
  "orders with status 'token' are test orders",
  'the token is valid for one hour',
  'the api key is stored in the vault',
  'the secret is in the details: revenue excludes tax',
  'count users whose password_hash is null',
  'token counts are per model, see usage_tokens',
];

describe('credentials said in words', () => {
  it.each(SECRETS)('finds and masks the secret in %j', (text, secret) => {
    const found = findCredentials(text);
    expect(found.length).toBeGreaterThan(0);
    expect(found.map((f) => f.masked).join(' ')).not.toContain(secret);
    expect(maskCredentials(text)).not.toContain(secret);
  });

  it.each(ORDINARY)('leaves ordinary teaching alone: %j', (text) => {
    expect(findCredentials(text)).toEqual([]);
  });

  it('memory add refuses each phrase (exit 2, nothing stored), accepts ordinary teaching; audit finds old rows', async () => {
    const home = tempDir('sqlrecall-cred-words-');
    const model = await startScriptedOllama({ chat: () => '{}' });
    try {
      const env = { SQLRECALL_HOME: join(home, 'home'), OLLAMA_HOST: model.url };
      const add = (text: string) =>
        runCliInProcess(['memory', 'add', '--kind', 'context', '--user', 'kai', text], { env });
      for (const text of [
        'remember that my api key is sk-live-abc123',
        'my password is hunter2',
        `the sqlrecall token is ${TOKEN}`,
      ]) {
        const refused = await add(text);
        expect(refused.code, text).toBe(2);
        expect(refused.stdout + refused.stderr).not.toMatch(/Remembered/);
        expect(refused.stdout + refused.stderr).not.toMatch(/hunter2|abc123|5XojQ2b9/);
      }
      const ok = await add('the password column is never shown');
      expect(ok.code, ok.stderr).toBe(0);
      const list = JSON.parse(
        (await runCliInProcess(['memory', 'list', '--all', '--json', '--user', 'kai'], { env })).stdout,
      );
      expect(list.memories.map((m: { text: string }) => m.text)).toEqual([
        'the password column is never shown',
      ]);

      // Rows stored before the rule: audit lists them masked.
      const { Runtime } = await import('../src/runtime/runtime.js');
      const { loadConfig } = await import('../src/config/config.js');
      const runtime = new Runtime(
        loadConfig({
          env: {},
          cwd: home,
          flags: { home: join(home, 'home'), ollamaHost: model.url, user: 'kai' },
        }),
      );
      const memory = await runtime.memory();
      const [embedding] = await memory.embedder.embed(['x']);
      await memory.store.write({ user: 'kai' }, [
        {
          op: 'add',
          memory: { kind: 'context', text: 'my password is hunter2' },
          embedding: embedding!,
          reason: 'old',
        },
        {
          op: 'add',
          memory: { kind: 'context', text: `token ${TOKEN}` },
          embedding: embedding!,
          reason: 'old',
        },
      ]);
      await runtime.close();
      const audit = await runCliInProcess(['memory', 'audit', '--user', 'kai'], { env });
      expect(audit.code).toBe(1);
      expect(audit.stdout).toMatch(/a password \(password is \*\*\*\)/);
      expect(audit.stdout).toMatch(/a sqlrecall token \(sqr_\*\*\*\)/);
      expect(audit.stdout).not.toMatch(/hunter2|5XojQ2b9/);
    } finally {
      await model.close();
    }
  }, 60_000);
});
