/**
 * The last few single-text embeddings, kept in process: one question is
 * embedded by schema linking (nearest tables) and again by memory recall, with the same model and
 * text; the second call is answered from here instead of a second model round trip (≈ 5 ms to a
 * local zero-delay server, a real model's time on top). Batches of several texts (documents,
 * imports, reembed) pass through untouched.
 */
import type { EmbeddingModel } from '../core/ports.js';

/**
 * Default number of texts remembered: 256 (≈ 0.8 MB of 384-dimension vectors). The calls for one
 * question are far apart when many users ask at once: with 50 users (`bench/http-load.ts`) each
 * question of the others adds a text before recall embeds this one, and 32 were evicted first
 * (1.5 embedding calls per question instead of 1).
 */
export const DEFAULT_REMEMBERED_EMBEDDINGS = 256;

/**
 * Wraps `model` so a single-text `embed` of a text embedded recently (the last `maxTexts` texts)
 * returns the same vector without calling the model. Concurrent calls for one text share one
 * call; a failed call is not remembered. Returned vectors are copies.
 */
export function rememberEmbeddings(
  model: EmbeddingModel,
  maxTexts: number = DEFAULT_REMEMBERED_EMBEDDINGS,
): EmbeddingModel {
  const recent = new Map<string, Promise<number[]>>();
  return {
    id: model.id,
    dimensions: () => model.dimensions(),
    async embed(texts, options) {
      if (texts.length !== 1 || maxTexts < 1) return model.embed(texts, options);
      const text = texts[0]!;
      let vector = recent.get(text);
      if (vector) {
        // Most recently used last, so the oldest is dropped first.
        recent.delete(text);
        recent.set(text, vector);
      } else {
        vector = model.embed([text], options).then(([v]) => {
          if (!v) throw new Error('the embedding model returned no vector');
          return v;
        });
        recent.set(text, vector);
        vector.catch(() => {
          if (recent.get(text) === vector) recent.delete(text);
        });
        while (recent.size > maxTexts) recent.delete(recent.keys().next().value as string);
      }
      return [[...(await vector)]];
    },
  };
}
