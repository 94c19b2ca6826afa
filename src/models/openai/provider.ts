/**
 * An OpenAI-compatible server (llama.cpp `llama-server`, LM Studio, vLLM, LocalAI, Jan, Ollama's
 * `/v1`) as a {@link ModelProvider}: chat and embeddings over `/v1`, the model list of `/v1/models`,
 * the window the server runs with, and a structured-output probe. It cannot pull models. The
 * `openai` client (about 150 modules) is loaded on first use, so building the provider costs nothing.
 */
import { SqlrecallError } from '../../core/errors.js';
import { maskUrl } from '../../core/redact.js';
import {
  type ContextWindow,
  lazyChatModel,
  lazyEmbeddingModel,
  type ModelProvider,
  rememberedWindow,
  rememberWindow,
} from '../provider.js';

/** Options of {@link createOpenAiProvider}. */
export interface OpenAiProviderOptions {
  /** Server base URL including `/v1`, e.g. `http://127.0.0.1:8080/v1`. */
  baseUrl: string;
  /** Bearer token for servers that want one. Never logged. */
  apiKey?: string;
  /** Chat model name as the server lists it (`SQLRECALL_MODEL`). */
  model: string;
  /** Embedding model name as the server lists it (`SQLRECALL_EMBED_MODEL`). */
  embedModel: string;
  /** `SQLRECALL_CONTEXT_LENGTH`: when set, the window prompts are sized for, whatever the server says. */
  contextLength?: number;
}

/** `/v1/models` fields that hold the window the server runs with (not the model's trained size). */
const RUNTIME_FIELDS = /n_ctx$|max_model_len|loaded_context_length/;

/** True when `/v1/models` lists `model` (exactly, or as Ollama's `name:latest`). */
function listsModel(ids: readonly string[], model: string): boolean {
  return ids.includes(model) || (!model.includes(':') && ids.includes(`${model}:latest`));
}

/** True for a server error saying the prompt does not fit its context window. */
export function isContextExceeded(error: unknown): boolean {
  if (!(error instanceof SqlrecallError) || error.code !== 'model_output') return false;
  return /context (size|length|window)|maximum context|exceeds? the (available )?context|n_ctx|too many tokens|prompt is too long/i.test(
    error.message,
  );
}

/** A context-exceeded error that says which window was assumed and names SQLRECALL_CONTEXT_LENGTH. */
function explainContextExceeded(assumed: ContextWindow | undefined, error: SqlrecallError): SqlrecallError {
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

/** The OpenAI-compatible server at `options.baseUrl`; no network until a method is called. */
export function createOpenAiProvider(options: OpenAiProviderOptions): ModelProvider {
  const { baseUrl, apiKey, model, embedModel } = options;
  const url = maskUrl(baseUrl);
  const client = () => import('./client.js');
  let chat: ReturnType<typeof lazyChatModel> | undefined;

  async function listModels() {
    const { createOpenAiClient, listOpenAiModels } = await client();
    return listOpenAiModels(createOpenAiClient({ baseUrl, apiKey }), baseUrl);
  }

  /**
   * The window the server runs `name` with: its `/v1/models` entry's running size (llama.cpp
   * `meta.n_ctx`, vLLM `max_model_len`, LM Studio `loaded_context_length`), else llama-server's
   * `/props` or, when the server is Ollama, the loaded model's `num_ctx` (`/api/ps`), else the
   * model's trained size from `/v1/models`.
   */
  async function serverWindow(name: string): Promise<ContextWindow | undefined> {
    const { llamaServerContext, ollamaRunningContext } = await client();
    const entry = (await listModels()).find((m) => m.id === name);
    const listed: ContextWindow | undefined =
      entry?.contextLength && entry.contextSource
        ? { tokens: entry.contextLength, source: `${entry.contextSource} of /v1/models` }
        : undefined;
    if (listed && RUNTIME_FIELDS.test(entry?.contextSource ?? '')) return listed;
    // llama-server's /props first; then Ollama's /api/ps (each a quick 404 on other servers).
    return (
      (await llamaServerContext(baseUrl, apiKey)) ??
      (await ollamaRunningContext(baseUrl, name, apiKey)) ??
      listed
    );
  }

  async function contextWindow(name: string): Promise<ContextWindow | undefined> {
    const window = options.contextLength
      ? { tokens: options.contextLength, source: 'SQLRECALL_CONTEXT_LENGTH' }
      : await serverWindow(name);
    rememberWindow(baseUrl, name, window);
    return window;
  }

  return {
    kind: 'openai',
    label: 'the OpenAI-compatible server',
    url,
    embeddingsUrl: `${url}/embeddings`,
    hints: {
      start: `start the OpenAI-compatible server at ${url} (llama-server, LM Studio, vLLM, LocalAI, …), or set SQLRECALL_BASE_URL to its address`,
      unreachable: [
        `Start your OpenAI-compatible model server (e.g. \`llama-server -m model.gguf --port 8080\`, LM Studio's server, \`vllm serve\`, LocalAI, Jan, or Ollama's /v1),`,
        `or set SQLRECALL_BASE_URL (or --base-url) to its address including /v1 (now ${url});`,
        'set SQLRECALL_API_KEY if it wants a key.',
      ].join(' '),
      install: (name) =>
        `load "${name}" in the server at ${url} (names as its /v1/models lists them), or set SQLRECALL_MODEL / SQLRECALL_EMBED_MODEL to a model it serves`,
      embeddingFix: (name) =>
        `Make sure ${name} is an embedding model the server serves at ${url}/embeddings (llama-server needs --embeddings).`,
      missingModel: ({ role, model: name, setting, listed }) => ({
        message: `The ${role} ${name} is not listed by ${url}/models (it lists: ${listed.slice(0, 10).join(', ') || 'nothing'}).`,
        fix: `Load ${name} in the server, or set ${setting} to one of the listed names.`,
      }),
      presentVerb: 'served',
    },
    chatModel() {
      chat ??= lazyChatModel(model, async () => {
        const created = (await import('./chat-model.js')).createOpenAiChatModel({ baseUrl, model, apiKey });
        return {
          id: model,
          async *stream(request, callOptions) {
            try {
              yield* created.stream(request, callOptions);
            } catch (error) {
              throw isContextExceeded(error)
                ? explainContextExceeded(rememberedWindow(baseUrl, model), error as SqlrecallError)
                : error;
            }
          },
        };
      });
      return chat;
    },
    embeddingModel: () =>
      lazyEmbeddingModel(embedModel, async () =>
        (await import('./embedding-model.js')).createOpenAiEmbeddingModel({
          baseUrl,
          model: embedModel,
          apiKey,
        }),
      ),
    contextWindow,
    contextLength: async (name) => (await contextWindow(name))?.tokens,
    assumedWindow: (name) => rememberedWindow(baseUrl, name),
    async status() {
      const models = (await listModels()).map((m) => m.id);
      return { summary: `OpenAI-compatible server at ${url} lists ${models.length} model(s)`, models };
    },
    hasModel: async (name) =>
      listsModel(
        (await listModels()).map((m) => m.id),
        name,
      ),
    structuredOutput: async (name, probeOptions = {}) =>
      (await import('./chat-model.js')).probeStructuredOutput({
        baseUrl,
        apiKey,
        model: name,
        ...(probeOptions.signal ? { signal: probeOptions.signal } : {}),
      }),
  };
}
