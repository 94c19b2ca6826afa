/**
 * Picks the model adapters for a {@link Config}: Ollama's own API (default) or an OpenAI-compatible
 * server (`provider: 'openai'`). The only place that knows both backends.
 */
import type { Config } from '../config/config.js';
import { SqlrecallError } from '../core/errors.js';
import { DEFAULT_OLLAMA_HOST } from '../core/model-names.js';
import type { ChatModel, EmbeddingModel } from '../core/ports.js';
import { maskUrl } from '../core/redact.js';
import type { OllamaAdmin } from '../models/ollama/admin.js';

// The adapters are imported on first use (to keep process start short): the Ollama ones load the
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
 * the module's file read waited ≈ 1 s (`--cpu-prof` of `ask` on a 2-core machine at
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
    const chat = lazyChatModel(model, async () =>
      (await openAiChat()).createOpenAiChatModel({ baseUrl, model, apiKey }),
    );
    return {
      id: model,
      generate: (request, options) =>
        chat.generate(request, options).catch((error: unknown) => {
          throw isContextExceeded(error)
            ? explainContextExceeded(config, model, error as SqlrecallError)
            : error;
        }),
    };
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

/** The context window prompts were sized for, per server and model: named in context errors. */
const assumedWindows = new Map<string, { tokens: number; source: string }>();
const windowKey = (config: Config, model: string) =>
  `${config.provider === 'openai' ? config.baseUrl : config.ollamaHost}\u0000${model}`;

/** The window prompts for `model` were sized for, and where it came from; undefined before the first read. */
export function assumedContextWindow(
  config: Config,
  model: string,
): { tokens: number; source: string } | undefined {
  return assumedWindows.get(windowKey(config, model));
}

/**
 * Where the chat model's context length comes from. `config.contextLength`
 * (SQLRECALL_CONTEXT_LENGTH) always wins. Otherwise Ollama's `/api/show`, or for an
 * OpenAI-compatible server the window it runs with (its `/v1/models` entry: llama.cpp
 * `meta.n_ctx`, vLLM `max_model_len`, LM Studio `loaded_context_length`; else llama-server's
 * `/props`), then the model's trained size (`context_length`, `meta.n_ctx_train`, …).
 */
export function contextLengthSourceFor(config: Config, admin?: OllamaAdmin): ContextLengthSource {
  const remember = (model: string, tokens: number | undefined, source: string) => {
    if (tokens) assumedWindows.set(windowKey(config, model), { tokens, source });
    return tokens;
  };
  if (config.provider !== 'openai') {
    const ollama = admin ?? createOllamaAdminFor(config.ollamaHost);
    return {
      async contextLength(model) {
        if (config.contextLength) return remember(model, config.contextLength, 'SQLRECALL_CONTEXT_LENGTH');
        return remember(model, await ollama.contextLength(model), "the model's context_length (/api/show)");
      },
    };
  }
  return {
    async contextLength(model) {
      if (config.contextLength) return remember(model, config.contextLength, 'SQLRECALL_CONTEXT_LENGTH');
      const { createOpenAiClient, listOpenAiModels, llamaServerContext } = await openAiClient();
      const client = createOpenAiClient({ baseUrl: config.baseUrl, apiKey: config.apiKey });
      const entry = (await listOpenAiModels(client, config.baseUrl)).find((m) => m.id === model);
      const runtimeSource = /n_ctx$|max_model_len|loaded_context_length/;
      if (entry?.contextLength && runtimeSource.test(entry.contextSource ?? ''))
        return remember(model, entry.contextLength, `${entry.contextSource} of /v1/models`);
      const props = await llamaServerContext(config.baseUrl, config.apiKey);
      if (props) return remember(model, props.tokens, props.source);
      if (entry?.contextLength)
        return remember(model, entry.contextLength, `${entry.contextSource} of /v1/models`);
      return undefined;
    },
  };
}

/** True for a server error saying the prompt does not fit its context window. */
export function isContextExceeded(error: unknown): boolean {
  if (!(error instanceof SqlrecallError) || error.code !== 'model_output') return false;
  return /context (size|length|window)|maximum context|exceeds? the (available )?context|n_ctx|too many tokens|prompt is too long/i.test(
    error.message,
  );
}

/** A context-exceeded error that says which window was assumed and names SQLRECALL_CONTEXT_LENGTH. */
function explainContextExceeded(config: Config, model: string, error: SqlrecallError): SqlrecallError {
  const assumed = assumedContextWindow(config, model);
  const sized = assumed
    ? `sqlrecall sized the prompt for a context window of ${assumed.tokens} tokens (from ${assumed.source})`
    : 'the server reported no context window, so sqlrecall could not size the prompt to it';
  return new SqlrecallError(
    'model_output',
    `${error.message.replace(/\.?$/, '.')} ${sized}; set SQLRECALL_CONTEXT_LENGTH to the window the server really runs with.`,
    {
      cause: error,
      details: {
        ...error.details,
        hint: "set SQLRECALL_CONTEXT_LENGTH (e.g. 4096) to the server's context size (llama-server -c, vLLM --max-model-len, LM Studio context length, OLLAMA_CONTEXT_LENGTH)",
      },
    },
  );
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
