/** OpenAI-compatible adapters (llama.cpp, LM Studio, vLLM, LocalAI, Jan, Ollama `/v1`): chat, embeddings, client helpers. */
export {
  createOpenAiChatModel,
  isResponseFormatRejection,
  type OpenAiChatModelOptions,
  responseFormatFor,
  withSchemaInPrompt,
} from './chat-model.js';
export {
  contextLengthOf,
  createOpenAiClient,
  DEFAULT_OPENAI_BASE_URL,
  displayBaseUrl,
  listOpenAiModels,
  mapOpenAiError,
  type OpenAiModelInfo,
} from './client.js';
export { createOpenAiEmbeddingModel, type OpenAiEmbeddingModelOptions } from './embedding-model.js';
