/** Ollama adapters: chat model, embedding model, server administration, shared client helpers. */
export { createOllamaAdmin, type OllamaAdmin, type OllamaAdminOptions, type PullProgress } from './admin.js';
export {
  chooseNumCtx,
  createOllamaChatModel,
  DEFAULT_MAX_TOKENS,
  DEFAULT_SEED,
  DEFAULT_TEMPERATURE,
  estimatePromptTokens,
  type OllamaChatModelOptions,
} from './chat-model.js';
export { createOllamaClient, DEFAULT_OLLAMA_HOST, displayHost, mapOllamaError } from './client.js';
export {
  createOllamaEmbeddingModel,
  DEFAULT_EMBED_BATCH_SIZE,
  type OllamaEmbeddingModelOptions,
} from './embedding-model.js';
