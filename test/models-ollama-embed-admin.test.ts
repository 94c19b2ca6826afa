import { createServer } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createOllamaAdmin, type PullProgress } from '../src/models/ollama/admin.js';
import { createOllamaEmbeddingModel } from '../src/models/ollama/embedding-model.js';
import { failure } from './support/failure.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe('Ollama embedding model against the scripted server', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterEach(() => {
    server.reset();
    server.setEmbeddingDimensions(384);
  });
  afterAll(() => server.close());

  it('splits 150 texts into batches of 64 (3 calls) and keeps the order', async () => {
    const texts = Array.from({ length: 150 }, (_, i) => `customer number ${i} from city ${i % 7}`);
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm', batchSize: 64 });
    const vectors = await model.embed(texts);
    const calls = server.requests.filter((r) => r.endpoint === 'embed');
    expect(calls.map((c) => (c.body as { input: string[] }).input.length)).toEqual([64, 64, 22]);
    expect((calls[2]!.body as { input: string[] }).input[0]).toBe(texts[128]);
    expect(vectors).toHaveLength(150);
    for (const index of [0, 63, 64, 127, 128, 149])
      expect(vectors[index]).toEqual(hashEmbedding(texts[index]!, 384));
  });

  it('embeds nothing without a remote call', async () => {
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
    expect(await model.embed([])).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it('probes dimensions from /api/show once and caches them (768 here, never hard-coded)', async () => {
    server.setEmbeddingDimensions(768);
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
    expect(await model.dimensions()).toBe(768);
    expect(await model.dimensions()).toBe(768);
    expect(server.requests.map((r) => r.endpoint)).toEqual(['show']);
    const [vector] = await model.embed(['orders by month']);
    expect(vector).toHaveLength(768);
  });

  it('falls back to embedding a probe text when /api/show fails', async () => {
    server.setEmbeddingDimensions(512);
    server.failNext('show', { status: 500, error: 'boom' });
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
    expect(await model.dimensions()).toBe(512);
    expect(server.requests.map((r) => r.endpoint)).toEqual(['show', 'embed']);
  });

  it('learns dimensions from an earlier embed without asking again', async () => {
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm' });
    await model.embed(['a']);
    expect(await model.dimensions()).toBe(384);
    expect(server.requests.map((r) => r.endpoint)).toEqual(['embed']);
  });

  it('reports a missing embedding model with an ollama pull hint', async () => {
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'nomic-embed-text' });
    const error = await failure(model.embed(['x']));
    expect(error.code).toBe('model_missing');
    expect(error.details.hint).toBe('ollama pull nomic-embed-text');
    expect((await failure(model.dimensions())).code).toBe('model_missing');
  });

  it('reports an unreachable server as model_unreachable', async () => {
    const port = await closedPort();
    const model = createOllamaEmbeddingModel({ host: `127.0.0.1:${port}`, model: 'all-minilm' });
    const error = await failure(model.embed(['x']));
    expect(error.code).toBe('model_unreachable');
    expect(error.message).toContain('connection refused');
  });

  it('rejects replies with vectors of different lengths', async () => {
    const odd = await startScriptedOllama({ embed: (text) => (text === 'b' ? [1, 0] : [1, 0, 0]) });
    try {
      const model = createOllamaEmbeddingModel({ host: odd.url, model: 'all-minilm' });
      const error = await failure(model.embed(['a', 'b']));
      expect(error.code).toBe('model_output');
      expect(error.message).toMatch(/2 and 3 dimensions/);
    } finally {
      await odd.close();
    }
  });

  it('maps an HTTP error of one batch to model_output and stops there', async () => {
    server.failNext('embed', { status: 500, error: 'out of memory' });
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm', batchSize: 2 });
    const error = await failure(model.embed(['a', 'b', 'c']));
    expect(error.code).toBe('model_output');
    expect(error.details.status).toBe(500);
    expect(server.requests.filter((r) => r.endpoint === 'embed')).toHaveLength(1);
  });
});

describe('Ollama admin against the scripted server', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama({ registry: ['nomic-embed-text', 'qwen2.5-coder:7b', 'all-minilm'] });
  });
  afterAll(() => server.close());

  it('reads version, models, context length, and treats a missing tag as :latest', async () => {
    const admin = createOllamaAdmin({ host: server.url });
    expect(await admin.version()).toBe('0.12.6');
    expect(await admin.listModels()).toEqual(['qwen2.5-coder:7b', 'all-minilm:latest']);
    expect(await admin.hasModel('all-minilm')).toBe(true);
    expect(await admin.hasModel('all-minilm:latest')).toBe(true);
    expect(await admin.hasModel('qwen2.5-coder')).toBe(false); // means qwen2.5-coder:latest
    expect(await admin.hasModel('qwen2.5-coder:7b')).toBe(true);
    expect(await admin.contextLength('qwen2.5-coder:7b')).toBe(32768);
    expect(await admin.contextLength('all-minilm')).toBe(512);
    expect((await failure(admin.contextLength('llama3'))).code).toBe('model_missing');
  });

  it('pulls a model with streamed progress, after which it is installed', async () => {
    const admin = createOllamaAdmin({ host: server.url });
    const events: PullProgress[] = [];
    await admin.pull('nomic-embed-text', (p) => events.push(p));
    expect(events[0]!.status).toBe('pulling manifest');
    expect(events.at(-1)!.status).toBe('success');
    const layer = events.filter((e) => e.total !== undefined);
    expect(layer.length).toBeGreaterThanOrEqual(3);
    expect(layer.map((e) => e.completed)).toEqual([...layer.map((e) => e.completed!)].sort((a, b) => a - b));
    expect(layer.at(-1)!.completed).toBe(layer.at(-1)!.total);
    expect(layer[0]!.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await admin.hasModel('nomic-embed-text')).toBe(true);
    expect((server.requests.find((r) => r.endpoint === 'pull')!.body as { name: string }).name).toBe(
      'nomic-embed-text',
    );
  });

  it('reports a name the registry does not know as model_missing', async () => {
    const admin = createOllamaAdmin({ host: server.url });
    const events: PullProgress[] = [];
    const error = await failure(admin.pull('no-such-model:1b', (p) => events.push(p)));
    expect(error.code).toBe('model_missing');
    expect(error.message).toContain('no-such-model:1b');
    expect(events.map((e) => e.status)).toEqual(['pulling manifest']);
    expect(await admin.hasModel('no-such-model:1b')).toBe(false);
  });

  it('maps an unreachable server to model_unreachable for every call', async () => {
    const admin = createOllamaAdmin({ host: `http://127.0.0.1:${await closedPort()}` });
    for (const call of [admin.version(), admin.listModels(), admin.hasModel('x'), admin.pull('x')]) {
      const error = await failure(call);
      expect(error.code).toBe('model_unreachable');
      expect(error.details.retryable).toBe(true);
    }
  });
});
