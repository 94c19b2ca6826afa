/**
 * The Ollama backend as a {@link ModelProvider}: chat and embeddings over Ollama's own API, the
 * model's context length from `/api/show`, version, model list and pulls. The adapter modules (the
 * `ollama` client, undici) are loaded on first use, so building the provider costs nothing.
 */
import { DEFAULT_OLLAMA_HOST, normalizeModelName } from '../../core/model-names.js';
import { maskUrl } from '../../core/redact.js';
import {
  type ContextWindow,
  lazyChatModel,
  lazyEmbeddingModel,
  type ModelProvider,
  once,
  rememberedWindow,
  rememberWindow,
} from '../provider.js';

/** Options of {@link createOllamaProvider}. */
export interface OllamaProviderOptions {
  /** Ollama address, e.g. `http://127.0.0.1:11434`. */
  host: string;
  /** Chat model name (`SQLRECALL_MODEL`). */
  model: string;
  /** Embedding model name (`SQLRECALL_EMBED_MODEL`). */
  embedModel: string;
  /** `num_ctx` for every chat request; default chosen per request from the prompt. */
  numCtx?: number;
  /** `SQLRECALL_CONTEXT_LENGTH`: when set, the window prompts are sized for, whatever the server says. */
  contextLength?: number;
}

/** The first Ollama version whose `format` takes a JSON schema (older ones take only `"json"`). */
const JSON_SCHEMA_SINCE = [0, 5, 0] as const;

/** True when version `a` (e.g. `0.12.6`, `0.5.0-rc1`) is at least `b`; false when `a` does not parse. */
function versionAtLeast(a: string, b: readonly number[]): boolean {
  const parts = /^v?(\d+)\.(\d+)\.(\d+)/.exec(a.trim());
  if (!parts) return false;
  const numbers = parts.slice(1, 4).map(Number);
  for (let i = 0; i < b.length; i += 1) {
    const x = numbers[i] ?? 0;
    const y = b[i] ?? 0;
    if (x !== y) return x > y;
  }
  return true;
}

/** The Ollama backend at `options.host`; no network until a method is called. */
export function createOllamaProvider(options: OllamaProviderOptions): ModelProvider {
  const { host, model, embedModel, numCtx } = options;
  const url = maskUrl(host);
  const admin = once(async () => (await import('./admin.js')).createOllamaAdmin({ host }));
  let chat: ReturnType<typeof lazyChatModel> | undefined;

  async function contextWindow(name: string): Promise<ContextWindow | undefined> {
    const window: ContextWindow | undefined = options.contextLength
      ? { tokens: options.contextLength, source: 'SQLRECALL_CONTEXT_LENGTH' }
      : await (await admin())
          .contextLength(name)
          .then((tokens) =>
            tokens ? { tokens, source: "the model's context_length (/api/show)" } : undefined,
          );
    rememberWindow(host, name, window);
    return window;
  }

  return {
    kind: 'ollama',
    label: 'Ollama',
    url,
    embeddingsUrl: url,
    hints: {
      start:
        host === DEFAULT_OLLAMA_HOST
          ? 'ollama serve (or set OLLAMA_HOST to the address of your Ollama server)'
          : `ollama serve (or set OLLAMA_HOST to the address of your Ollama server; now ${url})`,
      unreachable: [
        'Install Ollama from https://ollama.com/download (Linux: curl -fsSL https://ollama.com/install.sh | sh),',
        `start it with \`ollama serve\`, pull the model with \`ollama pull ${model}\`,`,
        `or point OLLAMA_HOST at a running server (now ${url}).`,
      ].join(' '),
      install: (name) => `run \`ollama pull ${name}\``,
      embeddingFix: (name) =>
        `Make sure ${name} is an embedding model (\`ollama show ${name}\`), or set SQLRECALL_EMBED_MODEL to one (e.g. all-minilm).`,
      missingModel: ({ role, model: name }) => ({
        message: `The ${role} ${name} is not pulled on this Ollama server.`,
        fix: `ollama pull ${name}`,
      }),
      presentVerb: 'pulled',
    },
    chatModel() {
      chat ??= lazyChatModel(model, async () =>
        (await import('./chat-model.js')).createOllamaChatModel({ host, model, numCtx: numCtx ?? 'auto' }),
      );
      return chat;
    },
    embeddingModel: () =>
      lazyEmbeddingModel(embedModel, async () =>
        (await import('./embedding-model.js')).createOllamaEmbeddingModel({ host, model: embedModel }),
      ),
    contextWindow,
    contextLength: async (name) => (await contextWindow(name))?.tokens,
    assumedWindow: (name) => rememberedWindow(host, name),
    async status() {
      const client = await admin();
      const version = await client.version();
      return { summary: `Ollama ${version} at ${url}`, version, models: await client.listModels() };
    },
    async hasModel(name) {
      const wanted = normalizeModelName(name);
      return (await (await admin()).listModels()).some((m) => normalizeModelName(m) === wanted);
    },
    async structuredOutput() {
      const version = await (await admin()).version();
      return versionAtLeast(version, JSON_SCHEMA_SINCE)
        ? { supported: true, how: `Ollama ${version} takes a JSON schema in \`format\`` }
        : {
            supported: false,
            how: `Ollama ${version} takes only "json" in \`format\`, not the JSON schema sqlrecall sends (upgrade Ollama to 0.5.0 or later)`,
          };
    },
    pull: async (name, onProgress, pullOptions) => (await admin()).pull(name, onProgress, pullOptions),
  };
}
