/**
 * A MySQL/MariaDB lexer pass in front of the parser, written to read text the way the server does
 * under the session's forced `sql_mode` (backslash escapes on, `ANSI_QUOTES` off): strings
 * `'…'` and `"…"` (backslash escapes, doubled quotes), identifiers in backticks, comments `#…`,
 * `-- …` (a space or control character after the dashes) and `/* … *\/` (not nested).
 *
 * It yields two texts: `sql`, the statement to run (comments replaced by a space, no trailing
 * semicolon), and `skeleton`, the same with every string literal replaced by a fixed placeholder,
 * which is what the parser sees. The parser thus never decides where a string ends: that decision
 * is made once, here, the same way as the server, so a quote the parser would read differently
 * cannot hide a call inside what it takes for a string.
 *
 * Refused (fail closed) rather than guessed: executable comments (`/*!…*\/`, MariaDB's `/*M!…*\/`),
 * `--` followed by anything but whitespace (MySQL reads `1--1` as arithmetic, many tools as a
 * comment), unterminated strings or comments, backslashes, braces (ODBC escapes) outside strings,
 * backtick identifiers holding quotes or backslashes, NUL bytes, and text after a semicolon.
 */

/** What {@link lexMysql} made of a text. */
export type MysqlLexResult =
  | { ok: true; sql: string; skeleton: string }
  | {
      ok: false;
      reason: string;
      rule: 'nul-byte' | 'executable-comment' | 'lexical' | 'multiple-statements' | 'empty';
    };

const WHITESPACE = /[\s\u0000-\u001f]/;

/**
 * Splits `text` into the runnable statement and the parser's skeleton, or refuses.
 * Never throws.
 */
export function lexMysql(text: string): MysqlLexResult {
  if (text.includes('\0'))
    return { ok: false, reason: 'refused: the text contains a NUL byte', rule: 'nul-byte' };
  let sql = '';
  let skeleton = '';
  let ended = false;
  let i = 0;
  const n = text.length;
  const lexical = (reason: string): MysqlLexResult => ({
    ok: false,
    reason: `refused: ${reason}`,
    rule: 'lexical',
  });
  while (i < n) {
    const c = text[i]!;
    const next = text[i + 1];
    // Comments first: they may follow the final semicolon.
    if (c === '#' || (c === '-' && next === '-')) {
      if (c === '-' && i + 2 < n && !WHITESPACE.test(text[i + 2]!))
        return lexical(
          '"--" must be followed by a space to start a comment (MySQL reads "1--1" as arithmetic); write "- -" for a double minus',
        );
      const end = text.indexOf('\n', i);
      i = end === -1 ? n : end + 1;
      sql += ' ';
      skeleton += ' ';
      continue;
    }
    if (c === '/' && next === '*') {
      const third = text[i + 2];
      if (third === '!' || (third === 'M' && text[i + 3] === '!') || third === '+')
        return {
          ok: false,
          reason:
            'refused: executable comments and optimizer hints (/*! … */, /*M! … */, /*+ … */) run as SQL on the server; they are not accepted',
          rule: 'executable-comment',
        };
      const end = text.indexOf('*/', i + 2);
      if (end === -1) return lexical('the text has an unterminated /* comment');
      i = end + 2;
      sql += ' ';
      skeleton += ' ';
      continue;
    }
    if (WHITESPACE.test(c)) {
      sql += c;
      skeleton += c;
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
    if (c === "'" || c === '"') {
      let j = i + 1;
      for (;;) {
        if (j >= n) return lexical('the text has an unterminated string');
        const d = text[j]!;
        if (d === '\\') j += 2;
        else if (d === c && text[j + 1] === c) j += 2;
        else if (d === c) break;
        else j += 1;
      }
      sql += text.slice(i, j + 1);
      // A hex or bit literal keeps a valid body for the parser; any other string becomes 's'.
      const prefix =
        /[xXbB]$/.test(skeleton) && !/[A-Za-z0-9_$]{2}$/.test(skeleton) ? skeleton.slice(-1) : '';
      skeleton += prefix === '' ? "'s'" : prefix === 'x' || prefix === 'X' ? "'00'" : "'0'";
      i = j + 1;
      continue;
    }
    if (c === '`') {
      const end = text.indexOf('`', i + 1);
      if (end === -1) return lexical('the text has an unterminated `identifier`');
      const body = text.slice(i + 1, end);
      if (text[end + 1] === '`' || /['"\\]/.test(body))
        return lexical('identifiers holding backticks, quotes or backslashes are not accepted');
      sql += text.slice(i, end + 1);
      skeleton += text.slice(i, end + 1);
      i = end + 1;
      continue;
    }
    if (c === '\\' || c === '{' || c === '}') return lexical(`"${c}" outside a string is not accepted`);
    sql += c;
    skeleton += c;
    i += 1;
  }
  if (sql.trim() === '') return { ok: false, reason: 'refused: there is no SQL statement', rule: 'empty' };
  return { ok: true, sql: sql.trim(), skeleton: skeleton.trim() };
}
