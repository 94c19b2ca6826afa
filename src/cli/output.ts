/**
 * Human and JSON output of the CLI: result tables, SQL, errors. Results go to stdout; progress and
 * logs to stderr. `--json` prints exactly one JSON document on stdout.
 */
import Table from 'cli-table3';
import type { SqlrecallError } from '../core/errors.js';
import type { CellValue, QueryResult } from '../core/ports.js';
import { redactSecrets } from '../core/redact.js';
import { pc } from './colors.js';
import type { CliIO } from './io.js';

/** Most rows printed as a table in a terminal (all rows are in `--json`). */
export const DISPLAY_MAX_ROWS = 200;
/** Widest cell printed before it is cut with an ellipsis (display only). */
export const DISPLAY_MAX_CELL = 60;

/** Text of one cell for display. */
export function displayCell(value: CellValue): string {
  let text: string;
  if (value === null) text = 'NULL';
  else if (typeof value === 'object') text = JSON.stringify(value);
  else text = String(value);
  text = text.replace(/\s+/g, ' ');
  return text.length > DISPLAY_MAX_CELL ? `${text.slice(0, DISPLAY_MAX_CELL - 1)}…` : text;
}

/** Prints a result as a table, with row counts and the truncation note. */
export function printResult(io: CliIO, result: QueryResult, maxRows: number): void {
  const table = new Table({
    head: result.columns.map((c) => c.name),
    style: { head: [], border: [], compact: true },
    wordWrap: false,
  });
  for (const row of result.rows.slice(0, DISPLAY_MAX_ROWS)) table.push(row.map(displayCell));
  if (result.columns.length > 0) io.stdout.write(`${table.toString()}\n`);
  const shown = Math.min(result.rowCount, DISPLAY_MAX_ROWS);
  const notes: string[] = [`${result.rowCount} row${result.rowCount === 1 ? '' : 's'}`];
  if (shown < result.rowCount) notes.push(`${shown} shown (use --json for all)`);
  if (result.truncated) notes.push(`stopped at the row cap of ${maxRows}; raise it with --max-rows`);
  io.stdout.write(`${pc.dim(`(${notes.join('; ')})`)}\n`);
}

/** Prints SQL, indented. */
export function printSql(io: CliIO, sql: string): void {
  io.stdout.write(`${pc.cyan(sql)}\n`);
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

/** The JSON form of an error. */
export function errorJson(error: SqlrecallError): { code: string; message: string; hint?: string } {
  const out: { code: string; message: string; hint?: string } = {
    code: error.code,
    message: redactSecrets(error.message),
  };
  if (typeof error.details.hint === 'string') out.hint = redactSecrets(error.details.hint);
  return out;
}
