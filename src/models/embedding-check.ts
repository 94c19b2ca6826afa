/**
 * Checks that a vector is what an embedding model makes: a non-empty list of finite numbers, not
 * all zeros, of the expected length. A server that returns floats where the client expected base64
 * (or the reverse), a model that failed to load, or a wrong model behind the name give vectors that
 * look like data but match nothing; stored, they silently break every memory search.
 */

/**
 * Why `vector` is not a usable embedding, or undefined when it is.
 * @param expected the length it must have, when known (the model's declared size, or the length of
 *   the first vector of the same model)
 */
export function embeddingProblem(vector: unknown, expected?: number): string | undefined {
  if (!Array.isArray(vector) || vector.length === 0)
    return 'a vector that is not a non-empty list of numbers';
  let nonZero = false;
  for (const x of vector) {
    if (typeof x !== 'number') return 'a vector that is not a list of numbers';
    if (!Number.isFinite(x)) return 'a vector with non-finite values (NaN or infinity)';
    if (x !== 0) nonZero = true;
  }
  if (expected !== undefined && vector.length !== expected)
    return `vectors of ${vector.length} and ${expected} dimensions (${expected} expected)`;
  if (!nonZero) return `an all-zero ${vector.length}-dimensional vector`;
  return undefined;
}

/**
 * True when {@link embeddingProblem} refused `vector` only because it is degenerate (all zeros):
 * the model answered, but similarity cannot rank against it. A question's vector like that is
 * not fatal for recall (it falls back to word search); the error carries `details.degenerate`.
 */
export function isDegenerateVector(vector: unknown): boolean {
  return Array.isArray(vector) && vector.length > 0 && vector.every((x) => x === 0);
}

/**
 * A vector as an OpenAI-compatible server sent it: a float array, or base64 of little-endian
 * float32 values (OpenAI's `encoding_format: "base64"`, which some servers send regardless).
 * Anything else is returned unchanged for {@link embeddingProblem} to reject.
 */
export function decodeEmbedding(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  const bytes = Buffer.from(value, 'base64');
  if (bytes.length === 0 || bytes.length % 4 !== 0) return value;
  const floats = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  return Array.from(floats);
}
