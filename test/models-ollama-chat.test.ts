import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateText } from '../src/core/chat.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { failure } from './support/failure.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

/** A port nothing listens on: bind an ephemeral port, then release it. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const user = (content: string) => ({ messages: [{ role: 'user' as const, content }] });

describe('Ollama chat model against the scripted server', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama({
      models: ['qwen2.5-coder:7b', { name: 'tiny:1b', contextLength: 4096 }, 'all-minilm'],
    });
  });
  afterEach(() => server.reset());
  afterAll(() => server.close());

  const model = (extra: Partial<Parameters<typeof createOllamaChatModel>[0]> = {}) =>
    createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', ...extra });

  it('streams tokens in order through onToken and returns the whole text', async () => {
    const text = "SELECT count(*)\nFROM customers WHERE country = 'India';";
    server.enqueue({ text, chunkDelayMs: 2 });
    const tokens: string[] = [];
    const result = await generateText(model(), user('How many customers?'), {
      onToken: (t) => tokens.push(t),
    });
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.join('')).toBe(text);
    expect(result.text).toBe(text);
    expect(result.finishReason).toBe('stop');
    expect(result.usage.promptTokens).toBeGreaterThan(0);
    expect(result.usage.completionTokens).toBeGreaterThan(0);
    expect(result.durationMs).toBeGreaterThan(0);
  });

  it('sends deterministic options, an explicit num_predict and a num_ctx sized to the prompt', async () => {
    server.enqueue('a', 'b', 'c');
    const chat = model();
    await generateText(chat, user('short question'));
    await generateText(chat, { ...user('x'.repeat(20_000)), maxTokens: 300 });
    await generateText(chat, { ...user('y'), format: 'json' });
    const [small, large, json] = server.chatRequests();
    expect(small!.stream).toBe(true);
    expect(small!.options).toEqual({ temperature: 0, seed: 42, num_predict: 1024, num_ctx: 2048 });
    // 20000 chars ≈ 5715 tokens + 4 + 300 + 256 margin = 6275 → 7168
    expect(large!.options).toMatchObject({ num_predict: 300, num_ctx: 7168 });
    expect(json!.format).toBe('json');
    // /api/show is asked once per model instance, not per call
    expect(server.requests.filter((r) => r.endpoint === 'show')).toHaveLength(1);
  });

  it('never sends our purpose field and passes format schemas, temperature, seed and keep_alive through', async () => {
    server.enqueue('{"facts":[]}');
    const schema = { type: 'object', properties: { facts: { type: 'array' } }, required: ['facts'] };
    await generateText(model({ temperature: 0.3, seed: 7, keepAlive: '10m', maxTokens: 64 }), {
      ...user('remember this'),
      format: schema,
      purpose: 'extract',
    });
    const chat = server.requests.find((r) => r.endpoint === 'chat')!;
    const body = chat.body as Record<string, unknown>;
    expect(body).not.toHaveProperty('purpose');
    expect(JSON.stringify(body)).not.toContain('extract');
    expect(body.format).toEqual(schema);
    expect(body.keep_alive).toBe('10m');
    expect(body.options).toMatchObject({ temperature: 0.3, seed: 7, num_predict: 64 });
  });

  it('caps num_ctx by the model context length and honours a fixed numCtx', async () => {
    server.enqueue('a', 'b');
    await generateText(
      createOllamaChatModel({ host: server.url, model: 'tiny:1b' }),
      user('z'.repeat(40_000)),
    );
    await generateText(model({ numCtx: 8192 }), user('z'.repeat(40_000)));
    const [capped, fixed] = server.chatRequests();
    expect(capped!.options?.num_ctx).toBe(4096);
    expect(fixed!.options?.num_ctx).toBe(8192);
    // a fixed numCtx needs no /api/show
    expect(server.requests.filter((r) => r.endpoint === 'show')).toHaveLength(1);
  });

  it("maps done_reason 'length' to finishReason 'length'", async () => {
    server.enqueue({ text: 'SELECT a, b, c FROM', doneReason: 'length' });
    const result = await generateText(model({ maxTokens: 5 }), user('wide table'));
    expect(result.finishReason).toBe('length');
    expect(result.text).toBe('SELECT a, b, c FROM');
    expect(result.usage.completionTokens).toBe(5);
  });

  it('reports an unreachable server as model_unreachable with a hint and no stack in the message', async () => {
    const port = await closedPort();
    const error = await failure(
      generateText(
        createOllamaChatModel({ host: `http://127.0.0.1:${port}`, model: 'qwen2.5-coder:7b' }),
        user('hi'),
      ),
    );
    expect(error.code).toBe('model_unreachable');
    expect(error.message).toBe(
      `Cannot reach Ollama at http://127.0.0.1:${port}: connection refused; nothing answers there. Start it with \`ollama serve\`, or check the host and port in OLLAMA_HOST.`,
    );
    expect(error.message).not.toMatch(/\n|\bat .*\(|node:internal/);
    expect(error.details).toMatchObject({ url: `http://127.0.0.1:${port}`, retryable: true });
    expect(error.details.hint).toContain('ollama serve');
    expect(error.exitCode).toBe(5);
    expect(error.cause).toBeDefined();
  });

  it('never puts a password from the host URL into the error', async () => {
    const port = await closedPort();
    const error = await failure(
      generateText(
        createOllamaChatModel({
          host: `http://admin:hunter2@127.0.0.1:${port}`,
          model: 'm',
          numCtx: 2048,
        }),
        user('hi'),
      ),
    );
    expect(error.message).not.toContain('hunter2');
    expect(JSON.stringify(error.details)).not.toContain('hunter2');
    expect(error.details.url).toBe(`http://admin:***@127.0.0.1:${port}`);
  });

  it('sends credentials of the host URL as basic auth (Ollama behind a proxy)', async () => {
    server.enqueue('ok');
    const host = server.url.replace('http://', 'http://admin:s%3Acret@');
    const result = await generateText(
      createOllamaChatModel({ host, model: 'qwen2.5-coder:7b', numCtx: 2048 }),
      user('hi'),
    );
    expect(result.text).toBe('ok');
    const chat = server.requests.find((r) => r.endpoint === 'chat')!;
    expect(chat.headers.authorization).toBe(`Basic ${Buffer.from('admin:s:cret').toString('base64')}`);
  });

  it('reports a model that is not pulled as model_missing with an ollama pull hint', async () => {
    const error = await failure(
      generateText(createOllamaChatModel({ host: server.url, model: 'llama3.2:3b' }), user('hi')),
    );
    expect(error.code).toBe('model_missing');
    expect(error.message).toContain('llama3.2:3b');
    expect(error.details.hint).toBe('ollama pull llama3.2:3b');
    expect(error.details.retryable).toBe(false);
  });

  it('reports HTTP errors as model_output with the status', async () => {
    server.enqueue({ status: 503, error: 'server busy' });
    const error = await failure(generateText(model(), user('hi')));
    expect(error.code).toBe('model_output');
    expect(error.details.status).toBe(503);
    expect(error.details.retryable).toBe(true);
    expect(error.message).toContain('server busy');
  });

  it('reports an error object in the middle of the stream as model_output', async () => {
    server.enqueue({ text: 'SELECT partial', status: 200, error: 'llama runner process has terminated' });
    const tokens: string[] = [];
    const error = await failure(generateText(model(), user('hi'), { onToken: (t) => tokens.push(t) }));
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('llama runner process has terminated');
    expect(tokens.join('')).toBe('SELECT partial');
  });

  it('fails loudly when the test programmed no reply', async () => {
    const error = await failure(generateText(model(), user('unprogrammed')));
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('scripted server: no reply programmed');
  });

  it('keeps an abort as an AbortError and closes the stream', async () => {
    server.enqueue({ text: Array.from({ length: 40 }, (_, i) => `word${i}`).join(' '), chunkDelayMs: 50 });
    const controller = new AbortController();
    const tokens: string[] = [];
    const call = generateText(model(), user('long answer'), {
      signal: controller.signal,
      onToken: (t) => {
        tokens.push(t);
        if (tokens.length === 2) controller.abort();
      },
    });
    await expect(call).rejects.toMatchObject({ name: 'AbortError' });
    expect(tokens.length).toBeLessThan(5);
    const chat = server.requests.find((r) => r.endpoint === 'chat')!;
    await expect.poll(() => chat.aborted, { timeout: 2000 }).toBe(true);
  });

  it('aborts while waiting for the first byte (slow prompt evaluation)', async () => {
    server.enqueue({ text: 'late', delayMs: 5_000 });
    const chat = model({ numCtx: 4096 });
    const started = Date.now();
    await expect(
      generateText(chat, user('slow'), { signal: AbortSignal.timeout(100) }),
    ).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it("rethrows an error of the caller's onToken unchanged and stops the stream", async () => {
    server.enqueue({ text: 'one two three four five six', chunkDelayMs: 20 });
    const mine = new Error('client went away');
    await expect(
      generateText(model(), user('hi'), {
        onToken: () => {
          throw mine;
        },
      }),
    ).rejects.toBe(mine);
    const chat = server.requests.find((r) => r.endpoint === 'chat')!;
    await expect.poll(() => chat.aborted, { timeout: 2000 }).toBe(true);
  });

  it('rejects at once with an already aborted signal and sends nothing', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(generateText(model(), user('hi'), { signal: controller.signal })).rejects.toMatchObject({
      name: 'AbortError',
    });
    expect(server.requests).toHaveLength(0);
  });
});
