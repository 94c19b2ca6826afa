/**
 * A SQLite lexer pass in front of the guard's checks, reading text the way SQLite's tokenizer
 * does: strings `'…'` (a doubled quote inside, no backslash escapes), identifiers `"…"`, `[…]` and
 * `` `…` `` (the doubled closing quote inside), blob literals `x'…'`, comments `-- …` (to the end of
 * the line) and `/* … *\/`.
 *
 * It yields the statement to run (`sql`: comments replaced by a space, no trailing semicolon) and
 * its tokens, so the checks never decide where a string or a quoted name ends: that decision is made
 * once, here, the same way as the engine. Refused (fail closed) rather than guessed: NUL bytes,
 * unterminated strings, identifiers or comments, bound parameters (`?`, `:x`, `@x`, `$x`: nothing
 * would bind them), characters SQLite does not accept outside a string, and text after a semicolon.
 */

/** One token of a statement. */
export type SqliteToken =
  | { kind: 'word'; text: string; lower: string }
  | { kind: 'quoted'; text: string; name: string }
  | { kind: 'string' | 'blob' | 'number'; text: string }
  | { kind: 'punct'; text: string };

/** True when `token` is the punctuation `text`. */
export function isPunct(token: SqliteToken | undefined, text: string): boolean {
  return token?.kind === 'punct' && token.text === text;
}

/** True when `token` is the unquoted word `word` (lower case), in any case. */
export function isWord(token: SqliteToken | undefined, word: string): boolean {
  return token?.kind === 'word' && token.lower === word;
}

/** Index of the `)` matching the `(` at `open`, looking before `end` (default: all); -1 when unbalanced. */
export function closingParen(tokens: readonly SqliteToken[], open: number, end = tokens.length): number {
  let depth = 0;
  for (let i = open; i < end; i += 1) {
    if (isPunct(tokens[i], '(')) depth += 1;
    else if (isPunct(tokens[i], ')')) {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return -1;
}

/** What {@link lexSqlite} made of a text. */
export type SqliteLexResult =
  | { ok: true; sql: string; tokens: SqliteToken[] }
  | {
      ok: false;
      reason: string;
      rule: 'nul-byte' | 'lexical' | 'multiple-statements' | 'empty' | 'parameter';
    };

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_PART = /[A-Za-z0-9_$\u0080-\uffff]/;
const SPACE = /[\s]/;
/** Punctuation SQLite reads, longest first. */
const PUNCT = [
  '||',
  '->>',
  '->',
  '<=',
  '>=',
  '==',
  '!=',
  '<>',
  '<<',
  '>>',
  '(',
  ')',
  ',',
  '.',
  '+',
  '-',
  '*',
  '/',
  '%',
  '<',
  '>',
  '=',
  '&',
  '|',
  '~',
];

/** Splits `text` into tokens and the runnable statement, or refuses. Never throws. */
export function lexSqlite(text: string): SqliteLexResult {
  if (text.includes('\0'))
    return { ok: false, reason: 'refused: the text contains a NUL byte', rule: 'nul-byte' };
  const tokens: SqliteToken[] = [];
  let sql = '';
  let ended = false;
  let i = 0;
  const n = text.length;
  const lexical = (reason: string): SqliteLexResult => ({
    ok: false,
    reason: `refused: ${reason}`,
    rule: 'lexical',
  });
  /** The end (exclusive) of a quoted run opened at `i` by `open` and closed by `close` (doubled inside). */
  const quotedEnd = (close: string, doubled: boolean): number => {
    let j = i + 1;
    for (;;) {
      if (j >= n) return -1;
      if (text[j] === close) {
        if (doubled && text[j + 1] === close) j += 2;
        else return j + 1;
      } else j += 1;
    }
  };
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '-' && next === '-') {
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
      sql += ' ';
      continue;
    }
    if (c === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      if (end === -1) return lexical('the text has an unterminated /* comment');
      i = end + 2;
      sql += ' ';
      continue;
    }
    if (SPACE.test(c)) {
      sql += c;
      i += 1;
      continue;
    }
    if (ended)
      return { ok: false, reason: 'refused: only one statement is allowed', rule: 'multiple-statements' };
    if (c === ';') {
      ended = true;
      i += 1;
      continue;
    }
    let token: SqliteToken;
    let end: number;
    if ((c === 'x' || c === 'X') && next === "'") {
      i += 1;
      end = quotedEnd("'", false);
      i -= 1;
      if (end === -1) return lexical('the text has an unterminated blob literal');
      token = { kind: 'blob', text: text.slice(i, end) };
    } else if (c === "'") {
      end = quotedEnd("'", true);
      if (end === -1) return lexical('the text has an unterminated string');
      token = { kind: 'string', text: text.slice(i, end) };
    } else if (c === '"' || c === '`' || c === '[') {
      const close = c === '[' ? ']' : c;
      end = quotedEnd(close, c !== '[');
      if (end === -1) return lexical(`the text has an unterminated quoted name (${c}…)`);
      const body = text.slice(i + 1, end - 1);
      token = {
        kind: 'quoted',
        text: text.slice(i, end),
        name: c === '[' ? body : body.split(close + close).join(close),
      };
    } else if (WORD_START.test(c)) {
      end = i + 1;
      while (end < n && WORD_PART.test(text[end]!)) end += 1;
      const word = text.slice(i, end);
      token = { kind: 'word', text: word, lower: word.toLowerCase() };
    } else if (/[0-9]/.test(c) || (c === '.' && next !== undefined && /[0-9]/.test(next))) {
      const match = /^(0x[0-9a-f]+|(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?)/i.exec(text.slice(i))!;
      end = i + match[0].length;
      if (end < n && WORD_PART.test(text[end]!))
        return lexical(`"${text.slice(i, end + 1)}" is not a number`);
      token = { kind: 'number', text: match[0] };
    } else if (c === '?' || c === ':' || c === '@' || c === '$' || c === '#') {
      return {
        ok: false,
        reason: `refused: bound parameters (${c}…) are not accepted; write the value into the statement`,
        rule: 'parameter',
      };
    } else {
      const punct = PUNCT.find((p) => text.startsWith(p, i));
      if (!punct) return lexical(`"${c}" outside a string is not accepted`);
      end = i + punct.length;
      token = { kind: 'punct', text: punct };
    }
    tokens.push(token);
    sql += text.slice(i, end);
    i = end;
  }
  if (tokens.length === 0) return { ok: false, reason: 'refused: there is no SQL statement', rule: 'empty' };
  return { ok: true, sql: sql.trim(), tokens };
}
