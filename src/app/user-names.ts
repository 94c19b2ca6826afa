/**
 * User-name identity for multi-user `serve`. Two names denote the same account
 * when they are equal after Unicode NFKC and case folding ({@link userNameKey}); a new name is also
 * refused when it mixes scripts ({@link scriptsOf}) or when it looks like an existing name
 * ({@link confusableSkeleton}). Sources: Unicode UAX #15 (NFKC), UTS #39 "Unicode Security
 * Mechanisms" §4 (confusable skeletons) and §5.2 ("Highly Restrictive" script mixing: one script,
 * or Latin with the Han-based combinations of Japanese, Chinese and Korean). The confusables
 * list below is a small, hand-picked subset of UTS #39 `confusables.txt` covering the Latin
 * look-alikes of Cyrillic, Greek and common digits; NFKC already folds full-width and other
 * compatibility forms (`ａｌｉｃｅ` → `alice`).
 */

/**
 * The identity key of a user name: NFKC, then case folded (JavaScript has no full case fold; we
 * approximate it with `toLowerCase` and a second NFKC, which covers the cases UTS #39 names).
 */
export function userNameKey(name: string): string {
  return name.normalize('NFKC').toLowerCase().normalize('NFKC');
}

/**
 * Confusable characters → the Latin letter or digit they look like (subset of UTS #39
 * `confusables.txt`, lower-case forms only because keys are case folded first). Digits `0`/`1`
 * map to `o`/`l` as in UTS #39, so `b0b` looks like `bob`.
 */
export const CONFUSABLES: Readonly<Record<string, string>> = {
  // Cyrillic
  а: 'a',
  в: 'b',
  е: 'e',
  ё: 'e',
  һ: 'h',
  і: 'i',
  ї: 'i',
  ј: 'j',
  к: 'k',
  м: 'm',
  н: 'h',
  о: 'o',
  р: 'p',
  с: 'c',
  т: 't',
  у: 'y',
  х: 'x',
  ѕ: 's',
  ԁ: 'd',
  ԛ: 'q',
  ԝ: 'w',
  ɡ: 'g',
  // Greek
  α: 'a',
  β: 'b',
  ε: 'e',
  η: 'n',
  ι: 'i',
  κ: 'k',
  ν: 'v',
  ο: 'o',
  ρ: 'p',
  τ: 't',
  υ: 'u',
  χ: 'x',
  // Latin look-alikes and digits
  ı: 'i',
  ȷ: 'j',
  ł: 'l',
  '0': 'o',
  '1': 'l',
  '|': 'l',
};

/** The UTS #39 skeleton of a name: its key with every confusable replaced by its prototype. */
export function confusableSkeleton(name: string): string {
  let out = '';
  for (const char of userNameKey(name)) out += CONFUSABLES[char] ?? char;
  // "rn" reads as "m" in most fonts (UTS #39 maps it so too).
  return out.replaceAll('rn', 'm');
}

/** Scripts told apart for the mixing rule; a letter in none of them counts as "Other". */
const SCRIPTS = [
  'Latin',
  'Cyrillic',
  'Greek',
  'Armenian',
  'Georgian',
  'Hebrew',
  'Arabic',
  'Devanagari',
  'Bengali',
  'Tamil',
  'Thai',
  'Han',
  'Hiragana',
  'Katakana',
  'Hangul',
  'Bopomofo',
] as const;

const SCRIPT_PATTERNS = SCRIPTS.map(
  (script) => [script, new RegExp(`^\\p{Script=${script}}$`, 'u')] as const,
);

/** The scripts of the letters of `name` (digits and punctuation are script-neutral). */
export function scriptsOf(name: string): Set<string> {
  const scripts = new Set<string>();
  for (const char of name.normalize('NFKC')) {
    if (!/^\p{L}$/u.test(char)) continue;
    scripts.add(SCRIPT_PATTERNS.find(([, pattern]) => pattern.test(char))?.[0] ?? 'Other');
  }
  return scripts;
}

/** Script combinations allowed in one name beside a single script (UTS #39 "Highly Restrictive"). */
const ALLOWED_MIXES: readonly (readonly string[])[] = [
  ['Latin', 'Han', 'Hiragana', 'Katakana'],
  ['Latin', 'Han', 'Bopomofo'],
  ['Latin', 'Han', 'Hangul'],
];

/**
 * Why `name` may not be added beside `existing` names, or undefined when it may. Checks, in
 * order: script mixing, then for each existing name the same key (NFKC + case fold) and the same
 * confusable skeleton.
 */
export function userNameConflict(name: string, existing: readonly string[]): string | undefined {
  const scripts = [...scriptsOf(name)];
  if (scripts.length > 1 && !ALLOWED_MIXES.some((mix) => scripts.every((s) => mix.includes(s))))
    return `The name ${JSON.stringify(name)} mixes scripts (${scripts.join(' and ')}); use letters of one script so it cannot impersonate another name.`;
  const key = userNameKey(name);
  const skeleton = confusableSkeleton(name);
  for (const other of existing) {
    if (userNameKey(other) === key)
      return `The name ${JSON.stringify(name)} is the same as the existing user ${JSON.stringify(other)} once Unicode-normalized and case-folded.`;
    if (confusableSkeleton(other) === skeleton)
      return `The name ${JSON.stringify(name)} looks like the existing user ${JSON.stringify(other)} (confusable characters); choose a clearly different name.`;
  }
  return undefined;
}
