/**
 * Human and JSON output of the CLI: result tables, SQL, errors. Results go to stdout; progress and
 * logs to stderr. `--json` prints exactly one JSON document on stdout.
 */
import Table from 'cli-table3';
import { limitNote, limitReached } from '../agent/statement-limit.js';
import { type ErrorDocument, errorDocument } from '../app/error-document.js';
import type { SqlrecallError } from '../core/errors.js';
import type { CellValue, QueryResult } from '../core/ports.js';
import { redactSecrets } from '../core/redact.js';
import { formatBytes } from '../databases/postgres/execute.js';
import { pc } from './colors.js';
import type { CliIO } from './io.js';

/** Most rows printed as a table in a terminal (all rows are in `--json`). */
export const DISPLAY_MAX_ROWS = 200;
/** Widest cell printed before it is cut with an ellipsis (display only). */
export const DISPLAY_MAX_CELL = 60;

/** How SQL NULL is shown in a table: a dimmed `∅`, never the text `NULL` nor an empty cell. */
export const NULL_MARK = '∅';

/** Column types shown right-aligned (numbers). */
const NUMERIC_TYPES = /^(int[248]|numeric|float[48]|money|oid)$/;

// Created on first use: building a segmenter loads ICU's break rules (≈ 45 ms measured on this project's
// 2-core dev machine), which every command would otherwise pay at start, cut or not.
let graphemes: Intl.Segmenter | undefined;

/**
 * Cuts `text` to at most `max` user-perceived characters (grapheme clusters, so an emoji, a flag
 * or a letter with combining marks is never split), ending with `…` when cut.
 */
export function cutGraphemes(text: string, max: number): string {
  if (text.length <= max) return text;
  // Only the first `max` graphemes matter: segment a bounded prefix, not a 1 MB value.
  const prefix = text.slice(0, Math.max(max * 16, 1024));
  const kept: string[] = [];
  let count = 0;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  for (const { segment } of graphemes.segment(prefix)) {
    count += 1;
    if (count > max) {
      kept.length = max - 1;
      return `${kept.join('')}…`;
    }
    kept.push(segment);
  }
  if (prefix.length === text.length) return text;
  kept.length = Math.max(0, max - 1);
  return `${kept.join('')}…`;
}

/**
 * Text of one cell for display (docs/operations.md, "How values reach you"): NULL → dimmed `∅`; objects and
 * arrays as JSON; newline → `↵`, tab → `⇥` and other control characters → `�` (dimmed), so a value
 * never breaks the table's rows; long values cut grapheme-safely to {@link DISPLAY_MAX_CELL}.
 */
export function displayCell(value: CellValue): string {
  if (value === null) return pc.dim(NULL_MARK);
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const cut = cutGraphemes(text, DISPLAY_MAX_CELL);
  return cut.replace(/\r\n|[\n\r\t\u0000-\u001f\u007f]/g, (c) =>
    pc.dim(c === '\t' ? '⇥' : c === '\n' || c === '\r\n' || c === '\r' ? '↵' : '�'),
  );
}

/** Where a result is printed: its notes name that surface's own ways to see more. */
export interface PrintContext {
  /** `chat` has no --json: its notes say so differently. Default `command` (ask, sql). */
  surface?: 'command' | 'chat';
  /** The statement, to say when its own LIMIT cut the list. */
  sql?: string;
}

/** Prints a result as a table (numbers right-aligned), with row counts and the truncation note. */
export function printResult(
  io: CliIO,
  result: QueryResult,
  maxRows: number,
  maxBytes?: number,
  context: PrintContext = {},
): void {
  const table = new Table({
    head: result.columns.map((c) => c.name),
    style: { head: [], border: [], compact: true },
    wordWrap: false,
  });
  const right = result.columns.map((c) => NUMERIC_TYPES.test(c.type));
  for (const row of result.rows.slice(0, DISPLAY_MAX_ROWS)) {
    table.push(
      row.map((value, i) =>
        right[i] && value !== null
          ? { content: displayCell(value), hAlign: 'right' as const }
          : displayCell(value),
      ),
    );
  }
  if (result.columns.length > 0) io.stdout.write(`${table.toString()}\n`);
  const shown = Math.min(result.rowCount, DISPLAY_MAX_ROWS);
  const notes: string[] = [`${result.rowCount} row${result.rowCount === 1 ? '' : 's'}`];
  if (shown < result.rowCount)
    notes.push(
      context.surface === 'chat'
        ? `${shown} shown: the chat prints at most ${DISPLAY_MAX_ROWS}; narrow the question to see others`
        : `${shown} shown (use --json for all)`,
    );
  const limit = result.truncated ? undefined : limitReached(context.sql, result.rowCount);
  if (limit !== undefined) notes.push(limitNote(limit));
  if (result.truncated && result.truncatedReason === 'max_bytes') {
    const budget = maxBytes === undefined ? 'the result byte budget' : `the ${formatBytes(maxBytes)} budget`;
    notes.push(`stopped at ${budget}; raise it with --max-result-bytes`);
  } else if (result.truncated) {
    notes.push(
      `stopped at the row cap of ${maxRows}; raise it with ${context.surface === 'chat' ? 'sqlrecall chat --max-rows N' : '--max-rows'}`,
    );
  }
  io.stdout.write(`${pc.dim(`(${notes.join('; ')})`)}\n`);
}

/** Prints SQL, indented. */
export function printSql(io: CliIO, sql: string): void {
  io.stdout.write(`${pc.cyan(sql)}\n`);
}

/**
 * Writes one JSON document to stdout like {@link printJson}, but the `rows` array one row per
 * write (waiting for the stream to drain), so a large result never becomes one giant string.
 */
export async function writeJsonStreaming(io: CliIO, document: Record<string, unknown>): Promise<void> {
  const write = (text: string): Promise<void> =>
    io.stdout.write(text)
      ? Promise.resolve()
      : new Promise((resolve) => {
          io.stdout.once('drain', resolve);
        });
  const entries = Object.entries(document).filter(([, value]) => value !== undefined);
  await write('{');
  for (const [index, [key, value]] of entries.entries()) {
    await write(`${index === 0 ? '' : ','}\n  ${JSON.stringify(key)}: `);
    if (key === 'rows' && Array.isArray(value)) {
      if (value.length === 0) {
        await write('[]');
        continue;
      }
      await write('[');
      for (const [i, row] of value.entries()) {
        // Separate writes: no second copy of a large row in a concatenated string.
        await write(i === 0 ? '\n    ' : ',\n    ');
        await write(JSON.stringify(row));
      }
      await write('\n  ]');
    } else {
      await write(JSON.stringify(value, null, 2)!.replace(/\n/g, '\n  '));
    }
  }
  await write('\n}\n');
}

/** Writes one JSON document to stdout. */
export function printJson(io: CliIO, document: unknown): void {
  io.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
}

/** Prints an error as one clear message (and its hint) on stderr; never a stack trace. */
export function printError(io: CliIO, error: SqlrecallError): void {
  io.stderr.write(`${pc.red('error:')} ${redactSecrets(error.message)}\n`);
  if (typeof error.details.hint === 'string')
    io.stderr.write(`${pc.dim('hint:')} ${redactSecrets(error.details.hint)}\n`);
}

/** The JSON form of an error (the one {@link ErrorDocument} of every front end). */
export function errorJson(error: SqlrecallError): ErrorDocument {
  return errorDocument(error);
}
