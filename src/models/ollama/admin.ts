/**
 * Ollama server administration for `doctor`, `demo` and setup: version, installed models, context
 * length, and pulling a model with progress.
 */
import type { Ollama } from 'ollama';
import { SqlrecallError } from '../../core/errors.js';
import { normalizeModelName } from '../../core/model-names.js';
import type { PullProgress } from '../provider.js';
import { createOllamaClient, mapOllamaError, modelInfoNumber } from './client.js';

export type { PullProgress };

/** Options of {@link createOllamaAdmin}. */
export interface OllamaAdminOptions {
  /** Ollama address, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** A ready client (tests); default: one built on our undici fetch. */
  client?: Ollama;
}

/** Administrative calls to one Ollama server. Every method throws the same error codes as the models. */
export interface OllamaAdmin {
  /** Server version, e.g. `0.12.6`. @throws SqlrecallError `model_unreachable`, `model_output` */
  version(): Promise<string>;
  /** Installed model names as the server lists them (with tags, e.g. `all-minilm:latest`). */
  listModels(): Promise<string[]>;
  /** Whether `name` is installed; a missing tag means `:latest` (`all-minilm` == `all-minilm:latest`). */
  hasModel(name: string): Promise<boolean>;
  /**
   * The model's trained context length in tokens (`model_info` `*.context_length`), or undefined
   * when the server does not report it. @throws SqlrecallError `model_missing` when not installed
   */
  contextLength(model: string): Promise<number | undefined>;
  /**
   * Pulls (downloads) a model, streaming progress events to `onProgress`; resolves after `success`.
   * @throws SqlrecallError `model_unreachable`; `model_missing` when the registry has no such model
   */
  pull(
    name: string,
    onProgress?: (progress: PullProgress) => void,
    options?: { signal?: AbortSignal },
  ): Promise<void>;
}

/** Admin calls against the Ollama server at `host`. */
export function createOllamaAdmin(options: OllamaAdminOptions): OllamaAdmin {
  const { host } = options;
  const clientFor = (signal?: AbortSignal): Ollama => options.client ?? createOllamaClient({ host, signal });

  async function call<T>(run: (client: Ollama) => Promise<T>, model?: string): Promise<T> {
    try {
      return await run(clientFor());
    } catch (error) {
      throw mapOllamaError(error, model === undefined ? { host } : { host, model });
    }
  }

  const listModels = () => call(async (client) => (await client.list()).models.map((m) => m.name));

  return {
    version: () => call(async (client) => (await client.version()).version),
    listModels,
    async hasModel(name) {
      const wanted = normalizeModelName(name);
      return (await listModels()).some((installed) => normalizeModelName(installed) === wanted);
    },
    contextLength: (model) =>
      call(async (client) => modelInfoNumber(await client.show({ model }), 'context_length'), model),
    async pull(name, onProgress, pullOptions = {}) {
      const { signal } = pullOptions;
      signal?.throwIfAborted();
      try {
        const stream = await clientFor(signal).pull({ model: name, stream: true });
        for await (const event of stream) {
          onProgress?.({
            status: event.status,
            ...(event.digest ? { digest: event.digest } : {}),
            ...(typeof event.completed === 'number' ? { completed: event.completed } : {}),
            ...(typeof event.total === 'number' ? { total: event.total } : {}),
          });
        }
      } catch (error) {
        if (signal?.aborted) throw signal.reason ?? error;
        const mapped = mapOllamaError(error, { host, model: name });
        throw pullFailure(mapped, name);
      }
    },
  };
}

/**
 * Ollama reports a name the registry does not know inside the pull stream ("pull model manifest:
 * file does not exist"), not as an HTTP 404: that is a missing model, not a server failure.
 */
function pullFailure(mapped: unknown, name: string): unknown {
  if (
    mapped instanceof SqlrecallError &&
    mapped.code === 'model_output' &&
    /file does not exist|not found|manifest unknown/i.test(mapped.message)
  ) {
    return new SqlrecallError('model_missing', `The Ollama registry has no model named "${name}".`, {
      cause: mapped.cause,
      details: { ...mapped.details, retryable: false, hint: 'check the name at https://ollama.com/library' },
    });
  }
  return mapped;
}
