/**
 * Picks the model adapters for a {@link Config}: Ollama's own API (default) or an OpenAI-compatible
 * server (`provider: 'openai'`, issue 17). The only place that knows both backends.
 */
import type { Config } from '../config/config.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import { createOllamaAdmin } from '../models/ollama/admin.js';
import { createOllamaChatModel } from '../models/ollama/chat-model.js';
import { createOllamaEmbeddingModel } from '../models/ollama/embedding-model.js';
import { createOpenAiChatModel } from '../models/openai/chat-model.js';
import { createOpenAiClient, listOpenAiModels } from '../models/openai/client.js';
import { createOpenAiEmbeddingModel } from '../models/openai/embedding-model.js';

/** The configured chat model (no network until used). */
export function createChatModelFor(config: Config): ChatModel {
  if (config.provider === 'openai') {
    return createOpenAiChatModel({ baseUrl: config.baseUrl, model: config.model, apiKey: config.apiKey });
  }
  return createOllamaChatModel({
    host: config.ollamaHost,
    model: config.model,
    numCtx: config.numCtx ?? 'auto',
  });
}

/** The configured embedding model (no network until used). */
export function createEmbeddingModelFor(config: Config): EmbeddingModel {
  if (config.provider === 'openai') {
    return createOpenAiEmbeddingModel({
      baseUrl: config.baseUrl,
      model: config.embedModel,
      apiKey: config.apiKey,
    });
  }
  return createOllamaEmbeddingModel({ host: config.ollamaHost, model: config.embedModel });
}

/** Reads a chat model's context length, in tokens; undefined when the server does not say. */
export interface ContextLengthSource {
  contextLength(model: string): Promise<number | undefined>;
}

/**
 * Where the chat model's context length comes from: Ollama's `/api/show`, or for an
 * OpenAI-compatible server its `/v1/models` entry (`context_length`, `max_model_len`,
 * `meta.n_ctx_train`, …) and else `config.contextLength` (SQLRECALL_CONTEXT_LENGTH).
 */
export function contextLengthSourceFor(config: Config): ContextLengthSource {
  if (config.provider !== 'openai') return createOllamaAdmin({ host: config.ollamaHost });
  return {
    async contextLength(model) {
      const client = createOpenAiClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
      const models = await listOpenAiModels(client, config.baseUrl);
      return models.find((m) => m.id === model)?.contextLength ?? config.contextLength;
    },
  };
}

/** One-line "how to get this model" advice for the configured backend. */
export function modelInstallHint(config: Config, model: string): string {
  return config.provider === 'openai'
    ? `load "${model}" in the server at ${config.baseUrl} (names as its /v1/models lists them), or set SQLRECALL_MODEL / SQLRECALL_EMBED_MODEL to a model it serves`
    : `run \`ollama pull ${model}\``;
}
