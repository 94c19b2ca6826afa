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
