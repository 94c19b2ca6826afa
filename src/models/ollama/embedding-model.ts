/**
 * {@link EmbeddingModel} on Ollama's batched `/api/embed`. Big inputs are split into batches of
 * `batchSize` texts, one remote call per batch, results concatenated in input order.
 */
import type { Ollama } from 'ollama';
import { SqlrecallError } from '../../core/errors.js';
import type { EmbeddingModel } from '../../core/ports.js';
import { type RetryPolicy, withRetry } from '../../core/retry.js';
import { embeddingProblem, isDegenerateVector } from '../embedding-check.js';
import { createOllamaClient, displayHost, mapOllamaError, modelInfoNumber } from './client.js';

/** Texts per `/api/embed` call by default: large enough to amortise the HTTP round trip, small enough for CPU servers. */
export const DEFAULT_EMBED_BATCH_SIZE = 64;

/** The text embedded to learn the vector length when `/api/show` does not report `*.embedding_length`. */
const PROBE_TEXT = 'dimension probe';

/** Options of {@link createOllamaEmbeddingModel}. */
export interface OllamaEmbeddingModelOptions {
  /** Ollama address, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** Embedding model name, e.g. `all-minilm` or `nomic-embed-text`. */
  model: string;
  /** Texts per remote call; default {@link DEFAULT_EMBED_BATCH_SIZE}. */
  batchSize?: number;
  /** Ollama `keep_alive` (e.g. `'10m'`); default: the server's. */
  keepAlive?: string;
  /** A ready client (tests); default: one built on our undici fetch. */
  client?: Ollama;
  /** Retries of an embedding request; default `DEFAULT_RETRY_POLICY` of `core/retry.ts`. */
  retry?: RetryPolicy;
}

/**
 * An embedding model served by Ollama. `dimensions()` is probed once (from `/api/show`
 * `*.embedding_length`, else by embedding a probe text) and cached; it is never hard-coded.
 * @throws SqlrecallError `model_unreachable`, `model_missing`, `model_output` (HTTP errors, or a
 *   reply with the wrong number of vectors or vectors of different lengths)
 */
export function createOllamaEmbeddingModel(options: OllamaEmbeddingModelOptions): EmbeddingModel {
  const { host, model } = options;
  const batchSize = Math.max(1, Math.floor(options.batchSize ?? DEFAULT_EMBED_BATCH_SIZE));
  let dims: Promise<number> | undefined;
  let knownDims: number | undefined;
  /** `*.embedding_length` of `/api/show`, once probed: what every vector must measure. */
  let declaredDims: number | undefined;

  const clientFor = (signal?: AbortSignal): Ollama => options.client ?? createOllamaClient({ host, signal });

  const invalid = (reason: string, degenerate = false) =>
    new SqlrecallError(
      'model_output',
      `Ollama embedding model "${model}" at ${displayHost(host)} returned ${reason}; nothing was stored.`,
      {
        details: {
          url: displayHost(host),
          retryable: false,
          ...(degenerate ? { degenerate: true } : {}),
          hint: `check that "${model}" is an embedding model (\`ollama show ${model}\`); \`sqlrecall doctor\` shows the vector it returns`,
        },
      },
    );

  async function embedBatch(client: Ollama, batch: string[], signal?: AbortSignal): Promise<number[][]> {
    // An embedding request is an idempotent read: a refused connection or a model still loading
    // (503) is retried under the shared policy (core/retry.ts); a plain 500 or a 404 is not.
    const embeddings: unknown = await withRetry(
      async () => {
        try {
          const response = await client.embed({
            model,
            input: batch,
            ...(options.keepAlive === undefined ? {} : { keep_alive: options.keepAlive }),
          });
          return response.embeddings;
        } catch (error) {
          throw mapOllamaError(error, { host, model });
        }
      },
      { policy: options.retry, signal },
    );
    if (!Array.isArray(embeddings) || embeddings.length !== batch.length) {
      const count = Array.isArray(embeddings) ? embeddings.length : 'no';
      throw invalid(`${count} vectors for ${batch.length} texts`);
    }
    // Every vector of the batch is checked before any is returned: none of a bad batch is stored.
    for (const vector of embeddings) {
      const problem = embeddingProblem(vector, knownDims ?? declaredDims);
      if (problem) throw invalid(problem, isDegenerateVector(vector));
      knownDims ??= (vector as number[]).length;
    }
    return embeddings as number[][];
  }

  async function embed(texts: string[], callOptions: { signal?: AbortSignal } = {}): Promise<number[][]> {
    const { signal } = callOptions;
    signal?.throwIfAborted();
    if (texts.length === 0) return [];
    const client = clientFor(signal);
    const vectors: number[][] = [];
    try {
      for (let start = 0; start < texts.length; start += batchSize) {
        signal?.throwIfAborted();
        vectors.push(...(await embedBatch(client, texts.slice(start, start + batchSize), signal)));
      }
    } catch (error) {
      if (signal?.aborted) throw signal.reason ?? error;
      throw error;
    }
    return vectors;
  }

  async function probe(): Promise<number> {
    if (knownDims) return knownDims;
    const client = clientFor();
    let reported: number | undefined;
    try {
      reported = modelInfoNumber(await client.show({ model }), 'embedding_length');
    } catch (error) {
      const mapped = mapOllamaError(error, { host, model });
      if (!(mapped instanceof SqlrecallError && mapped.code === 'model_output')) throw mapped;
    }
    if (reported) {
      declaredDims = reported;
      return reported;
    }
    const [vector] = await embedBatch(client, [PROBE_TEXT]);
    return vector!.length;
  }

  function dimensions(): Promise<number> {
    dims ??= probe().catch((error: unknown) => {
      dims = undefined; // a failed probe is retried on the next call
      throw error;
    });
    return dims;
  }

  return { id: model, dimensions, embed };
}
