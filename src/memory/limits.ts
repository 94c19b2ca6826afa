/**
 * Limits on what a memory may hold. A memory's text is recalled into SQL prompts and shown in
 * every list; one far longer than a sentence or two is almost always a paste by mistake (a log, a
 * document) that would crowd the prompt out, so it is refused on every teaching path with a
 * preview of what arrived.
 */
import { maskCredentials } from '../core/credentials.js';
import { SqlrecallError } from '../core/errors.js';

/** Most characters (Unicode code points) of a memory's text: 2,000. */
export const MAX_MEMORY_TEXT_CHARS = 2000;

/** Characters of an over-long text quoted back in the refusal, so the user sees which text it was. */
export const MEMORY_TEXT_PREVIEW_CHARS = 120;

/**
 * The most characters a surface's input schema accepts for a memory text: well above
 * {@link MAX_MEMORY_TEXT_CHARS}, so that the limit's own message (with its preview) answers a text
 * over it, while a megabyte still stops at the schema.
 */
export const MEMORY_TEXT_INPUT_BOUND = 64_000;

/** How many characters `text` has, counted as the limit counts them (code points). */
export function memoryTextLength(text: string): number {
  let count = 0;
  for (const _ of text) count += 1;
  return count;
}

/** The first {@link MEMORY_TEXT_PREVIEW_CHARS} characters of `text`, credentials masked, on one line. */
export function memoryTextPreview(text: string): string {
  const flat = maskCredentials(text).replace(/\s+/g, ' ').trim();
  const chars = [...flat];
  return chars.length > MEMORY_TEXT_PREVIEW_CHARS
    ? `${chars.slice(0, MEMORY_TEXT_PREVIEW_CHARS).join('')}…`
    : flat;
}

/**
 * Refuses a memory text longer than {@link MAX_MEMORY_TEXT_CHARS} (after trimming).
 * @throws SqlrecallError `usage` (exit 2, HTTP 400) naming the length, the limit and a preview
 */
export function checkMemoryText(text: string): void {
  const length = memoryTextLength(text.trim());
  if (length <= MAX_MEMORY_TEXT_CHARS) return;
  throw new SqlrecallError(
    'usage',
    `The memory text is ${length.toLocaleString('en')} characters; the limit is ${MAX_MEMORY_TEXT_CHARS.toLocaleString('en')}. ` +
      `Nothing was stored. It begins: "${memoryTextPreview(text)}"`,
    {
      details: {
        hint: 'Keep one fact per memory, in a sentence or two; split a long text into several memories.',
      },
    },
  );
}
