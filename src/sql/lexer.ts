/**
 * A small PostgreSQL-aware lexer: just enough to find statement boundaries in text a model wrote.
 * It knows string literals (`'…'` with `''`, `E'…'` with backslash escapes), quoted identifiers
 * (`"…"` with `""`), dollar quotes (`$tag$…$tag$`), line comments (`--`), nested block comments
 * (`/* … *\/`) and parentheses. It never throws: unterminated constructs run to the end of the
 * text and are flagged. The real parser (libpg-query, see `guard.ts`) has the last word.
 */

/** Kind of a {@link SqlToken}. `word` covers keywords, identifiers and numbers. */
export type SqlTokenType = 'word' | 'string' | 'ident' | 'dollar' | 'comment' | 'newline' | 'punct';

/** One token; `start`/`end` are UTF-16 offsets into the lexed text (`end` exclusive). */
export interface SqlToken {
  type: SqlTokenType;
  start: number;
  end: number;
  /** The token's text (for `punct` a single character). */
  text: string;
  /** Parenthesis depth before this token (never negative). */
  depth: number;
  /** True for a string, identifier, dollar quote or block comment that is never closed. */
  unterminated?: boolean;
}

const WORD_START = /[A-Za-z_\u0080-\uffff]/;
const WORD_CHAR = /[A-Za-z0-9_$\u0080-\uffff]/;
const NUMBER_CHAR = /[0-9A-Za-z_.]/;
const DOLLAR_TAG = /\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/y;

/**
 * Splits `text` (from offset `from`) into tokens. Whitespace other than newlines is skipped.
 * Offsets are into the whole `text`, so callers can slice the original.
 */
export function lexSql(text: string, from = 0): SqlToken[] {
  const tokens: SqlToken[] = [];
  let depth = 0;
  let i = from;
  const push = (type: SqlTokenType, start: number, end: number, unterminated = false): void => {
    const token: SqlToken = { type, start, end, text: text.slice(start, end), depth };
    if (unterminated) token.unterminated = true;
    tokens.push(token);
  };
  while (i < text.length) {
    const c = text[i]!;
    const next = text[i + 1];
    if (c === '\n') {
      push('newline', i, i + 1);
      i += 1;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v') {
      i += 1;
    } else if (c === '-' && next === '-') {
      const nl = text.indexOf('\n', i);
      const end = nl < 0 ? text.length : nl;
      push('comment', i, end);
      i = end;
    } else if (c === '/' && next === '*') {
      const end = skipBlockComment(text, i);
      push('comment', i, Math.abs(end), end < 0);
      i = Math.abs(end);
    } else if (c === "'") {
      const previous = tokens[tokens.length - 1];
      const escapes = previous?.type === 'word' && previous.end === i && /^[Ee]$/.test(previous.text);
      const end = skipQuoted(text, i, "'", escapes);
      push('string', i, Math.abs(end), end < 0);
      i = Math.abs(end);
    } else if (c === '"') {
      const end = skipQuoted(text, i, '"', false);
      push('ident', i, Math.abs(end), end < 0);
      i = Math.abs(end);
    } else if (c === '$' && !(i > 0 && WORD_CHAR.test(text[i - 1]!))) {
      DOLLAR_TAG.lastIndex = i;
      const tag = DOLLAR_TAG.exec(text)?.[0];
      if (tag) {
        const close = text.indexOf(tag, i + tag.length);
        const end = close < 0 ? text.length : close + tag.length;
        push('dollar', i, end, close < 0);
        i = end;
      } else {
        push('punct', i, i + 1);
        i += 1;
      }
    } else if (WORD_START.test(c)) {
      let j = i + 1;
      while (j < text.length && WORD_CHAR.test(text[j]!)) j += 1;
      push('word', i, j);
      i = j;
    } else if (c >= '0' && c <= '9') {
      let j = i + 1;
      while (j < text.length && NUMBER_CHAR.test(text[j]!)) j += 1;
      push('word', i, j);
      i = j;
    } else {
      if (c === ')') depth = Math.max(0, depth - 1);
      push('punct', i, i + 1);
      if (c === '(') depth += 1;
      i += 1;
    }
  }
  return tokens;
}

/** End offset of the quoted token starting at `start`, negated when it is never closed. */
function skipQuoted(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (backslashEscapes && c === '\\') {
      i += 2;
    } else if (c === quote) {
      if (text[i + 1] === quote) i += 2;
      else return i + 1;
    } else {
      i += 1;
    }
  }
  return -text.length;
}

/** End offset of the (nested) block comment starting at `start`, negated when never closed. */
function skipBlockComment(text: string, start: number): number {
  let nesting = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === '/' && text[i + 1] === '*') {
      nesting += 1;
      i += 2;
    } else if (text[i] === '*' && text[i + 1] === '/') {
      nesting -= 1;
      i += 2;
      if (nesting === 0) return i;
    } else {
      i += 1;
    }
  }
  return -text.length;
}

/** True for tokens that carry SQL meaning (not comments or newlines). */
export function isSignificant(token: SqlToken): boolean {
  return token.type !== 'comment' && token.type !== 'newline';
}

/**
 * Splits SQL text on top-level semicolons (outside strings, quoted identifiers, dollar quotes,
 * comments and parentheses), like psql does. Each piece runs from its first to its last significant
 * token: no semicolon, no leading or trailing comments or whitespace (inner comments stay). Pieces
 * holding only whitespace or comments are dropped.
 *
 * @example splitStatements("SELECT ';'; SELECT 2;") // ["SELECT ';'", 'SELECT 2']
 */
export function splitStatements(sql: string): string[] {
  const pieces: string[] = [];
  let firstSignificant = -1;
  let lastSignificantEnd = -1;
  const flush = (): void => {
    if (firstSignificant >= 0) pieces.push(sql.slice(firstSignificant, lastSignificantEnd));
    firstSignificant = -1;
    lastSignificantEnd = -1;
  };
  for (const token of lexSql(sql)) {
    if (token.type === 'punct' && token.text === ';' && token.depth === 0) {
      flush();
    } else if (isSignificant(token)) {
      if (firstSignificant < 0) firstSignificant = token.start;
      lastSignificantEnd = token.end;
    }
  }
  flush();
  return pieces;
}
