/**
 * Model text → exactly one SQL statement.
 *
 * Small local models wrap SQL in code fences (with or without a language tag, sometimes in bold),
 * prefix it with prose or labels (`SQLQuery:`, `SQL:`, `Answer:`), append explanations, or open
 * with a `<think>…</think>` reasoning block. The extractor finds the statement(s), never lets prose
 * through on purpose, and fails with one clear sentence when there is no statement or more than
 * one. It does not judge what the statement does: that is the guard's job (`guard.ts`).
 */
import { severalStatements } from '../core/refusal.js';
import {
  CONTINUATION_PUNCT,
  CONTINUATION_WORDS,
  isProseLine,
  isStatementWord,
  looksLikeStatementStart,
  NO_SPLIT_WORDS,
  STATEMENT_SHAPES,
  WITH_BODY_WORDS,
} from './extract-lines.js';
import { isSignificant, lexSql, type SqlToken } from './lexer.js';

/** Outcome of {@link extractSql}: one statement (no trailing semicolon), or why there is none. */
export type ExtractResult =
  | { ok: true; sql: string }
  | {
      ok: false;
      reason: string;
      /** Set when the text held several different statements: each of them, in order. */
      statements?: string[];
    };

/** Language tags of code fences that announce SQL. */
const SQL_FENCE_TAGS = new Set([
  'sql',
  'postgresql',
  'postgres',
  'pgsql',
  'psql',
  'plpgsql',
  'sqlite',
  'mysql',
  'tsql',
]);

/**
 * Extracts the one SQL statement from a model's answer.
 *
 * Rules: `<think>…</think>` blocks are ignored, and so is everything before a lone `</think>`;
 * when code fences hold SQL only those fences count, otherwise statements are found in the prose
 * (a statement word at a line or sentence start, or after a label such as `SQLQuery:`). A statement
 * ends at the first top-level semicolon (strings, quoted identifiers, dollar quotes and comments
 * respected) or at a line that is clearly prose. Identical repeats count once.
 *
 * @returns `{ ok: true, sql }` with the statement from its first word (`WITH` when there is one)
 *   to its last token, without trailing semicolon or comments; or `{ ok: false, reason }` when the
 *   text holds no statement or several different ones.
 */
export function extractSql(text: string): ExtractResult {
  const normalized = unwrapQuotedSql(text.replace(/\r\n?/g, '\n'));
  if (normalized.trim() === '')
    return { ok: false, reason: 'The model returned an empty answer, with no SQL in it.' };
  const { segments, unclosedThink } = stripReasoning(normalized);
  const fenced = segments.map((segment) => ({ segment, fences: findFences(segment) }));
  const sqlFences = fenced.flatMap(({ fences }) => fences.filter((fence) => fence.isSql));
  const statements =
    sqlFences.length > 0
      ? sqlFences.flatMap((fence) => findStatements(fence.content, true))
      : fenced.flatMap(({ segment, fences }) =>
          outside(segment, fences).flatMap((piece) => findStatements(piece, false)),
        );
  const distinct = [...new Map(statements.map((sql) => [sql.replace(/\s+/g, ' '), sql])).values()];
  if (distinct.length === 1) return { ok: true, sql: distinct[0]! };
  if (distinct.length > 1) {
    return {
      ok: false,
      reason: severalStatements(distinct.length),
      statements: distinct,
    };
  }
  if (unclosedThink && segments.every((segment) => segment.trim() === '')) {
    return {
      ok: false,
      reason: 'The model only returned unfinished reasoning (<think> without </think>), no SQL.',
    };
  }
  return { ok: false, reason: 'No SQL statement was found in the model answer.' };
}

/** Keys of a JSON reply object that hold the SQL (`{"sql": "SELECT …"}`). */
const JSON_SQL_KEYS = ['sql', 'SQL', 'query', 'sql_query', 'sqlQuery', 'SQLQuery'];
/**
 * A tool call written as text, as several local models emit it instead of a structured call:
 * `<tool_call>{"name": "run_sql", "arguments": {"query": "SELECT …"}}</tool_call>` (Qwen/Hermes
 * style; the closing tag may be missing when the model stops there).
 */
