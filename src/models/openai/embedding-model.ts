/**
 * {@link EmbeddingModel} on an OpenAI-compatible `/v1/embeddings`. Big inputs are split into
 * batches of `batchSize` texts, one call per batch, results in input order (by `index`).
 */
import type OpenAI from 'openai';
import { SqlrecallError } from '../../core/errors.js';
import type { EmbeddingModel } from '../../core/ports.js';
import { type RetryPolicy, withRetry } from '../../core/retry.js';
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
 * @throws SqlrecallError `model_unreachable`, `model_missing`, `model_output` (HTTP errors, or a
 *   reply with the wrong number of vectors or vectors of different lengths)
 */
export function createOpenAiEmbeddingModel(options: OpenAiEmbeddingModelOptions): EmbeddingModel {
  const { baseUrl, model } = options;
  const client = options.client ?? createOpenAiClient({ baseUrl, apiKey: options.apiKey });
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_EMBED_BATCH_SIZE));
  let dims: Promise<number> | undefined;
  let knownDims: number | undefined;

  const invalid = (reason: string) =>
    new SqlrecallError('model_output', `Embedding model "${model}" returned ${reason}.`, {
      details: { url: displayBaseUrl(baseUrl), retryable: false },
    });

  async function embedBatch(batch: string[], signal?: AbortSignal): Promise<number[][]> {
    // An embedding request is an idempotent read: a refused connection, 429 or 503 is retried
    // under the shared policy (core/retry.ts); other HTTP errors are not.
    const data = await withRetry(
      async () => {
        try {
          const response = await client.embeddings.create({ model, input: batch }, { signal });
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
    return ordered.map(({ embedding }) => {
      if (
        !Array.isArray(embedding) ||
        embedding.length === 0 ||
        !embedding.every((x) => typeof x === 'number' && Number.isFinite(x))
      ) {
        throw invalid('a vector that is not a non-empty list of numbers');
      }
      knownDims ??= embedding.length;
      if (embedding.length !== knownDims)
        throw invalid(`vectors of ${embedding.length} and ${knownDims} dimensions`);
      return embedding as number[];
    });
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
