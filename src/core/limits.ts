/**
 * Limits on what a person types, the same on every surface (CLI `ask` and `chat`, `POST /api/ask`,
 * the MCP `ask` tool): checked before any model call, so an oversized paste is never sent to the
 * model (which would read it several times: classification, SQL, answer).
 */
import { SqlrecallError } from './errors.js';
import { emptyQuestion } from './refusal.js';

/** Longest question accepted, in characters (UTF-16 code units): 4,000, about a page of text. */
export const MAX_QUESTION_CHARS = 4000;

/**
 * The question, trimmed, when it is fit to ask.
 * @throws SqlrecallError `usage` (exit 2, HTTP 400) when it is empty or longer than {@link MAX_QUESTION_CHARS}
 */
export function checkQuestion(text: string): string {
  const question = text.trim();
  if (question === '') throw emptyQuestion();
  if (question.length > MAX_QUESTION_CHARS)
    throw new SqlrecallError(
      'usage',
      `The question is ${question.length.toLocaleString('en')} characters long; the limit is ${MAX_QUESTION_CHARS.toLocaleString('en')} characters.`,
      { details: { hint: 'Ask a shorter question; put long lists of values in a table and ask about it.' } },
    );
  return question;
}

/**
 * User names, the same rule for `users add`, `--user` and `SQLRECALL_USER`: 1 to 100 letters,
 * digits, `.`, `_`, `@` or `-` (no spaces, no `:`, which marks archived memory scopes).
 */
export const USER_NAME_PATTERN = /^[\p{L}\p{N}._@-]{1,100}$/u;

/** The rule of {@link USER_NAME_PATTERN} in words, for error messages. */
export const USER_NAME_RULE = '1 to 100 letters, digits, dots, underscores, @ or hyphens';
