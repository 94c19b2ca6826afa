/**
 * One object per model backend (Ollama's own API, or an OpenAI-compatible server): its chat and
 * embedding models, the context window and where it was read, reachability, model administration
 * where the backend has it, and the advice that names the backend and its address. The
 * configuration picks one (`src/runtime/models.ts`); every other part asks the provider instead of
 * testing which backend is configured.
 */
import type { ChatModel, EmbeddingModel } from '../core/ports.js';

/** A context window and where it was read, e.g. `{ tokens: 4096, source: 'meta.n_ctx of /v1/models' }`. */
export interface ContextWindow {
  /** Size in tokens. */
  tokens: number;
  /** The setting, field or endpoint it came from, for messages and `doctor`. */
  source: string;
}

/** One progress event of a model download (`total`/`completed` in bytes, per layer). */
export interface PullProgress {
  /** E.g. `pulling manifest`, `pulling 8eeb52dfb3bb`, `verifying sha256 digest`, `success`. */
  status: string;
  /** Layer digest being downloaded, when the event is about a layer. */
  digest?: string;
  /** Bytes downloaded of the current layer. */
  completed?: number;
  /** Size of the current layer in bytes. */
  total?: number;
}

/**
 * Whether the server constrains a reply to a JSON schema: `true` (it does), `false` (sqlrecall then
 * writes the schema into the prompt), `undefined` (could not tell); `how` says how that was found.
 */
export interface StructuredOutputSupport {
  supported: boolean | undefined;
  how: string;
}

/** What the server says about itself when it answers. */
export interface ServerStatus {
  /** One line for `doctor`, e.g. `Ollama 0.12.6 at http://127.0.0.1:11434`. */
  summary: string;
  /** Model names the server lists (as it spells them). */
  models: string[];
  /** The server's version, when it reports one. */
  version?: string;
}

/** Advice naming the configured backend and its address (credentials masked). */
export interface ProviderHints {
  /** How to start the server, one line (e.g. `ollama serve (…)`). */
  start: string;
  /** What to install or start when no server answers, a few sentences, for `doctor` and `demo`. */
  unreachable: string;
  /** How to get `model` onto the server (pull it, or load it and name it). */
  install(model: string): string;
  /** What to check when the embedding model's vectors cannot be made. */
  embeddingFix(model: string): string;
  /**
   * What `doctor` says when the server lacks `model`: the sentence and the fix. `role` is e.g.
   * `chat model`, `setting` the variable naming it, `listed` what the server has.
   */
  missingModel(missing: { role: string; model: string; setting: string; listed: readonly string[] }): {
    message: string;
    fix: string;
  };
  /** The verb for a model the server has: `pulled` (Ollama) or `served`. */
  presentVerb: string;
}

/**
 * A model backend. Nothing touches the network until a method is called; every method throws
 * `SqlrecallError` (`model_unreachable`, `model_missing`, `model_output`) for server failures.
 */
export interface ModelProvider {
  /** Which backend this is. */
  readonly kind: 'ollama' | 'openai';
  /** The backend for sentences: `Ollama` or `the OpenAI-compatible server`. */
  readonly label: string;
  /** The server's address for messages, credentials masked. */
  readonly url: string;
  /** Where embeddings are requested, for messages (credentials masked). */
  readonly embeddingsUrl: string;
  /** Advice naming this backend and address. */
  readonly hints: ProviderHints;
  /** The configured chat model (one instance per provider; no deadlines, see `first-token-timeout.ts`). */
  chatModel(): ChatModel;
  /** The configured embedding model (a new instance per call). */
  embeddingModel(): EmbeddingModel;
  /**
   * The context window prompts for `model` are sized for, and where it was read:
   * `SQLRECALL_CONTEXT_LENGTH` when set, else what the server reports (its running window before
   * the model's trained size). Undefined when nothing reports one.
   */
  contextWindow(model: string): Promise<ContextWindow | undefined>;
  /** `contextWindow(model)`'s size in tokens (the shape schema linking reads). */
  contextLength(model: string): Promise<number | undefined>;
  /** The window last found for `model` on this server (by any provider on it), without asking again. */
  assumedWindow(model: string): ContextWindow | undefined;
  /** Asks the server whether it answers and what it lists. */
  status(): Promise<ServerStatus>;
  /** Whether the server has `model` (a missing tag means `:latest`). */
  hasModel(model: string): Promise<boolean>;
  /** Whether replies to `model` can be held to a JSON schema (may make one tiny model call). */
  structuredOutput(model: string, options?: { signal?: AbortSignal }): Promise<StructuredOutputSupport>;
  /**
   * Downloads `model` with progress, where the backend can (Ollama); absent otherwise.
   * @throws SqlrecallError `model_unreachable`; `model_missing` when the registry has no such model
   */
  pull?(
    model: string,
    onProgress?: (progress: PullProgress) => void,
    options?: { signal?: AbortSignal },
  ): Promise<void>;
}

/** Windows found per server and model, so an error of a later call can say which size was assumed. */
const assumedWindows = new Map<string, ContextWindow>();

/** Records the window found for `model` at `server` (a base URL) and returns its size. */
export function rememberWindow(server: string, model: string, window: ContextWindow | undefined): void {
  if (window) assumedWindows.set(`${server}\u0000${model}`, window);
}

/** The window last recorded for `model` at `server`, if any. */
export function rememberedWindow(server: string, model: string): ContextWindow | undefined {
  return assumedWindows.get(`${server}\u0000${model}`);
}

/** `build()` once, shared by every caller; a failed build is retried by the next call. */
export function once<T>(build: () => Promise<T>): () => Promise<T> {
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
 * first `stream`; `id` is known up front. Loading starts at creation because a runtime creates
 * its chat model when it is about to use it: read later, while V8 compiles PGlite's WebAssembly,
 * the module's file read waited about a second on a busy 2-core machine.
 */
export function lazyChatModel(id: string, build: () => Promise<ChatModel>): ChatModel {
  const get = once(build);
  get().catch(() => {}); // a failure is reported (and retried) by `stream`
  return {
    id,
    async *stream(request, options) {
      yield* (await get()).stream(request, options);
    },
  };
}

/** An embedding model whose adapter is built on first use, like {@link lazyChatModel}. */
export function lazyEmbeddingModel(id: string, build: () => Promise<EmbeddingModel>): EmbeddingModel {
  const get = once(build);
  return {
    id,
    dimensions: async () => (await get()).dimensions(),
    embed: async (texts, options) => (await get()).embed(texts, options),
  };
}
