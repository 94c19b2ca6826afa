/**
 * Token estimates live in `core` (`src/core/tokens.ts`): models, linking and the server all size
 * prompts with them. Re-exported here so existing imports keep working.
 */
export { ASCII_CHARS_PER_TOKEN, estimateTokens, NON_ASCII_TOKENS_PER_CHAR } from '../core/tokens.js';
