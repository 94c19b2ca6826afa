/**
 * `GET /api/settings` names the model backend that is configured and its address with the password
 * masked: under `--provider openai` it is the OpenAI-compatible server's base URL (it once showed
 * the unused Ollama host), and neither the URL's password nor the API key reaches the response.
 * Reading the settings contacts no model server and opens no database.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { memoryClient } from '../src/runtime/memory-runtime.js';
import { Runtime } from '../src/runtime/runtime.js';
import { createApp } from '../src/server/app.js';
import { depsFromRuntime } from '../src/server/runtime-deps.js';
import { tempDir } from './support/temp-dir.js';

const PASSWORD = 'hunter2-url-password';
const API_KEY = 'sk-test-0123456789abcdefghijklmnop';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** `GET /api/settings` of a server in local mode over `flags`. */
async function settingsOf(
  flags: Record<string, string>,
): Promise<{ text: string; json: Record<string, unknown> }> {
  const home = join(tempDir('sqlrecall-settings-'), 'home');
  const config = loadConfig({
    env: {},
    cwd: home,
    flags: {
      home,
      user: 'me',
      logLevel: 'silent',
      databaseUrl: `postgres://app:${PASSWORD}@db.example:5432/shop`,
      ...flags,
    },
  });
  const client = memoryClient(config);
  const runtime = new Runtime(config);
  closers.push(async () => {
    await runtime.close();
    await client.close().catch(() => undefined);
  });
  const app = createApp(depsFromRuntime(runtime, { auth: { mode: 'local', user: 'me' }, client }));
  const res = await app.request('/api/settings', { headers: { accept: 'application/json' } });
  expect(res.status).toBe(200);
  const text = await res.text();
  return { text, json: JSON.parse(text) as Record<string, unknown> };
}

describe('GET /api/settings', () => {
  it('under --provider openai: the OpenAI-compatible base URL, password masked, no API key', async () => {
    const { text, json } = await settingsOf({
      provider: 'openai',
      baseUrl: `http://relay:${PASSWORD}@llm.example:8080/v1`,
      apiKey: API_KEY,
      ollamaHost: 'http://ollama.example:11434',
      model: 'qwen2.5-coder-7b',
      embedModel: 'nomic-embed-text',
    });
    expect(json.provider).toBe('openai');
    expect(json.providerUrl).toMatch(/^http:\/\/relay:.+@llm\.example:8080\/v1$/);
    expect(json).not.toHaveProperty('ollamaHost');
    expect(json.model).toBe('qwen2.5-coder-7b');
    expect(json.embedModel).toBe('nomic-embed-text');
    expect(json.database).toMatch(/^postgres:\/\/app:.+@db\.example:5432\/shop$/);
    // Nothing secret, and nothing of the backend that is not in use.
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain(API_KEY);
    expect(text).not.toContain('ollama.example');
  });

  it('under the default provider: Ollama and its host, password masked', async () => {
    const { text, json } = await settingsOf({
      ollamaHost: `http://admin:${PASSWORD}@ollama.example:11434`,
      baseUrl: 'http://llm.example:8080/v1',
    });
    expect(json.provider).toBe('ollama');
    expect(json.providerUrl).toMatch(/^http:\/\/admin:.+@ollama\.example:11434\/?$/);
    expect(text).not.toContain(PASSWORD);
    expect(text).not.toContain('llm.example');
  });
});
