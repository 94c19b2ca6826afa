/**
 * Words for lexical schema linking: identifiers split into words (`snake_case`, `camelCase`,
 * digits), a light English stemmer so `orders`/`order` and `categories`/`category` meet, and a
 * fuzzy comparison for typos and prefixes (`enroll`/`enrollment`). The stemmer, splitter, stop words
 * and edit distance live in `core/text.ts` (one of each for the whole project).
 */
import { editDistance, QUESTION_STOP_WORDS, splitWords, stem } from '../core/text.js';

export { splitWords, stem };

/** True for words that never count as evidence on their own (see {@link QUESTION_STOP_WORDS}). */
export function isStopWord(word: string): boolean {
  return QUESTION_STOP_WORDS.has(word);
}

/** Stems of the non-stop words of `text`, in order (duplicates kept). */
export function terms(text: string): string[] {
  return splitWords(text)
    .filter((word) => !isStopWord(word))
    .map(stem);
}

/** Endings that may extend a question stem into a schema word (`enroll` → `enrollment`). */
const EXTENSIONS =
  /^(ment|ments|ion|ions|ation|ations|er|ers|or|ors|al|ity|ness|ship|ure|ee|ees|ing|ed|ive|ance|ence|ant|ent|ist|ists|ism)$/;

/** Pairs that look derived but mean different things. */
const FALSE_FRIENDS: ReadonlySet<string> = new Set([
  'state statement',
  'count counter',
  'form former',
  'part partition',
  'season seasoning',
  'order orderer',
  'present presentation',
  'rate ration',
]);

/**
 * How well a question stem matches a schema stem, in [0, 1]: 1 for equal stems; 0.7 when one
 * extends the other by a derivational ending (`enroll`/`enrollment`, `depart`/`departure`; ≥ 4
 * letters); 0.6 for one typo in words of ≥ 6 letters; 0 otherwise (`count`/`county` do not match).
 * Numbers match only exactly.
 */
export function matchQuality(questionStem: string, schemaStem: string): number {
  if (questionStem === schemaStem) return 1;
  if (
    FALSE_FRIENDS.has(`${questionStem} ${schemaStem}`) ||
    FALSE_FRIENDS.has(`${schemaStem} ${questionStem}`)
  )
    return 0;
  if (/\d/.test(questionStem) || /\d/.test(schemaStem)) return 0;
  const [short, long] =
    questionStem.length <= schemaStem.length ? [questionStem, schemaStem] : [schemaStem, questionStem];
  if (short.length >= 4 && long.startsWith(short) && EXTENSIONS.test(long.slice(short.length))) return 0.7;
  if (short.length >= 6 && editDistance(questionStem, schemaStem, 1) <= 1) return 0.6;
  return 0;
}

/**
 * Conventional prefixes that schemas put before table names (`tbl_orders`, `dim_customer`,
 * `stg_events`). A schema's own prefix (two to four letters that several of its table names start
 * with) is learned from the schema instead, see {@link learnNamePrefixes}.
 */
const NAME_PREFIX = /^(tbl|tb|dim|fact|fct|raw|src|ref|lkp|lookup|tmp|temp|stg|vw)$/;

/** Whether `piece` is a conventional table-name prefix (`tbl`, `dim`, `stg`, …). */
export function isConventionalPrefix(piece: string): boolean {
  return NAME_PREFIX.test(piece);
}

/**
 * A schema's own name prefixes: leading pieces of 2–4 letters that at least `minTables` (default 3)
 * single-word table names start with, where what follows is at least 4 letters (`xyorder`,
 * `xycustomer`, `xyinvoice` → `xy`). Only prefixes that are not themselves vocabulary words count
 * (`isPart`), so `cart`, `carrier`, `cargo` do not make `car` a prefix.
 */
export function learnNamePrefixes(
  tableNames: readonly string[],
  isPart: (part: string) => boolean,
  minTables = 3,
): Set<string> {
  const counts = new Map<string, number>();
  for (const raw of tableNames) {
    const name = raw.toLowerCase();
    if (!/^[a-z]+$/.test(name)) continue;
    for (let length = 2; length <= 4; length += 1) {
      if (name.length - length < 4) break;
      const piece = name.slice(0, length);
      counts.set(piece, (counts.get(piece) ?? 0) + 1);
    }
  }
  const out = new Set<string>();
  for (const [piece, count] of counts) if (count >= minTables && !isPart(piece)) out.add(piece);
  return out;
}

/**
 * Whether a compound identifier word (no separators) is made of `questionStem` and other known
 * parts: `orderline` = `order` + `line`, `tbldailyrate` = `tbl` + `daily` + `rate`,
 * `customerid` = `customer` + `id`; but not `discount` ∌ `count` or `county` ∌ `count`. `isPart`
 * says whether a piece (≥ 2 letters) is a word of the vocabulary; unknown pieces of ≥ 4 letters
 * count too unless they are derivational endings (`statement` ∌ `state`); the word may start with
 * a table prefix (`isPrefix`: conventional ones such as `tbl`, `dim`, plus the schema's own) and
 * end with a plural `s`.
 */
export function compoundMatch(
  word: string,
  questionStem: string,
  isPart: (part: string) => boolean,
  isPrefix: (piece: string) => boolean = isConventionalPrefix,
): boolean {
  if (questionStem.length < 4 || word.length <= questionStem.length) return false;
  if (
    matchQuality(questionStem, word) === 0 &&
    [...FALSE_FRIENDS].some((pair) => pair === `${questionStem} ${word}`)
  )
    return false;
  for (let at = word.indexOf(questionStem); at >= 0; at = word.indexOf(questionStem, at + 1)) {
    const before = word.slice(0, at);
    const after = word.slice(at + questionStem.length);
    const beforeOk = before === '' || segments(before, isPart, isPrefix);
    const afterOk = after === '' || after === 's' || segments(after, isPart, () => false);
    if (beforeOk && afterOk) return true;
  }
  return false;
}

/** Whether `text` splits into vocabulary pieces of ≥ 2 letters (optionally after a name prefix). */
function segments(
  text: string,
  isPart: (part: string) => boolean,
  isPrefix: (piece: string) => boolean,
): boolean {
  const ok: boolean[] = new Array(text.length + 1).fill(false);
  ok[0] = true;
  for (let end = 1; end <= text.length; end += 1) {
    for (let start = 0; start < end && !ok[end]; start += 1) {
      if (!ok[start]) continue;
      const piece = text.slice(start, end);
      if (
        (piece.length >= 2 && isPart(piece)) ||
        (piece.length >= 4 && !EXTENSIONS.test(piece)) ||
        (start === 0 && isPrefix(piece))
      )
        ok[end] = true;
    }
  }
  return ok[text.length]!;
}
