/**
 * The one text toolkit of the project: stop words, the light English
 * stemmer, identifier word splitting and a bounded edit distance. Schema linking, memory term
 * matching, the identifier check and the empty-result check all use these; nothing here imports
 * from another layer. Deterministic, no dependencies.
 *
 * Stop words come in two sets built from shared parts, because the two users need different
 * things: a schema-linking question drops every word that cannot name a table or column
 * ("how many … per … in the top …"), while a memory term keeps words that make a definition
 * selective ("top customers", "last quarter") and drops the verbs that phrase a definition
 * ("X means …", "call it …"), which can be schema words (`calls`) and so stay in questions.
 */

/** Function words that carry no meaning in a question or a defined term (both sets hold them). */
const FUNCTION_WORDS =
  'a all and any are as at be by did do does for from get give has have how i in is it list many me much my ' +
  'of on or our show some that the this to was we what when which who with you your an';

/**
 * Words that phrase a question but name nothing in a schema (quantifiers, prepositions, pronouns,
 * `top`, `last`, `per`); dropped from questions only, since they are selective in a defined term.
 */
const QUESTION_FRAME_WORDS =
  'about above after again also am any before being below between both but can could doing done during each ' +
  'either else every few given had having he her here hers him his if include including inclusive into its ' +
  'just last least let like more most no not now off once one only other out over own per please return ' +
  'returned same she should so such than their them then there these they those through too top under until ' +
  'up us very were where while whom whose why will within would been';

/** Words that phrase a definition or a request to remember ("X means …", "tell me"). */
const DEFINITION_WORDS = 'shows tell means mean meaning defined define called call refers refer say';

const wordsOf = (...lists: string[]): ReadonlySet<string> =>
  new Set(lists.join(' ').split(' ').filter(Boolean));

/**
 * Stop words of a question for schema linking (about 150 words): function words plus question
 * framing. Deliberately small otherwise: domain words such as `total`, `date` or `name` stay, IDF
 * down-weights them instead.
 */
export const QUESTION_STOP_WORDS: ReadonlySet<string> = wordsOf(FUNCTION_WORDS, QUESTION_FRAME_WORDS);

/**
 * Stop words of a memory's defined term and of the question it is matched against (about 60
 * words): function words plus the verbs that phrase a definition.
 */
export const TERM_STOP_WORDS: ReadonlySet<string> = wordsOf(FUNCTION_WORDS, DEFINITION_WORDS);

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
 * Light stem of a lower-case word: a possessive `'s`/`'` dropped, plural and a few verb endings
 * removed (`categories` → `category`, `boxes` → `box`, `orders` → `order`, `customer's` →
 * `customer`, `enrolled` → `enroll`, `shipping` → `ship`), irregular forms mapped (`people` →
 * `person`, `sold` → `sell`). Words of ≤ 3 letters and words with digits stay. Not Porter: it
 * only conflates forms a question, a column name and a defined term plausibly share.
 */
export function stem(input: string): string {
  const word = input.replace(/'s?$/u, '');
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

/**
 * Edit distance of two strings counted in UTF-16 code units: insertions, deletions, substitutions
 * and transpositions of two adjacent characters each cost 1 (Damerau–Levenshtein, optimal string
 * alignment variant: `ordres` → `orders` is 1, `kitten` → `sitting` is 3). When the distance
 * exceeds `max` (default unbounded) the result is `max + 1` and the computation stops early.
 * O(|a|·|b|) time, O(|b|) memory.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (a === b) return 0;
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (a.length === 0 || b.length === 0) return Math.max(a.length, b.length);
  let before: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        value = Math.min(value, before[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > max) return max + 1;
    before = previous;
    previous = current;
  }
  const distance = previous[b.length]!;
  return distance > max ? max + 1 : distance;
}
