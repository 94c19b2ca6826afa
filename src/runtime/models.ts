/**
 * Picks the model adapters for a {@link Config}: Ollama's own API (default) or an OpenAI-compatible
 * server (`provider: 'openai'`, issue 17). The only place that knows both backends.
 */
import type { Config } from '../config/config.js';
import { DEFAULT_OLLAMA_HOST } from '../core/model-names.js';
import { maskUrl } from '../core/redact.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import type { OllamaAdmin } from '../models/ollama/admin.js';

// The adapters are imported on first use (issue 15: process start): the Ollama ones load the
// `ollama` client and undici, the OpenAI-compatible ones the `openai` SDK (≈ 150 modules). A
// command that fails on its configuration loads neither, and the Ollama backend never loads the SDK.
const ollamaAdmin = () => import('../models/ollama/admin.js');
const ollamaChat = () => import('../models/ollama/chat-model.js');
const ollamaEmbedding = () => import('../models/ollama/embedding-model.js');
const openAiChat = () => import('../models/openai/chat-model.js');
const openAiClient = () => import('../models/openai/client.js');
const openAiEmbedding = () => import('../models/openai/embedding-model.js');

/** `build()` once, shared by every caller; a failed build is retried by the next call. */
function once<T>(build: () => Promise<T>): () => Promise<T> {
  let value: Promise<T> | undefined;
  return () => {
    value ??= build().catch((error: unknown) => {
      value = undefined;
      throw error;
    });
    return value;
  };
}

/**
 * A chat model whose adapter module starts loading now, in the background, and is awaited by the
 * first `generate`; `id` is known up front. Loading starts at creation because a runtime creates
 * its chat model when it is about to use it: read later, while V8 compiles PGlite's WebAssembly,
 * the module's file read waited ≈ 1 s (issue 15; `--cpu-prof` of `ask` on a 2-core machine at
 * load average ≈ 15).
 */
function lazyChatModel(id: string, build: () => Promise<ChatModel>): ChatModel {
  const get = once(build);
  get().catch(() => {}); // a failure is reported (and retried) by `generate`
  return {
    id,
    generate: async (request, options) => (await get()).generate(request, options),
  };
}

/** An embedding model whose adapter is built on first use, like {@link lazyChatModel}. */
function lazyEmbeddingModel(id: string, build: () => Promise<EmbeddingModel>): EmbeddingModel {
  const get = once(build);
  return {
    id,
    dimensions: async () => (await get()).dimensions(),
    embed: async (texts, options) => (await get()).embed(texts, options),
  };
}

/**
 * Ollama administration (version, models, context length, pull) for the server at `host`, as
 * `createOllamaAdmin` makes it; its module is loaded on the first call. No network until used.
 */
export function createOllamaAdminFor(host: string): OllamaAdmin {
  const get = once(async () => (await ollamaAdmin()).createOllamaAdmin({ host }));
  return {
    version: async () => (await get()).version(),
    listModels: async () => (await get()).listModels(),
    hasModel: async (name) => (await get()).hasModel(name),
    contextLength: async (model) => (await get()).contextLength(model),
    pull: async (name, onProgress, options) => (await get()).pull(name, onProgress, options),
  };
}

/** The configured chat model (no network until used). */
export function createChatModelFor(config: Config): ChatModel {
  if (config.provider === 'openai') {
    const { baseUrl, model, apiKey } = config;
    return lazyChatModel(model, async () =>
      (await openAiChat()).createOpenAiChatModel({ baseUrl, model, apiKey }),
    );
  }
  const { ollamaHost: host, model, numCtx } = config;
  return lazyChatModel(model, async () =>
    (await ollamaChat()).createOllamaChatModel({ host, model, numCtx: numCtx ?? 'auto' }),
  );
}

/** The configured embedding model (no network until used). */
export function createEmbeddingModelFor(config: Config): EmbeddingModel {
  if (config.provider === 'openai') {
    const { baseUrl, embedModel: model, apiKey } = config;
    return lazyEmbeddingModel(model, async () =>
      (await openAiEmbedding()).createOpenAiEmbeddingModel({ baseUrl, model, apiKey }),
    );
  }
  const { ollamaHost: host, embedModel: model } = config;
  return lazyEmbeddingModel(model, async () =>
    (await ollamaEmbedding()).createOllamaEmbeddingModel({ host, model }),
  );
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
  if (config.provider !== 'openai') return createOllamaAdminFor(config.ollamaHost);
  return {
    async contextLength(model) {
      const { createOpenAiClient, listOpenAiModels } = await openAiClient();
      const client = createOpenAiClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
      const models = await listOpenAiModels(client, config.baseUrl);
      return models.find((m) => m.id === model)?.contextLength ?? config.contextLength;
    },
  };
}

/**
 * How to start the configured model server, naming its address: `ollama serve` for Ollama, the
 * OpenAI-compatible server at SQLRECALL_BASE_URL otherwise (never "ollama serve" there).
 */
export function modelStartHint(config: Config): string {
  if (config.provider === 'openai')
    return `start the OpenAI-compatible server at ${maskUrl(config.baseUrl)} (llama-server, LM Studio, vLLM, LocalAI, …), or set SQLRECALL_BASE_URL to its address`;
  return config.ollamaHost === DEFAULT_OLLAMA_HOST
    ? 'ollama serve (or set OLLAMA_HOST to the address of your Ollama server)'
    : `ollama serve (or set OLLAMA_HOST to the address of your Ollama server; now ${maskUrl(config.ollamaHost)})`;
}

/** One-line "how to get this model" advice for the configured backend. */
export function modelInstallHint(config: Config, model: string): string {
  return config.provider === 'openai'
    ? `load "${model}" in the server at ${config.baseUrl} (names as its /v1/models lists them), or set SQLRECALL_MODEL / SQLRECALL_EMBED_MODEL to a model it serves`
    : `run \`ollama pull ${model}\``;
}
