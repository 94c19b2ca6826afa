import { describe, expect, it } from 'vitest';
import { SqlrecallError } from '../core/errors.js';
import { normalizeModelName, sameModelName } from '../core/model-names.js';
import { chooseNumCtx, estimatePromptTokens } from './ollama/chat-model.js';
import { displayHost, mapOllamaError, modelInfoNumber } from './ollama/client.js';
import { estimateTokens } from './tokens.js';

describe('estimateTokens', () => {
  it('counts about 3.5 ASCII characters per token and one token per non-ASCII character', () => {
    expect(estimateTokens('')).toBe(0);
    expect(estimateTokens('a')).toBe(1);
    expect(estimateTokens('x'.repeat(35))).toBe(10);
    expect(estimateTokens('日本語')).toBe(3);
    expect(estimateTokens("SELECT count(*) FROM orders WHERE status = 'delivered'")).toBe(16);
  });
});

describe('num_ctx sizing', () => {
  it('adds the answer and a margin, rounds up to 1024, at least 2048, capped by the model', () => {
    expect(chooseNumCtx(10, 1024)).toBe(2048);
    expect(chooseNumCtx(1000, 1024)).toBe(3072); // 2280 → 3072
    expect(chooseNumCtx(5715, 300)).toBe(7168);
    expect(chooseNumCtx(100_000, 1024, 32768)).toBe(32768);
    expect(chooseNumCtx(10, 1024, 1024)).toBe(1024); // a model smaller than the minimum wins
  });

  it('estimates the prompt from messages, their template overhead and a schema format', () => {
    const base = estimatePromptTokens({ messages: [{ role: 'user', content: 'x'.repeat(35) }] });
    expect(base).toBe(14);
    const withSchema = estimatePromptTokens({
      messages: [{ role: 'user', content: 'x'.repeat(35) }],
      format: { type: 'object', properties: { sql: { type: 'string' } } },
    });
    expect(withSchema).toBeGreaterThan(base);
  });
});

describe('model names', () => {
  it('treats a missing tag as :latest, also behind a registry host with a port', () => {
    expect(normalizeModelName('all-minilm')).toBe('all-minilm:latest');
    expect(normalizeModelName(' qwen2.5-coder:7b ')).toBe('qwen2.5-coder:7b');
    expect(normalizeModelName('localhost:5000/library/foo')).toBe('localhost:5000/library/foo:latest');
    expect(sameModelName('all-minilm', 'all-minilm:latest')).toBe(true);
    expect(sameModelName('qwen2.5-coder', 'qwen2.5-coder:7b')).toBe(false);
  });
});

describe('Ollama client helpers', () => {
  it('formats hosts like the ollama client and masks passwords', () => {
    expect(displayHost('localhost')).toBe('http://localhost:11434');
    expect(displayHost(':8080')).toBe('http://127.0.0.1:8080');
    expect(displayHost('http://127.0.0.1:11434/')).toBe('http://127.0.0.1:11434');
    expect(displayHost('https://u:pw@ollama.example.com')).toBe('https://u:***@ollama.example.com');
    expect(displayHost('')).toBe('http://127.0.0.1:11434');
  });

  it('reads numbers from model_info whatever the architecture prefix', () => {
    expect(modelInfoNumber({ model_info: { 'llama.context_length': 8192 } as never }, 'context_length')).toBe(
      8192,
    );
    expect(
      modelInfoNumber({ model_info: new Map([['bert.embedding_length', 384]]) as never }, 'embedding_length'),
    ).toBe(384);
    expect(
      modelInfoNumber({ model_info: { 'x.context_length': 'big' } as never }, 'context_length'),
    ).toBeUndefined();
    expect(modelInfoNumber({ model_info: undefined as never }, 'context_length')).toBeUndefined();
  });

  it('maps errors: network → unreachable, 404 → missing, other → output, abort unchanged', () => {
    const refused = Object.assign(new TypeError('fetch failed'), {
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:11434'), { code: 'ECONNREFUSED' }),
    });
    const mapped = mapOllamaError(refused, { host: 'http://127.0.0.1:11434' }) as SqlrecallError;
    expect(mapped.code).toBe('model_unreachable');
    expect(mapped.message).toBe(
      'Cannot reach Ollama at http://127.0.0.1:11434: connection refused; nothing answers there. Start it with `ollama serve`, or check the host and port in OLLAMA_HOST.',
    );
    const notFound = Object.assign(new Error('model "m" not found, try pulling it first'), {
      name: 'ResponseError',
      status_code: 404,
    });
    expect((mapOllamaError(notFound, { host: 'h', model: 'm' }) as SqlrecallError).code).toBe(
      'model_missing',
    );
    expect((mapOllamaError(notFound, { host: 'h' }) as SqlrecallError).code).toBe('model_output');
    const secret = new Error(`upstream postgres://u:topsecret@db/x failed\n    at foo (bar.js:1:1)`);
    const output = mapOllamaError(secret, { host: 'h' }) as SqlrecallError;
    expect(output).toBeInstanceOf(SqlrecallError);
    expect(output.message).not.toContain('topsecret');
    expect(output.message).not.toContain('\n');
    const abort = new DOMException('aborted', 'AbortError');
    expect(mapOllamaError(abort, { host: 'h' })).toBe(abort);
    const ours = new SqlrecallError('config', 'x');
    expect(mapOllamaError(ours, { host: 'h' })).toBe(ours);
  });
});
