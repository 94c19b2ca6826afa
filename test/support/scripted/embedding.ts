/**
 * The scripted server's default embedding: deterministic, dependency-free and "lexical" — texts
 * that share words or word fragments get a high cosine similarity, unrelated texts a similarity
 * near 0. Later pipeline tests (memory dedup, recall ranking) rely on that property, so keep the
 * feature set stable.
 *
 * Features (the "hashing trick", signed, as in Weinberger et al. 2009): each lower-cased word
 * token (weight 1, stop words 0.25) and each character trigram of the word padded with spaces
 * (weight 0.5, so `order` and `orders` share most of their trigrams). Each feature hashes to one of
 * `dimensions` slots with a hashed sign; the vector is L2-normalised.
 */

/** Vector length of the default embedding, as `all-minilm` (384). */
export const DEFAULT_EMBEDDING_DIMENSIONS = 384;

const WORD_WEIGHT = 1;
const STOP_WORD_WEIGHT = 0.25;
const TRIGRAM_WEIGHT = 0.5;

/** Frequent English function words: they would make every sentence look alike. */
const STOP_WORDS = new Set(
  'a an and are as at be by do for from has have i in is it me my of on or our show that the this to was we what which with you your'.split(
    ' ',
  ),
);

/** FNV-1a 32-bit hash followed by a murmur3 finaliser (so neighbouring inputs spread over all bits). */
function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Deterministic embedding of `text` with `dimensions` components (default 384), L2-normalised.
 * Empty or symbol-only text gets a fixed unit vector, never a zero vector (cosine would be NaN).
 */
export function hashEmbedding(text: string, dimensions = DEFAULT_EMBEDDING_DIMENSIONS): number[] {
  if (!Number.isInteger(dimensions) || dimensions < 1)
    throw new RangeError(`dimensions must be a positive integer`);
  const vector = new Float64Array(dimensions);
  const add = (feature: string, weight: number) => {
    const h = hash32(feature);
    vector[h % dimensions]! += h & 0x80000000 ? -weight : weight;
  };
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}_]+/gu) ?? [];
  for (const word of words) {
    add(`w:${word}`, STOP_WORDS.has(word) ? STOP_WORD_WEIGHT : WORD_WEIGHT);
    if (STOP_WORDS.has(word)) continue;
    const padded = ` ${word} `;
    for (let i = 0; i + 3 <= padded.length; i += 1) add(`t:${padded.slice(i, i + 3)}`, TRIGRAM_WEIGHT);
  }
  let norm = Math.hypot(...vector);
  if (norm === 0) {
    add('<empty>', 1);
    norm = Math.hypot(...vector);
  }
  return Array.from(vector, (x) => Math.round((x / norm) * 1e7) / 1e7);
}

/** Cosine similarity of two vectors of the same length (0 when either is all zeros). */
export function cosineSimilarity(a: readonly number[], b: readonly number[]): number {
  if (a.length !== b.length) throw new RangeError(`vectors differ in length: ${a.length} vs ${b.length}`);
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i += 1) {
    const x = a[i]!;
    const y = b[i]!;
    dot += x * y;
    na += x * x;
    nb += y * y;
  }
  return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
}
