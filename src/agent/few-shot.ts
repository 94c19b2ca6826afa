/**
 * Few-shot examples for the SQL prompt: the user's (then the team's) saved examples most similar to
 * the question, never another user's.
 */

import type { EmbeddingModel } from '../core/ports.js';
import type { AskInput } from './assistant-options.js';
import { type ExampleMatchOptions, nearestExamples, type SimilarExample } from './example-similarity.js';
import type { ExampleSource } from './fallback.js';
import type { MemoryTurn } from './memory-hook.js';
import type { PromptExample } from './prompts.js';

/** Default of `AssistantOptions.fewShotMax`: 3 examples. */
export const DEFAULT_FEW_SHOT_MAX = 3;
/** Default of `AssistantOptions.fewShotMaxTokens`: 600 estimated tokens. */
export const DEFAULT_FEW_SHOT_MAX_TOKENS = 600;

/** The prompt's form of a similar example. */
export function promptExample(c: SimilarExample): PromptExample {
  return { id: c.memory.id, question: c.memory.text, sql: c.memory.sql!, owner: c.owner };
}

/** Where {@link fewShotCandidates} looks. */
export interface FewShotSources {
  /** Saved examples (usually the memory store); none without it. */
  examples?: ExampleSource;
  /** Embeds the question for the store's `search`; word similarity without it or when it fails. */
  embedder?: EmbeddingModel;
  /** Similarity floors. */
  match?: ExampleMatchOptions;
  /** Most examples returned (default {@link DEFAULT_FEW_SHOT_MAX}; 0 turns few-shot off). */
  max?: number;
}

/**
 * The user's (then the team's) saved examples most similar to the question, at most `max`, before
 * the linked-table check. Never another user's: only the user's and the team's scopes are read. A
 * failing embedding falls back to word similarity; a failing store to none.
 */
export async function fewShotCandidates(
  sources: FewShotSources,
  input: AskInput,
  question: string,
  turn: MemoryTurn | undefined,
): Promise<SimilarExample[]> {
  const max = sources.max ?? DEFAULT_FEW_SHOT_MAX;
  if (max <= 0 || !sources.examples) return [];
  const source = withKnownUserSetting(sources.examples, input.user, turn?.memoryEnabled);
  let embedding: number[] | undefined;
  if (sources.embedder && sources.examples.search) {
    embedding = await sources.embedder
      .embed([question], { signal: input.signal })
      .then((v) => v[0])
      .catch(() => undefined);
  }
  const skipped = (id: string) => (input.without ?? []).some((w) => w.length > 0 && id.startsWith(w));
  const found = await nearestExamples({
    question,
    user: input.user,
    ...(input.team !== undefined ? { team: input.team } : {}),
    source,
    ...(embedding ? { embedding } : {}),
    ...(sources.match ? { options: sources.match } : {}),
  }).catch(() => []);
  return found.filter((c) => !skipped(c.memory.id)).slice(0, max);
}

/**
 * `source` answering `isEnabled` for the user's own scope with `enabled` (when known: the memory
 * turn read it for this message) instead of another store query; other scopes still ask the store.
 */
export function withKnownUserSetting(
  source: ExampleSource,
  user: string,
  enabled: boolean | undefined,
): ExampleSource {
  if (enabled === undefined) return source;
  const ask = source.isEnabled?.bind(source);
  return {
    list: (scope, options) => source.list(scope, options),
    ...(source.search ? { search: source.search.bind(source) } : {}),
    isEnabled: (scope) =>
      scope.user === user && scope.team === undefined
        ? Promise.resolve(enabled)
        : ask
          ? ask(scope)
          : Promise.resolve(true),
  };
}
