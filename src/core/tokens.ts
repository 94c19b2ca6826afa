/**
 * Token counting without a tokenizer: a calibrated estimate, good enough to size a context window
 * (Ollama `num_ctx`) and to budget prompts. Exact counts come back from the server afterwards
 * (`prompt_eval_count`, `eval_count`).
 */

/**
 * Characters per token for ASCII text. Qwen2.5 and Llama 3 BPE tokenizers produce about 3.5–4
 * ASCII characters per token on English prose and a little under that on SQL and schema listings
 * (identifiers split on `_`); 3.5 errs on the side of more tokens, so a window sized from it is
 * rarely too small.
 */
export const ASCII_CHARS_PER_TOKEN = 3.5;

/**
 * Tokens per non-ASCII character (accents, Cyrillic, CJK, emoji). BPE vocabularies spend roughly
 * one token per CJK character and less on Latin letters with diacritics; 1 keeps the estimate on
 * the safe (larger) side.
 */
export const NON_ASCII_TOKENS_PER_CHAR = 1;

/**
 * Estimated number of tokens of `text` for a modern BPE tokenizer: ASCII characters / 3.5 plus one
 * token per non-ASCII character, rounded up. Empty text is 0 tokens.
 */
export function estimateTokens(text: string): number {
  if (text.length === 0) return 0;
  let ascii = 0;
  let other = 0;
  for (const ch of text) {
    if (ch.charCodeAt(0) < 128) ascii += 1;
    else other += 1;
  }
  return Math.ceil(ascii / ASCII_CHARS_PER_TOKEN + other * NON_ASCII_TOKENS_PER_CHAR);
}