const TOOL_CALL = /<tool_call>\s*(\{[\s\S]*?\})\s*(?:<\/tool_call>|$)/i;

/**
 * The SQL in a JSON object: a member named like {@link JSON_SQL_KEYS}, directly or inside a tool
 * call's `arguments`/`parameters`/`function.arguments` (an object, or JSON text of one).
 */
export function sqlOfJson(text: string): string | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const visit = (node: unknown, depth: number): string | undefined => {
    if (typeof node === 'string' && depth > 0 && /^\s*\{/.test(node)) {
      try {
        return visit(JSON.parse(node), depth + 1);
      } catch {
        return undefined;
      }
    }
    if (!node || typeof node !== 'object' || Array.isArray(node) || depth > 3) return undefined;
    const record = node as Record<string, unknown>;
    for (const key of JSON_SQL_KEYS) {
      const sql = record[key];
      if (typeof sql === 'string' && sql.trim() !== '') return sql;
    }
    for (const key of ['arguments', 'parameters', 'function', 'input']) {
      const found = visit(record[key], depth + 1);
      if (found !== undefined) return found;
    }
    return undefined;
  };
  return visit(value, 0);
}

/** A label followed by the whole statement in double quotes: `SQLQuery: "SELECT …"`. */
const QUOTED_LABEL =
  /^([ \t>*_-]*(?:SQLQuery|SQL ?Query|SQL|Query|Answer)\s*:\s*)"((?:select|with|values|table|explain)\b[\s\S]*)"[ \t.]*$/im;

/**
 * Unwraps two reply shapes that carry SQL inside a string: a JSON object whose `sql`
 * (or `query`) member is the statement, alone or in a fence; and a label followed by the
 * statement in double quotes. Anything else is returned unchanged.
 */
