/**
 * PostgreSQL COPY text format (the default `FORMAT text`): one line per row, tab-separated, with
 * backslash escapes. See https://www.postgresql.org/docs/current/sql-copy.html ("Text Format").
 */

const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\t': '\\t', '\n': '\\n', '\r': '\\r' };

/** Escapes one field: numbers as-is, strings with `\`, tab, newline and carriage return escaped; `null` → `\N`. */
export function copyTextField(value: string | number | null): string {
  if (value === null) return '\\N';
  if (typeof value === 'number') return String(value);
  return value.replace(/[\\\t\n\r]/g, (c) => ESCAPES[c] ?? c);
}

/** Renders rows as COPY text: fields joined by tabs, every row ended by a newline. */
export function toCopyText(rows: readonly (readonly (string | number | null)[])[]): string {
  let out = '';
  for (const row of rows) out += `${row.map(copyTextField).join('\t')}\n`;
  return out;
}
