/**
 * Issue 17: memory teaching through `--provider openai` (the real `openai` client against the
 * scripted server's /v1 routes): the memory calls go out with `response_format` JSON schemas and
 * their purpose as a header; a server that rejects `response_format` is handled by the fallback.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SQL_PROMPT_MARKER } from '../src/agent/prompts.js';
import { createDemoDatabase } from '../src/demo/load.js';
import { PURPOSE_HEADER } from '../src/models/purpose.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { messageOf } from './support/memory-fixtures.js';
import { extractionFor } from './support/memory-pipeline.js';
import { type ScriptedOllama, type ScriptedReply, startScriptedOllama } from './support/scripted/server.js';

const INDIA = "customers.country = 'India'";

describe('memory teaching through the OpenAI-compatible backend', () => {
  let server: ScriptedOllama;
  let dir: string;
  const sqlPrompts: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-memopenai-'));
    await createDemoDatabase(join(dir, 'demo-shop'));
    server = await startScriptedOllama({
      chat: (request): ScriptedReply => {
        if (request.purpose === 'memory-extract') return extractionFor(messageOf(request.lastUserMessage));
        if (request.purpose === 'memory-reconcile') return JSON.stringify({ action: 'ADD', id: null });
        if (request.purpose === 'memory-classify')
          return JSON.stringify({
            kind: 'instruction',
            instruction: messageOf(request.lastUserMessage),
            question: null,
          });
        if (request.messages[0]?.content.startsWith(SQL_PROMPT_MARKER)) {
          const prompt = request.messages.map((m) => m.content).join('\n');
          sqlPrompts.push(prompt);
          return prompt.includes(INDIA)
            ? "```sql\nSELECT name FROM customers WHERE country = 'India' ORDER BY name LIMIT 5\n```"
            : '```sql\nSELECT name FROM customers ORDER BY name LIMIT 5\n```';
        }
        return 'Here is the answer.';
      },
    });
  }, 180_000);
  afterAll(() => server?.close());

  const env = (home: string) => ({
    SQLRECALL_HOME: join(dir, home),
    SQLRECALL_PROVIDER: 'openai',
    SQLRECALL_BASE_URL: `${server.url}/v1`,
    DATABASE_URL: `pglite:${join(dir, 'demo-shop')}`,
  });

  async function teachAndAsk(home: string, user: string) {
    const taught = await runCliInProcess(
      ['ask', '--json', '--user', user, 'Always show me customers from India'],
      {
        env: env(home),
      },
    );
    expect(taught.code, taught.stderr).toBe(0);
    expect(JSON.parse(taught.stdout)).toMatchObject({
      kind: 'instruction',
      remembered: [{ action: 'ADD', kind: 'preference' }],
    });
    const before = sqlPrompts.length;
    const asked = await runCliInProcess(['ask', '--json', '--user', user, 'list some customers'], {
      env: env(home),
    });
    expect(asked.code, asked.stderr).toBe(0);
    expect(sqlPrompts.length).toBe(before + 1);
    expect(sqlPrompts.at(-1)).toContain(INDIA); // the memory reached the SQL prompt
    expect(JSON.parse(asked.stdout).sql).toContain("country = 'India'");
  }

  it('teaches with response_format JSON schemas and applies the memory', async () => {
    server.reset();
    server.setRejectResponseFormat(false);
    await teachAndAsk('home-schema', 'priya');
    const extract = server.requests.filter(
      (r) => r.path === '/v1/chat/completions' && r.headers[PURPOSE_HEADER] === 'memory-extract',
    );
    expect(extract.length).toBeGreaterThan(0);
    const body = extract[0]!.body as {
      response_format?: { type: string; json_schema?: { schema?: unknown } };
    };
    expect(body.response_format?.type).toBe('json_schema');
    expect(body.response_format?.json_schema?.schema).toMatchObject({ type: 'object' });
    expect(JSON.stringify(body)).not.toMatch(/purpose/i);
    // Chat, embeddings and models go through /v1 only; the one Ollama-native read allowed is the
    // running context window of a model Ollama serves through /v1 (GET /api/ps, a 404 elsewhere).
    expect(
      server.requests.filter((r) => r.path.startsWith('/api/')).map((r) => `${r.method} ${r.path}`),
    ).toEqual(server.requests.filter((r) => r.path === '/api/ps').map(() => 'GET /api/ps'));
    expect(server.requests.some((r) => r.path === '/v1/embeddings')).toBe(true);
  }, 180_000);

  it('a server that rejects response_format: the fallback still teaches', async () => {
    server.reset();
    server.setRejectResponseFormat(true);
    await teachAndAsk('home-fallback', 'rahul');
    const memoryCalls = server.requests.filter(
      (r) => r.path === '/v1/chat/completions' && /^memory-/.test(r.headers[PURPOSE_HEADER] ?? ''),
    );
    const withFormat = memoryCalls.filter((r) => 'response_format' in (r.body as object));
    const answered = memoryCalls.filter((r) => r.chat !== undefined);
    expect(withFormat.length).toBeGreaterThan(0); // tried, refused with HTTP 400 …
    expect(withFormat.every((r) => r.chat === undefined)).toBe(true);
    expect(answered.length).toBeGreaterThan(0); // … and answered without it, schema in the prompt
    for (const r of answered) expect(JSON.stringify(r.chat!.messages)).toContain('matching this JSON schema');
  }, 180_000);
});
