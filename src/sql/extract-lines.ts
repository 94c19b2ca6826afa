/**
 * Line and keyword heuristics for {@link extractSql} (see `extract.ts`): which words may start a
 * statement, which lines are prose, which tokens leave a statement unfinished. Kept apart so the
 * rules can be read (and extended) as data.
 */

/**
 * How each statement keyword must continue to count as the start of a statement in free text.
 * `lower: true` lets the keyword start a statement in lower/title case too (then the line must
 * not read like English). Keywords not listed use {@link genericShape} and must be UPPERCASE in
 * prose (lower case is accepted at the top of a code fence).
 */
export const STATEMENT_SHAPES: Readonly<Record<string, { shape: RegExp; lower: boolean }>> = {
  select: { shape: /^select(?=[\s*(]|$)/i, lower: true },
  with: {
    shape:
      /^with\s+(?:recursive\s+)?(?:"[^"]+"|[\w$]+)\s*(?:\([^)]*\)\s*)?as\s*(?:not\s+)?(?:materialized\s*)?\(/i,
    lower: true,
  },
  values: { shape: /^values\s*\(/i, lower: true },
  table: {
    shape: /^table\s+(?:only\s+)?(?:"[^"]+"|[\w$]+)(?:\.(?:"[^"]+"|[\w$]+))?\s*(?:;|\n|$)/i,
    lower: true,
  },
  explain: {
    shape:
      /^explain\s+(?:\(|(?:analy[sz]e|verbose|select|with|values|table|insert|update|delete|merge|create|execute)\b)/i,
    lower: true,
  },
  insert: { shape: /^insert\s+into\s/i, lower: true },
  update: { shape: /^update\s+(?:only\s+)?\S+(?:\s+(?:as\s+)?[\w$]+)?\s+set\s/i, lower: true },
  delete: { shape: /^delete\s+from\s/i, lower: true },
  merge: { shape: /^merge\s+into\s/i, lower: true },
  copy: { shape: /^copy\s+(?:\(|(?:"[^"]+"|[\w$.]+)\s*(?:\(|to\b|from\b))/i, lower: true },
  truncate: { shape: /^truncate\s+(?:table\s+)?(?:only\s+)?[\w"$.]+/i, lower: false },
  create: { shape: ddlShape('create'), lower: false },
  drop: { shape: ddlShape('drop'), lower: false },
  alter: { shape: ddlShape('alter'), lower: false },
};

/** Other words that start PostgreSQL statements (they only need to be followed by something). */
export const OTHER_STATEMENT_WORDS: ReadonlySet<string> = new Set([
  'abort',
  'analyze',
  'begin',
  'call',
  'checkpoint',
  'close',
  'cluster',
  'comment',
  'commit',
  'deallocate',
  'declare',
  'discard',
  'do',
  'end',
  'execute',
  'fetch',
  'grant',
  'import',
  'listen',
  'load',
  'lock',
  'move',
  'notify',
  'prepare',
  'reassign',
  'refresh',
  'reindex',
  'release',
  'reset',
  'revoke',
  'rollback',
  'savepoint',
  'security',
  'set',
  'show',
  'start',
  'unlisten',
  'vacuum',
]);

function ddlShape(verb: string): RegExp {
  const objects =
    'table|view|index|schema|database|function|procedure|role|user|sequence|extension|trigger|type|policy|domain|' +
    'rule|publication|subscription|server|aggregate|operator|language|event|cast|collation|conversion|tablespace|' +
    'statistics|owned|group|access|default|text|transform|large|routine|system';
  const modifiers =
    'temp|temporary|unlogged|materialized|unique|global|local|foreign|recursive|trusted|procedural';
  return new RegExp(`^${verb}\\s+(?:or\\s+replace\\s+)?(?:(?:${modifiers})\\s+)*(?:${objects})\\b`, 'i');
}

const GENERIC_SHAPE = /^[a-z]+(?=\s*(?:;|$)|\s+\S)/i;

/** True when `word` (any case) can start a statement. */
export function isStatementWord(word: string): boolean {
  const lower = word.toLowerCase();
  return lower in STATEMENT_SHAPES || OTHER_STATEMENT_WORDS.has(lower);
}

/**
 * Whether the text at `rest` (starting with a statement word) looks like the start of a statement.
 * `code` relaxes the upper-case rule for the generic words (inside a code fence).
 */
export function looksLikeStatementStart(rest: string, code: boolean): boolean {
  const word = /^[A-Za-z]+/.exec(rest)?.[0];
  if (!word) return false;
  const lower = word.toLowerCase();
  const known = STATEMENT_SHAPES[lower];
  const upper = word === word.toUpperCase();
  if (known) {
    if (!known.shape.test(rest)) return false;
    if (upper) return true;
    if (!known.lower && !code) return false;
  } else {
    if (!OTHER_STATEMENT_WORDS.has(lower) || !GENERIC_SHAPE.test(rest)) return false;
    if (upper) return true;
    if (!code) return false;
  }
  const nl = rest.indexOf('\n');
  return !readsLikeEnglish(nl < 0 ? rest : rest.slice(0, nl));
}

const ENGLISH_WORDS =
  /\b(?:the|this|these|those|which|you|your|we|our|please|will|should|would|following)\b/i;

/** True when a line (string literals aside) reads like an English sentence. */
export function readsLikeEnglish(line: string): boolean {
  const bare = line.replace(/'[^']*'/g, "''").trim();
  if (ENGLISH_WORDS.test(bare)) return true;
  return /[.!?:]$/.test(bare) && !/[(),=*<>]/.test(bare) && bare.split(/\s+/).length >= 3;
}

const LABEL_LINE = /^[\s*_#>]*[A-Za-z][A-Za-z0-9 _-]{0,40}[*_]{0,2}:[*_]{0,2}(?:\s|$)/;
const MARKDOWN_LINE = /^(?:#{1,6}\s|\|(?!\|)|```|~~~|<\/?[A-Za-z|][^>]*>)/;
/** A list item at column 0 starting with a capital (an indented `- interval '1 day'` stays SQL). */
const LIST_ITEM_LINE = /^(?:[-*+]|\d+[.)])\s+[A-Z]/;
const OPENER_LINE =
  /^(?:This|The|These|Those|That|It|Its|It's|Here|Here's|Note|Explanation|We|You|I|I'm|If|Please|Alternatively|Also|However|Assuming|Since|Because|Finally|Now|Let|Let's|Hope|In|For|To|When|Make|Remember|Replace|Just|Feel|Running|Executing|Breakdown|How|What|Why|Which|Based|Given|Using|After|Before|Once|Then|Explaining|Thus|So|Therefore|Overall|Lastly)\b[,']?\s+\S/;

/** True when a line is clearly prose (a label, markdown, an English sentence), never SQL. */
export function isProseLine(line: string): boolean {
  const trimmed = line.trim();
  if (trimmed === '') return false;
  if (LABEL_LINE.test(trimmed) && !/^[\w.]+::/.test(trimmed)) return true;
  if (MARKDOWN_LINE.test(trimmed) || OPENER_LINE.test(trimmed) || LIST_ITEM_LINE.test(line)) return true;
  return /^[A-Z][a-z]+(?:'[a-z]+)?,?\s+[a-z]/.test(trimmed) && readsLikeEnglish(trimmed);
}

/** Words after which a statement cannot end (it continues on the next line). */
export const CONTINUATION_WORDS: ReadonlySet<string> = new Set([
  'all',
  'and',
  'as',
  'between',
  'by',
  'case',
  'cross',
  'distinct',
  'do',
  'else',
  'except',
  'exists',
  'for',
  'from',
  'full',
  'group',
  'having',
  'ilike',
  'in',
  'inner',
  'intersect',
  'into',
  'is',
  'join',
  'lateral',
  'left',
  'like',
  'limit',
  'materialized',
  'natural',
  'not',
  'offset',
  'on',
  'or',
  'order',
  'outer',
  'over',
  'partition',
  'recursive',
  'returning',
  'right',
  'select',
  'set',
  'then',
  'union',
  'using',
  'values',
  'when',
  'where',
  'window',
  'with',
]);

/** Punctuation after which a statement cannot end. */
export const CONTINUATION_PUNCT: ReadonlySet<string> = new Set([
  ',',
  '(',
  '=',
  '<',
  '>',
  '+',
  '-',
  '*',
  '/',
  '|',
  '%',
  '.',
  ':',
  '!',
  '~',
  '^',
  '&',
]);

/** Words that begin the body of a `WITH` statement once its common table expressions are listed. */
export const WITH_BODY_WORDS: ReadonlySet<string> = new Set([
  'select',
  'values',
  'table',
  'insert',
  'update',
  'delete',
  'merge',
]);

/** Statement words whose statement may legitimately continue with a SELECT on a new line. */
export const NO_SPLIT_WORDS: ReadonlySet<string> = new Set([
  'insert',
  'create',
  'explain',
  'declare',
  'prepare',
]);
