/**
 * Retries that exist (issue 18): embedding requests, an idempotent read, are repeated under the
 * shared policy (core/retry.ts) when the model server answers 503 (a model still loading); other
 * failures are not, and the number of attempts is bounded. Against the scripted model server.
 */

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { generateText } from '../src/core/chat.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createOllamaEmbeddingModel } from '../src/models/ollama/embedding-model.js';
import { createOpenAiEmbeddingModel } from '../src/models/openai/embedding-model.js';
import { failure } from './support/failure.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const retry = { attempts: 3, baseDelayMs: 5, maxDelayMs: 20 };

describe('model call retries', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterAll(() => server.close());
  beforeEach(() => server.reset());

  const count = (endpoint: string) => server.requests.filter((r) => r.endpoint === endpoint).length;

  it('Ollama embeddings: two 503 answers, then the vectors on the third attempt', async () => {
    server.failNext('embed', { status: 503, error: 'model is loading', count: 2 });
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm', retry });
    const [vector] = await model.embed(['orders per city']);
    expect(vector).toEqual(hashEmbedding('orders per city'));
    expect(count('embed')).toBe(3);
  });

  it('OpenAI-compatible embeddings: two 503 answers, then the vectors on the third attempt', async () => {
    server.failNext('v1-embeddings', { status: 503, error: 'loading', count: 2 });
    const model = createOpenAiEmbeddingModel({ baseUrl: `${server.url}/v1`, model: 'all-minilm', retry });
    const [vector] = await model.embed(['orders per city']);
    expect(vector).toHaveLength(hashEmbedding('orders per city').length);
    expect(count('v1-embeddings')).toBe(3);
  });

  it('the attempt bound holds: three 503 answers fail after three attempts', async () => {
    server.failNext('embed', { status: 503, error: 'model is loading', count: 5 });
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'all-minilm', retry });
    const error = await failure(model.embed(['x']));
    expect(error.code).toBe('model_output');
    expect(error.status).toBe(503);
    expect(error.retryable).toBe(true);
    expect(count('embed')).toBe(3);
  });

  it('a non-retryable answer (404, model missing) is tried exactly once', async () => {
    const model = createOllamaEmbeddingModel({ host: server.url, model: 'no-such-embedder', retry });
    server.failNext('embed', {
      status: 404,
      error: 'model "no-such-embedder" not found, try pulling it first',
    });
    const error = await failure(model.embed(['x']));
    expect(error.code).toBe('model_missing');
    expect(error.retryable).toBe(false);
    expect(count('embed')).toBe(1);
  });

  it('a chat reply is never repeated, even on 503 (it streams; the embedding read is the safe one)', async () => {
    server.enqueue({ status: 503, error: 'server busy' });
    const chat = createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' });
    const error = await failure(generateText(chat, { messages: [{ role: 'user', content: 'hi' }] }));
    expect(error.status).toBe(503);
    expect(count('chat')).toBe(1);
  });
});
