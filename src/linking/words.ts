/**
 * Words for lexical schema linking: identifiers split into words (`snake_case`, `camelCase`,
 * digits), a light English stemmer so `orders`/`order` and `categories`/`category` meet, and a
 * fuzzy comparison for typos and prefixes (`enroll`/`enrollment`). Deterministic, no dependencies.
 */

/**
 * Words that carry no table meaning in questions ("how many … per … in each …"). Deliberately
 * small: domain words such as `total`, `date` or `name` stay, IDF down-weights them instead.
 */
const STOP_WORDS: ReadonlySet<string> = new Set(
  (
    'a about above after again all also am an and any are as at be been before being below between both but by ' +
    'can could did do does doing done during each either else every few for from get give given had has have ' +
    'having he her here hers him his how i if in include including inclusive into is it its just last least let ' +
    'like list many me more most much my no not now of off on once one only or other our out over own per please ' +
    'return returned same she should show so some such than that the their them then there these they this those ' +
    'through to too top under until up us very was we were what when where which while who whom whose why will ' +
    'with within would you your'
  ).split(' '),
);

/** True for words that never count as evidence on their own. */
export function isStopWord(word: string): boolean {
  return STOP_WORDS.has(word);
}

/** Irregular forms that suffix rules cannot reach, mapped to the stem of their base form. */
const IRREGULAR: Readonly<Record<string, string>> = {
  people: 'person',
  persons: 'person',
  children: 'child',
  men: 'man',
  women: 'woman',
  // Irregular past forms of common verbs (general English; the suffix rules cannot undo them).
  sold: 'sell',
  bought: 'buy',
  paid: 'pay',
  spent: 'spend',
  made: 'make',
  gave: 'give',
  given: 'give',
  took: 'take',
  taken: 'take',
  taught: 'teach',
  held: 'hold',
  led: 'lead',
  won: 'win',
  ran: 'run',
  wrote: 'write',
  written: 'write',
  flew: 'fly',
  flown: 'fly',
  data: 'data',
  status: 'status',
  statuses: 'status',
  address: 'address',
  addresses: 'address',
  analysis: 'analysis',
  series: 'series',
  news: 'news',
};

/**
 * Light stem of a lower-case word: plural and a few verb endings removed (`categories` →
 * `category`, `boxes` → `box`, `orders` → `order`, `enrolled` → `enroll`, `shipping` → `ship`).
 * Not Porter: it only conflates forms a question and a column name plausibly share.
 */
export function stem(word: string): string {
  const irregular = IRREGULAR[word];
  if (irregular) return irregular;
  if (word.length <= 3 || /\d/.test(word)) return word;
  if (word.endsWith('ies') && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(ss|us|is)$/.test(word)) return word;
  if (/(ches|shes|sses|xes|zes)$/.test(word)) return word.slice(0, -2);
  if (word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  if (word.endsWith('ing') && word.length >= 6) return restoreE(undouble(word.slice(0, -3)));
  if (word.endsWith('ed') && word.length >= 5) return restoreE(undouble(word.slice(0, -2)));
  return word;
}

/** `plac` → `place`, `rat` → `rate`, `creat` → `create` (the `e` that `-ed`/`-ing` swallowed). */
function restoreE(word: string): string {
  return /(c|v|z|at|iz|ur|ag|os)$/.test(word) ? `${word}e` : word;
}

/** `shipp` → `ship`, `enroll` stays (double l is common in stems). */
function undouble(word: string): string {
  return /([bdgmnprt])\1$/.test(word) ? word.slice(0, -1) : word;
}

/**
 * Splits an identifier or phrase into lower-case words: on anything that is not a letter or digit,
 * on `camelCase` boundaries and between letters and digits (`OrderItems2` → `order items 2`).
 */
export function splitWords(text: string): string[] {
  return (
    text
      .normalize('NFKC')
      .replace(/([\p{Ll}\d])(\p{Lu})/gu, '$1 $2')
      .replace(/(\p{Lu})(\p{Lu}\p{Ll})/gu, '$1 $2')
      .replace(/(\p{L})(\d)/gu, '$1 $2')
      .replace(/(\d)(\p{L})/gu, '$1 $2')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? []
  );
}

/** Stems of the non-stop words of `text`, in order (duplicates kept). */
export function terms(text: string): string[] {
  return splitWords(text)
    .filter((word) => !isStopWord(word))
    .map(stem);
}

/** Damerau–Levenshtein distance (optimal string alignment), stopping early above `max`. */
export function editDistance(a: string, b: string, max = 2): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i += 1) {
    let rowMin = Number.POSITIVE_INFINITY;
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = value;
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
  }
  return d[a.length]![b.length]!;
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
