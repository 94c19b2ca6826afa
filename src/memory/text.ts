/**
 * Small text helpers of the memory logic: normalisation for exact-duplicate checks, content words
 * for term matching, and the defined term of a definition ("high value order means …"). Stop words
 * and the stemmer are the shared ones of `core/text.ts`.
 */
import { stem, TERM_STOP_WORDS } from '../core/text.js';

/**
 * Normalised form of a fact for exact comparison: NFKC, lower case, inner whitespace collapsed,
 * surrounding whitespace and trailing punctuation removed. `"Only  India customers!"` and
 * `"only india customers"` are the same fact.
 */
export function normalizeText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim()
    .replace(/[\s.!?;,]+$/u, '');
}

/** The project's one stemmer (`core/text.ts`), re-exported for the memory logic. */
export { stem };

/**
 * Lower-cased, stemmed content words of `text` (letters/digits in any script), {@link TERM_STOP_WORDS}
 * removed.
 */
export function contentWords(text: string): string[] {
  const words =
    text
      .normalize('NFKC')
      .toLowerCase()
      .match(/[\p{L}\p{N}_']+/gu) ?? [];
  return words.filter((w) => !TERM_STOP_WORDS.has(w)).map(stem);
}

/** Patterns that introduce a definition, in the order they are tried. */
const DEFINITION_PATTERNS: RegExp[] = [
  /^\s*(?:by|when i say)\s+["“']?(.+?)["”']?\s*,?\s+i mean\b/i,
  /^\s*define\s+["“']?(.+?)["”']?\s+as\b/i,
  /^\s*["“']?(.+?)["”']?\s+(?:means|is defined as|refers to|stands for|is short for)\b/i,
  /^\s*["“']?(.+?)["”']?\s*(?:=|:)\s/,
];

/**
 * The term a definition defines, or null: `"High value order means total amount over 10000"` →
 * `"High value order"`; `"define VIP as …"` → `"VIP"`.
 */
export function definedTerm(text: string): string | null {
  for (const pattern of DEFINITION_PATTERNS) {
    const match = pattern.exec(text);
    const term = match?.[1]?.trim();
    if (term && term.length <= 80 && term.split(/\s+/).length <= 6) return term;
  }
  return null;
}

/**
 * True when every content word of `term` occurs in `text` (stemmed, any order): the term
 * "high value order" matches "customers who have a high order value". A term without content
 * words never matches.
 */
export function termOccursIn(term: string, text: string): boolean {
  const wanted = contentWords(term);
  if (wanted.length === 0) return false;
  const have = new Set(contentWords(text));
  return wanted.every((w) => have.has(w));
}

/** Shortens `text` to at most `max` characters, ending with `…` when cut. */
export function clip(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1)).trimEnd()}…`;
}