function unwrapQuotedSql(text: string): string {
  const wrapped = TOOL_CALL.exec(text);
  if (wrapped) {
    const sql = sqlOfJson(wrapped[1]!);
    if (sql !== undefined) return sql;
  }
  const json = /^\s*(?:```(?:json)?\s*)?(\{[\s\S]*\})\s*(?:```)?\s*$/i.exec(text);
  if (json) {
    const sql = sqlOfJson(json[1]!);
    if (sql !== undefined) return sql;
  }
  const quoted = QUOTED_LABEL.exec(text);
  if (quoted) {
    let inner = quoted[2]!;
    if (/\\["n\\]/.test(inner)) {
      try {
        inner = JSON.parse(`"${inner}"`) as string;
      } catch {
        // keep the text as written
      }
    }
    return text.slice(0, quoted.index) + quoted[1] + inner + text.slice(quoted.index + quoted[0].length);
  }
  return text;
}

/**
 * The text outside reasoning, as separate segments (a statement never spans a removed block):
 * `<think>…</think>` blocks are dropped, so is everything before a lone `</think>` and everything
 * after an unclosed `<think>`.
 */
function stripReasoning(text: string): { segments: string[]; unclosedThink: boolean } {
  const closes = [...text.matchAll(/<\/think(?:ing)?>/gi)];
  const segments: string[] = [];
  let position = 0;
  let unclosedThink = false;
  for (const open of text.matchAll(/<think(?:ing)?>/gi)) {
    if (open.index < position) continue;
    segments.push(text.slice(position, open.index));
    const close = closes.find((match) => match.index > open.index);
    if (!close) {
      unclosedThink = true;
      position = text.length;
      break;
    }
    position = close.index + close[0].length;
  }
  segments.push(text.slice(position));
  // A lone `</think>` (its opening tag was in the prompt): drop everything before it.
  const lone = closes.filter((match) => !isPairedClose(text, match.index));
  const lastLone = lone[lone.length - 1];
  if (lastLone) return stripReasoning(text.slice(lastLone.index + lastLone[0].length));
  return { segments, unclosedThink };
}

/** True when the `</think>` at `index` closes a `<think>` before it. */
function isPairedClose(text: string, index: number): boolean {
  const before = text.slice(0, index);
  const opens = (before.match(/<think(?:ing)?>/gi) ?? []).length;
  const closes = (before.match(/<\/think(?:ing)?>/gi) ?? []).length;
  return opens > closes;
}

interface Fence {
  start: number;
  end: number;
  content: string;
  isSql: boolean;
}

/** Finds ``` fences (an unclosed last fence runs to the end), with their language tag removed. */
function findFences(text: string): Fence[] {
  const marks = [...text.matchAll(/`{3,}/g)];
  const fences: Fence[] = [];
  for (let k = 0; k < marks.length; k += 2) {
    const open = marks[k]!;
    const close = marks[k + 1];
    const innerStart = open.index + open[0].length;
    const innerEnd = close ? close.index : text.length;
    const end = close ? close.index + close[0].length : text.length;
    let content = text.slice(innerStart, innerEnd);
    let tag = '';
    const newline = content.indexOf('\n');
    const firstLine = (newline < 0 ? content : content.slice(0, newline)).trim();
    if (newline >= 0 && /^[\w+#.-]*$/.test(firstLine) && !isStatementWord(firstLine)) {
      tag = firstLine.toLowerCase();
      content = content.slice(newline + 1);
    } else {
      const word = /^\s*([\w+#.-]+)(?:\s+|$)/.exec(content);
      if (word && SQL_FENCE_TAGS.has(word[1]!.toLowerCase())) {
        tag = word[1]!.toLowerCase();
        content = content.slice(word[0].length);
      }
    }
    const first = lexSql(content).find(isSignificant);
    const isSql = SQL_FENCE_TAGS.has(tag) || (first !== undefined && isStatementWord(first.text));
    fences.push({ start: open.index, end, content, isSql });
  }
  return fences;
}

/** The pieces of `text` outside the given (sorted, disjoint) ranges: statements never span a fence. */
function outside(text: string, ranges: readonly { start: number; end: number }[]): string[] {
  const pieces: string[] = [];
  let position = 0;
  for (const { start, end } of ranges) {
    pieces.push(text.slice(position, start));
    position = end;
  }
  pieces.push(text.slice(position));
  return pieces;
}

/** All statements in `text`, in order. `code`: the text is the inside of a SQL code fence. */
function findStatements(text: string, code: boolean): string[] {
  const statements: string[] = [];
  let cursor = 0;
  while (cursor < text.length) {
    const candidate = (code ? codeCandidate(text, cursor) : undefined) ?? proseCandidate(text, cursor);
    if (!candidate) break;
    const { end, next } = scanStatement(text, candidate.start, candidate.inline);
    const sql = tidy(text.slice(candidate.start, end));
    if (sql !== '') statements.push(sql);
    cursor = Math.max(next, candidate.start + 1);
  }
  return statements;
}

interface Candidate {
  start: number;
  /** The statement started right after a backtick: a backtick ends it. */
  inline: boolean;
}

/** In a code fence: the first significant token, when it starts a statement (or is `(` before one). */
function codeCandidate(text: string, from: number): Candidate | undefined {
  const tokens = lexSql(text, from).filter(isSignificant);
  let k = 0;
  while (tokens[k]?.text === '(') k += 1;
  const word = tokens[k];
  if (word?.type !== 'word' || !looksLikeStatementStart(text.slice(word.start), true)) return undefined;
  if (k > 0 && !['select', 'with', 'values', 'table'].includes(word.text.toLowerCase())) return undefined;
  return { start: tokens[0]!.start, inline: false };
}

const KEYWORD = /[A-Za-z]+/g;
const LINE_START_PREFIX = /^[ \t]*(?:>[ \t]*)*(?:[-*+][ \t]+|\d+[.)][ \t]+)?(?:\*\*|__|\*|_)?[ \t]*$/;
const SENTENCE_PREFIX = /(?:[:.!?]|<[A-Za-z_]+>)[ \t]*(?:\*\*|__)?[ \t]*$/;

/** In prose: the next statement word at a line start, after a label or sentence, or in backticks. */
function proseCandidate(text: string, from: number): Candidate | undefined {
  KEYWORD.lastIndex = from;
  for (let match = KEYWORD.exec(text); match; match = KEYWORD.exec(text)) {
    if (!isStatementWord(match[0])) continue;
    const lineStart = text.lastIndexOf('\n', match.index - 1) + 1;
    const prefix = text.slice(Math.max(lineStart, from), match.index);
    const inline = prefix.endsWith('`');
    const placed =
      inline || LINE_START_PREFIX.test(prefix) || (lineStart >= from && SENTENCE_PREFIX.test(prefix));
    if (placed && looksLikeStatementStart(text.slice(match.index), false))
      return { start: match.index, inline };
  }
  return undefined;
}

/** Where the statement starting at `start` ends (`end`) and where scanning resumes (`next`). */
function scanStatement(text: string, start: number, inline: boolean): { end: number; next: number } {
  const tokens = lexSql(text, start);
  const firstWord = tokens.find((token) => token.type === 'word')?.text.toLowerCase() ?? '';
  let last: SqlToken | undefined;
  let hasBody = firstWord !== 'with';
  const endAt = (next: number) => ({ end: last ? last.end : start, next });
  const complete = (): boolean => {
    if (!last || last.depth > 0 || (last.type === 'punct' && last.text === '(') || !hasBody) return false;
    if (last.type === 'punct') return !CONTINUATION_PUNCT.has(last.text);
    return !(last.type === 'word' && CONTINUATION_WORDS.has(last.text.toLowerCase()));
  };
  for (let k = 0; k < tokens.length; k += 1) {
    const token = tokens[k]!;
    if (token.type === 'punct' && token.depth === 0 && token.text === ';') return endAt(token.end);
    if (inline && token.type === 'punct' && token.text === '`') return endAt(token.end);
    if (token.type === 'punct' && token.text === '<' && /^<\/[A-Za-z_]+>/.test(text.slice(token.start))) {
      return endAt(token.start);
    }
    if (token.unterminated) {
      // A quote that never closes, past the first line, is most likely an apostrophe in prose.
      const lineStart = text.lastIndexOf('\n', token.start - 1) + 1;
      if (lineStart > start) return endAt(lineStart);
    }
    if (token.type === 'newline') {
      const splittable = !NO_SPLIT_WORDS.has(firstWord);
      if (endsAtLineBreak(text, token.end, splittable && complete())) return endAt(token.end);
      continue;
    }
    if (!isSignificant(token)) continue;
    if (!hasBody && token.depth === 0 && k > 0 && WITH_BODY_WORDS.has(token.text.toLowerCase()))
      hasBody = true;
    last = token;
  }
  return endAt(text.length);
}

/** At a line break: does the statement end here (prose follows, or a new statement when complete)? */
function endsAtLineBreak(text: string, lineStart: number, complete: boolean): boolean {
  let position = lineStart;
  let sawBlank = false;
  while (position < text.length) {
    const newline = text.indexOf('\n', position);
    const line = text.slice(position, newline < 0 ? text.length : newline);
    if (line.trim() !== '') {
      if (isProseLine(line)) return true;
      const rest = line.trimStart();
      const word = /^[A-Za-z]+/.exec(rest)?.[0]?.toLowerCase() ?? '';
      const readStart = word in STATEMENT_SHAPES && STATEMENT_SHAPES[word]!.lower;
      return complete && (sawBlank || readStart) && looksLikeStatementStart(rest, false);
    }
    sawBlank = true;
    if (newline < 0) return true;
    position = newline + 1;
  }
  return true;
}

/**
 * Trims, and drops markdown left around the statement (`**`, a closing inline-code backtick or
 * fence, a sentence's full stop). A trailing backtick is dropped only when it has no partner in the
 * statement: `GROUP BY \`country\`` (a MySQL-quoted identifier) keeps every character, so a repair
 * prompt quotes the SQL the model really wrote.
 */
function tidy(sql: string): string {
  let out = sql.trim();
  for (let previous = ''; previous !== out; ) {
    previous = out;
    out = out.replace(/(?:\*\*|__)$/, '').trimEnd();
    if ((out.match(/`/g)?.length ?? 0) % 2 === 1) out = out.replace(/(?:```|`)$/, '').trimEnd();
    const tokens = lexSql(out).filter(isSignificant);
    const tail = tokens[tokens.length - 1];
    if (tail?.type === 'punct' && tail.text === '.' && tail.end === out.length)
      out = out.slice(0, -1).trimEnd();
  }
  return out;
}
