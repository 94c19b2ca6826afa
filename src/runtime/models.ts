/**
 * Picks the model backend for a {@link Config}: Ollama's own API (default) or an OpenAI-compatible
 * server (`provider: 'openai'`). The only place that reads `config.provider`; everything else asks
 * the {@link ModelProvider} it returns.
 */
import type { Config } from '../config/config.js';
import { createOllamaProvider } from '../models/ollama/provider.js';
import { createOpenAiProvider } from '../models/openai/provider.js';
import type { ModelProvider } from '../models/provider.js';

export type { ContextWindow, ModelProvider } from '../models/provider.js';

/** Reads a chat model's context length, in tokens; undefined when the server does not say. */
export interface ContextLengthSource {
  contextLength(model: string): Promise<number | undefined>;
}

/** One provider per configuration object, so its chat model (and what it learnt of the server) is shared. */
const providers = new WeakMap<Config, ModelProvider>();

/**
 * The model backend `config` names (no network until used): its chat and embedding models,
 * context window, health, administration and hints. The same object for the same `config`.
 */
export function modelProviderFor(config: Config): ModelProvider {
  let provider = providers.get(config);
  if (!provider) {
    const common = {
      model: config.model,
      embedModel: config.embedModel,
      ...(config.contextLength ? { contextLength: config.contextLength } : {}),
    };
    provider =
      config.provider === 'openai'
        ? createOpenAiProvider({
            ...common,
            baseUrl: config.baseUrl,
            ...(config.apiKey ? { apiKey: config.apiKey } : {}),
          })
        : createOllamaProvider({
            ...common,
            host: config.ollamaHost,
            ...(config.numCtx ? { numCtx: config.numCtx } : {}),
          });
    providers.set(config, provider);
  }
  return provider;
}
