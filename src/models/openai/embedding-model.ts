/**
 * {@link EmbeddingModel} on an OpenAI-compatible `/v1/embeddings`. Big inputs are split into
 * batches of `batchSize` texts, one call per batch, results in input order (by `index`).
 */
import type OpenAI from 'openai';
import { SqlrecallError } from '../../core/errors.js';
import type { EmbeddingModel } from '../../core/ports.js';
import { type RetryPolicy, withRetry } from '../../core/retry.js';
import { decodeEmbedding, embeddingProblem, isDegenerateVector } from '../embedding-check.js';
import { DEFAULT_EMBED_BATCH_SIZE } from '../ollama/embedding-model.js';
import { createOpenAiClient, displayBaseUrl, mapOpenAiError } from './client.js';

/** The text embedded once to learn the vector length (`/v1/models` does not report it). */
const PROBE_TEXT = 'dimension probe';

/** Options of {@link createOpenAiEmbeddingModel}. */
export interface OpenAiEmbeddingModelOptions {
  /** Server base URL including `/v1`. */
  baseUrl: string;
  /** Embedding model name as the server names it. */
  model: string;
  /** Bearer token for servers that want one. Never logged. */
  apiKey?: string;
  /** Texts per call; default 64 (as the Ollama backend). */
  batchSize?: number;
  /** A ready client (tests); default {@link createOpenAiClient}. */
  client?: OpenAI;
  /** Retries of an embedding request; default `DEFAULT_RETRY_POLICY` of `core/retry.ts`. */
  retry?: RetryPolicy;
}

/**
 * An embedding model behind an OpenAI-compatible server. `dimensions()` embeds a probe text once
 * and caches the length; it is never hard-coded.
 * Vectors are asked for as floats (base64 is decoded too, for servers that send it anyway).
 * @throws SqlrecallError `model_unreachable`, `model_missing`, `model_output` (HTTP errors, or a
 *   reply with the wrong number of vectors, vectors of different lengths, all-zero vectors or
 *   non-finite values; such a batch is returned in no part)
 */
export function createOpenAiEmbeddingModel(options: OpenAiEmbeddingModelOptions): EmbeddingModel {
  const { baseUrl, model } = options;
  const client = options.client ?? createOpenAiClient({ baseUrl, apiKey: options.apiKey });
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_EMBED_BATCH_SIZE));
  let dims: Promise<number> | undefined;
  let knownDims: number | undefined;

  const invalid = (reason: string, degenerate = false) =>
    new SqlrecallError(
      'model_output',
      `Embedding model "${model}" at ${displayBaseUrl(baseUrl)} returned ${reason}; nothing was stored.`,
      {
        details: {
          url: displayBaseUrl(baseUrl),
          retryable: false,
          ...(degenerate ? { degenerate: true } : {}),
          hint: `check that "${model}" is an embedding model and loaded on the server (\`sqlrecall doctor\` shows the vector it returns)`,
        },
      },
    );

  async function embedBatch(batch: string[], signal?: AbortSignal): Promise<number[][]> {
    // An embedding request is an idempotent read: a refused connection, 429 or 503 is retried
    // under the shared policy (core/retry.ts); other HTTP errors are not.
    const data = await withRetry(
      async () => {
        try {
          // Floats asked for explicitly: the client otherwise asks for base64 without saying so, and
          // servers that ignore encoding_format (LM Studio, Ollama's /v1, LocalAI) send floats
          // that it then decodes as bytes.
          const response = await client.embeddings.create(
            { model, input: batch, encoding_format: 'float' },
            { signal },
          );
          return response.data as Array<{ index: number; embedding: unknown }>;
        } catch (error) {
          if (signal?.aborted) throw signal.reason ?? error;
          throw mapOpenAiError(error, { baseUrl, model });
        }
      },
      { policy: options.retry, signal },
    );
    if (!Array.isArray(data) || data.length !== batch.length) {
      throw invalid(`${Array.isArray(data) ? data.length : 'no'} vectors for ${batch.length} texts`);
    }
    const ordered = [...data].sort((a, b) => a.index - b.index);
    // Every vector of the batch is checked before any is returned: none of a bad batch is stored.
    const vectors = ordered.map(({ embedding }) => decodeEmbedding(embedding));
    for (const vector of vectors) {
      const problem = embeddingProblem(vector, knownDims);
      if (problem) throw invalid(problem, isDegenerateVector(vector));
      knownDims ??= (vector as number[]).length;
    }
    return vectors as number[][];
  }

  async function embed(texts: string[], callOptions: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const { signal } = callOptions;
    signal?.throwIfAborted();
    const vectors: number[][] = [];
    for (let start = 0; start < texts.length; start += batchSize) {
      signal?.throwIfAborted();
      vectors.push(...(await embedBatch(texts.slice(start, start + batchSize), signal)));
    }
    return vectors;
  }

  function dimensions(): Promise<number> {
    dims ??= (
      knownDims ? Promise.resolve(knownDims) : embedBatch([PROBE_TEXT]).then(([v]) => v!.length)
    ).catch((error: unknown) => {
      dims = undefined; // a failed probe is retried on the next call
      throw error;
    });
    return dims;
  }

  return { id: model, dimensions, embed };
}
