/**
 * CSV export of a result (RFC 4180, CRLF line ends), safe to open in a spreadsheet: a text cell
 * starting with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading
 * `'` so it is never read as a formula (the OWASP "CSV injection" quote-prefix). SQL NULL becomes an
 * empty unquoted field and the empty string a quoted `""`, so the two stay distinguishable.
 * Numbers (JS numbers, and the exact decimal strings of numeric columns) are written unchanged:
 * a negative number such as `-12.5` is data, not a formula.
 */

/** A result value as the API sends it (see "How values reach you" in docs/operations.md). */
export type CsvCell = string | number | boolean | null | CsvCell[] | { [key: string]: CsvCell };

/** The first characters a spreadsheet reads as the start of a formula. */
const FORMULA_START = /^[=+\-@\t\r]/;

/** A plain decimal number, such as an int8/numeric value sent as an exact string. */
const DECIMAL = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

/**
 * One field: `null` → empty and unquoted; anything else is its text, quote-prefixed when it could
 * start a formula, and quoted when it holds a comma, quote, CR, LF or is empty.
 * @param numeric true when the column is numeric (its values are numbers, never formulas)
 */
export function csvField(value: CsvCell, numeric = false): string {
  if (value === null) return '';
  let text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  const isNumber = typeof value === 'number' || (numeric && DECIMAL.test(text));
  if (!isNumber && FORMULA_START.test(text)) text = `'${text}`;
  return text === '' || /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The whole CSV document: a header row of column names, then one line per row.
 * @param columns the result's columns; `numeric` marks numeric columns (see {@link csvField})
 * @param rows rows as arrays, in column order
 */
export function toCsv(columns: { name: string; numeric?: boolean }[], rows: CsvCell[][]): string {
  const lines = [columns.map((c) => csvField(c.name)).join(',')];
  for (const row of rows)
    lines.push(columns.map((c, i) => csvField(row[i] ?? null, Boolean(c.numeric))).join(','));
  return lines.join('\r\n');
}
