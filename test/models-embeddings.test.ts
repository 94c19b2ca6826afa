/**
 * Embeddings are what the model made: float vectors from servers that ignore `encoding_format`
 * (LM Studio, Ollama's `/v1`, LocalAI) are read as floats; all-zero, non-finite or wrongly sized
 * vectors are errors naming the server and the model and are never stored; `doctor` checks the
 * vector and the memory store's dimension. Real `openai`/`ollama` clients, scripted server.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { decodeEmbedding, embeddingProblem } from '../src/models/embedding-check.js';
import { createOllamaEmbeddingModel } from '../src/models/ollama/embedding-model.js';
import { createOpenAiEmbeddingModel } from '../src/models/openai/embedding-model.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { hashEmbedding } from './support/scripted/embedding.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';
import { tempDir } from './support/temp-dir.js';

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  const error = await promise.then(
    () => new Error('expected a failure'),
    (e: unknown) => e,
  );
  if (!(error instanceof SqlrecallError)) throw error;
  return error;
}

const servers: ScriptedOllama[] = [];
async function start(options: Parameters<typeof startScriptedOllama>[0]): Promise<ScriptedOllama> {
  const server = await startScriptedOllama(options);
  servers.push(server);
  return server;
}
afterAll(() => Promise.all(servers.map((s) => s.close())));

describe('float embeddings from servers that ignore encoding_format', () => {
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await start({ embeddingEncoding: 'float' });
  });

  it('asks for floats and gets the model real vectors, with the real dimension', async () => {
    const embedder = createOpenAiEmbeddingModel({ baseUrl: `${server.url}/v1`, model: 'all-minilm' });
    const [vector] = await embedder.embed(['customers from India']);
    expect(vector).toHaveLength(384);
    const expected = hashEmbedding('customers from India', 384);
    for (const [i, x] of vector!.entries()) expect(x).toBeCloseTo(expected[i]!, 6);
    expect(await embedder.dimensions()).toBe(384);
    const body = server.requests.find((r) => r.endpoint === 'v1-embeddings')!.body as Record<string, unknown>;
    expect(body.encoding_format).toBe('float');
  });

  it('still decodes base64 from a server that sends it regardless', () => {
    const vector = [0.25, -1.5, 3];
    const base64 = Buffer.from(new Float32Array(vector).buffer).toString('base64');
    expect(decodeEmbedding(base64)).toEqual(vector);
    expect(decodeEmbedding(vector)).toBe(vector);
  });
});

describe('degenerate vectors are errors, never stored', () => {
  it('all zeros from /v1/embeddings: model_output naming the server and the model', async () => {
    const server = await start({ embed: () => new Array(384).fill(0) });
    const embedder = createOpenAiEmbeddingModel({ baseUrl: `${server.url}/v1`, model: 'all-minilm' });
    const error = await failure(embedder.embed(['anything']));
    expect(error.code).toBe('model_output');
    expect(error.message).toContain('all-minilm');
    expect(error.message).toContain(server.url);
    expect(error.message).toMatch(/all-zero/);
  });

  it('all zeros from Ollama /api/embed, and a vector shorter than the declared size', async () => {
    const zeros = await start({ embed: () => new Array(384).fill(0) });
    const zeroError = await failure(
      createOllamaEmbeddingModel({ host: zeros.url, model: 'all-minilm' }).embed(['x']),
    );
    expect(zeroError.message).toMatch(/all-zero/);
    expect(zeroError.message).toContain(zeros.url);

    const short = await start({ embed: (text) => hashEmbedding(text, 96) });
    const model = createOllamaEmbeddingModel({ host: short.url, model: 'all-minilm' });
    expect(await model.dimensions()).toBe(384); // as /api/show declares
    const error = await failure(model.embed(['x']));
    expect(error.code).toBe('model_output');
    expect(error.message).toMatch(/96 and 384 dimensions/);
  });

  it('non-finite values and non-numbers are refused', () => {
    expect(embeddingProblem([0.1, Number.NaN])).toMatch(/non-finite/);
    expect(embeddingProblem([0.1, Number.POSITIVE_INFINITY])).toMatch(/non-finite/);
    expect(embeddingProblem([0.1, null])).toMatch(/not a list of numbers/);
    expect(embeddingProblem([])).toMatch(/non-empty/);
    expect(embeddingProblem([0.1, 0.2], 3)).toMatch(/2 and 3 dimensions/);
    expect(embeddingProblem([0.1, 0.2], 2)).toBeUndefined();
  });
});

describe('doctor checks the embedding vector', () => {
  const doctor = async (env: Record<string, string>) => {
    const run = await runCliInProcess(['doctor', '--json'], { env });
    return {
      ...run,
      doc: JSON.parse(run.stdout) as {
        checks: Array<{ name: string; level: string; message: string; fix?: string }>;
      },
    };
  };

  it('reports the real dimension of a float-only server', async () => {
    const server = await start({ embeddingEncoding: 'float' });
    const home = tempDir('sqlrecall-models-emb-');
    const { code, doc } = await doctor({
      SQLRECALL_HOME: home,
      SQLRECALL_PROVIDER: 'openai',
      SQLRECALL_BASE_URL: `${server.url}/v1`,
    });
    expect(code).toBe(0);
    expect(doc.checks.find((c) => c.name === 'embeddings')!.message).toContain('384-dimensional');
    expect(existsSync(join(home, 'memory'))).toBe(false); // doctor creates no store
  });

  it('fails on an all-zero vector (exit 5)', async () => {
    const server = await start({ embed: () => new Array(384).fill(0) });
    const { code, doc } = await doctor({
      SQLRECALL_HOME: tempDir('sqlrecall-models-emb-'),
      SQLRECALL_PROVIDER: 'openai',
      SQLRECALL_BASE_URL: `${server.url}/v1`,
    });
    expect(code).toBe(5);
    const check = doc.checks.find((c) => c.name === 'embeddings')!;
    expect(check.level).toBe('fail');
    expect(check.message).toMatch(/all-zero/);
  });

  it('Ollama: fails when the vector does not match the size /api/show declares', async () => {
    const server = await start({ embed: (text) => hashEmbedding(text, 96) });
    const { code, doc } = await doctor({
      SQLRECALL_HOME: tempDir('sqlrecall-models-emb-'),
      OLLAMA_HOST: server.url,
    });
    expect(code).toBe(5);
    expect(doc.checks.find((c) => c.name === 'embeddings')!.message).toMatch(/96 and 384 dimensions/);
  });

  it('fails when the memory store holds vectors of another dimension, with the re-embed fix', async () => {
    const home = tempDir('sqlrecall-models-emb-');
    const small = await start({ embeddingDimensions: 384 });
    const env = { SQLRECALL_HOME: home, OLLAMA_HOST: small.url };
    const added = await runCliInProcess(
      ['memory', 'add', '--user', 'asha', 'GMV means gross merchandise value'],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
    expect((await doctor(env)).code).toBe(0);
    const wide = await start({ embeddingDimensions: 768 });
    const { code, doc } = await doctor({ ...env, OLLAMA_HOST: wide.url });
    expect(code).toBe(2);
    const check = doc.checks.find((c) => c.name === 'memory store')!;
    expect(check.message).toMatch(/384-dimensional vectors of all-minilm.*768-dimensional/);
    expect(check.fix).toMatch(/memory reembed/);
  });
});

describe('memory search through /v1/embeddings of a float-only server', () => {
  it('finds a taught term', async () => {
    const server = await start({ embeddingEncoding: 'float' });
    const env = {
      SQLRECALL_HOME: tempDir('sqlrecall-models-emb-'),
      SQLRECALL_PROVIDER: 'openai',
      SQLRECALL_BASE_URL: `${server.url}/v1`,
    };
    for (const text of ['GMV means gross merchandise value', 'always sort customers by name']) {
      const added = await runCliInProcess(['memory', 'add', '--user', 'asha', text], { env });
      expect(added.code, added.stderr).toBe(0);
    }
    const found = await runCliInProcess(['memory', 'search', '--json', '--user', 'asha', 'what is GMV'], {
      env,
    });
    expect(found.code, found.stderr).toBe(0);
    expect(JSON.parse(found.stdout).results[0]).toMatchObject({ text: 'GMV means gross merchandise value' });
  });
});
