/**
 * The literal comparisons of a statement written for MySQL/MariaDB, SQLite or DuckDB, found from
 * its tokens: the relations of its FROM and JOIN clauses (with aliases), each string or number
 * constant with the column it is directly compared with, and the plain text filters
 * (`col = 'x'`, `col IN ('x', …)`, `col LIKE 'x%'` joined by AND/OR to a WHERE, ON or HAVING).
 * PostgreSQL statements are read from libpg-query's parse tree instead; these engines have no
 * parser here that keeps token positions, and a wrong guess only costs a missed hint: the scan
 * reports a comparison only when the tokens on both sides leave no other reading (no operator
 * before the column, nothing but AND, OR, a closing parenthesis or a clause keyword after the
 * value). Strings are read with the engine's quoting rules (MySQL: backslash escapes and
 * double-quoted strings; SQLite: `[names]` and backticks too). Never throws.
 */
import type { DatabaseDialectName } from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';

/** One token; `start`/`end` are UTF-16 offsets into the scanned text. */
interface Token {
  kind: 'word' | 'ident' | 'string' | 'number' | 'op' | 'other';
  start: number;
  end: number;
  /** Identifiers and strings unquoted and unescaped; words as written; operators their text. */
  value: string;
  /** For strings: the quote character that opened it. */
  quote?: string;
}

/** A relation named in a FROM or JOIN clause. */
export interface ScannedRelation {
  schema?: string;
  name: string;
  /** The alias, or the relation's own name when it has none. */
  alias: string;
}

/** A string or number constant of the statement. */
export interface ScannedConstant {
  kind: 'string' | 'number';
  /** The value as the engine reads it (a string unquoted and unescaped). */
  value: string;
  /** UTF-16 offsets of the constant's token, quotes included. */
  start: number;
  end: number;
  /** True for a string in single quotes (the only kind a substitution writes). */
  singleQuoted: boolean;
  /** The column reference (`[qualifier, column]` or `[column]`) it is compared with by `=`, `<>` or `IN`. */
  compared: string[] | null;
}

/** A plain text filter: a column compared with string constants. */
export interface ScannedFilter {
  qualifier?: string;
  column: string;
  literals: string[];
  operator: '=' | 'like';
}

/** What {@link scanLiterals} found. */
export interface LiteralScan {
  relations: ScannedRelation[];
  /**
   * True when a FROM or JOIN is followed by something the scan does not read as a relation (a
   * parenthesised join, a table function): the relations listed may then be incomplete.
   */
  unreadRelations: boolean;
  constants: ScannedConstant[];
  filters: ScannedFilter[];
}

interface Quoting {
  /** Characters that open a quoted identifier, with the character that closes it. */
  idents: Record<string, string>;
  /** Characters that open a string. */
  strings: string;
  /** Whether a backslash escapes the next character in a string. */
  backslash: boolean;
  /** Whether `#` starts a comment. */
  hashComment: boolean;
}

const QUOTING: Record<Exclude<DatabaseDialectName, 'postgres'>, Quoting> = {
  mysql: { idents: { '`': '`' }, strings: `'"`, backslash: true, hashComment: true },
  sqlite: { idents: { '"': '"', '`': '`', '[': ']' }, strings: "'", backslash: false, hashComment: false },
  duckdb: { idents: { '"': '"' }, strings: "'", backslash: false, hashComment: false },
};

const MYSQL_ESCAPES: Record<string, string> = {
  '0': '\0',
  b: '\b',
  n: '\n',
  r: '\r',
  t: '\t',
  Z: '\x1a',
  // MySQL keeps the backslash of \% and \_ (they are LIKE escapes).
  '%': '\\%',
  _: '\\_',
};

const OPERATOR = /[<>=!|:+\-*/%&~^]/;

function tokenize(sql: string, quoting: Quoting): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = sql.length;
  while (i < n) {
    const c = sql[i]!;
    const next = sql[i + 1];
    if (/\s/.test(c)) {
      i += 1;
    } else if ((c === '-' && next === '-') || (c === '#' && quoting.hashComment)) {
      const nl = sql.indexOf('\n', i);
      i = nl < 0 ? n : nl + 1;
    } else if (c === '/' && next === '*') {
      const close = sql.indexOf('*/', i + 2);
      i = close < 0 ? n : close + 2;
    } else if (quoting.strings.includes(c)) {
      let value = '';
      let j = i + 1;
      for (; j < n; j += 1) {
        const ch = sql[j]!;
        if (quoting.backslash && ch === '\\' && j + 1 < n) {
          const escaped = sql[j + 1]!;
          value += MYSQL_ESCAPES[escaped] ?? escaped;
          j += 1;
        } else if (ch === c) {
          if (sql[j + 1] === c) {
            value += c;
            j += 1;
          } else break;
        } else value += ch;
      }
      const end = Math.min(n, j + 1);
      tokens.push({ kind: 'string', start: i, end, value, quote: c });
      i = end;
    } else if (quoting.idents[c] !== undefined) {
      const close = quoting.idents[c]!;
      let value = '';
      let j = i + 1;
      for (; j < n; j += 1) {
        const ch = sql[j]!;
        if (ch === close) {
          if (close !== ']' && sql[j + 1] === close) {
            value += close;
            j += 1;
          } else break;
        } else value += ch;
      }
      const end = Math.min(n, j + 1);
      tokens.push({ kind: 'ident', start: i, end, value });
      i = end;
    } else if (/[0-9]/.test(c) || (c === '.' && next !== undefined && /[0-9]/.test(next))) {
      const match = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?/.exec(sql.slice(i))![0];
      // 0x1F, 1abc: not a plain number.
      const after = sql[i + match.length];
      const plain = after === undefined || !/[A-Za-z0-9_$]/.test(after);
      const end = plain ? i + match.length : i + (/^[A-Za-z0-9_$]+/.exec(sql.slice(i))?.[0].length ?? 1);
      tokens.push({ kind: plain ? 'number' : 'other', start: i, end, value: sql.slice(i, end) });
      i = end;
    } else if (/[A-Za-z_\u0080-\uffff]/.test(c)) {
      const word = /^[A-Za-z0-9_$\u0080-\uffff]+/.exec(sql.slice(i))![0];
      tokens.push({ kind: 'word', start: i, end: i + word.length, value: word });
      i += word.length;
    } else if (OPERATOR.test(c)) {
      let j = i;
      while (j < n && OPERATOR.test(sql[j]!) && !(sql[j] === '-' && sql[j + 1] === '-')) j += 1;
      tokens.push({ kind: 'op', start: i, end: j, value: sql.slice(i, j) });
      i = j;
    } else {
      tokens.push({ kind: 'other', start: i, end: i + 1, value: c });
      i += 1;
    }
  }
  return tokens;
}

/** Words that end a relation item or a filter's value; never an alias. */
const CLAUSE_WORDS = new Set([
  'where',
  'join',
  'inner',
  'left',
  'right',
  'full',
  'cross',
  'natural',
  'outer',
  'on',
  'using',
  'group',
  'order',
  'limit',
  'having',
  'union',
  'except',
  'intersect',
  'window',
  'qualify',
  'offset',
  'fetch',
  'for',
  'lateral',
  'straight_join',
  'as',
  'and',
  'or',
  'not',
  'select',
  'from',
  'values',
  'use',
  'force',
  'ignore',
  'indexed',
  'partition',
  'then',
  'else',
  'end',
  'when',
  'is',
  'in',
  'like',
  'between',
  'escape',
  'collate',
  'returning',
  'tablesample',
  'using',
]);

/** Words after which a comparison is a predicate of its own (not the right side of an operator). */
const PREDICATE_START = new Set(['where', 'and', 'or', 'on', 'having']);
/** Words after a value that end the predicate. */
const PREDICATE_END = new Set([
  'and',
  'or',
  'group',
  'order',
  'limit',
  'having',
  'union',
  'except',
  'intersect',
  'window',
  'qualify',
  'offset',
  'fetch',
  'join',
  'inner',
  'left',
  'right',
  'full',
  'cross',
  'natural',
  'where',
]);

const lower = (t: Token | undefined) => (t?.kind === 'word' ? t.value.toLowerCase() : undefined);
const isName = (t: Token | undefined) =>
  t !== undefined && (t.kind === 'ident' || (t.kind === 'word' && !CLAUSE_WORDS.has(t.value.toLowerCase())));
const isPunct = (t: Token | undefined, text: string) =>
  t !== undefined && t.kind !== 'string' && t.kind !== 'ident' && t.value === text;

/** A dotted name starting at `i`: its parts and the index after it, or null. */
function dottedName(tokens: Token[], i: number): { parts: string[]; next: number } | null {
  if (!isName(tokens[i])) return null;
  const parts = [tokens[i]!.value];
  let j = i + 1;
  while (isPunct(tokens[j], '.') && isName(tokens[j + 1])) {
    parts.push(tokens[j + 1]!.value);
    j += 2;
  }
  return { parts, next: j };
}

/** Functions whose arguments hold the word FROM: `EXTRACT(YEAR FROM d)`, `SUBSTRING(s FROM 2)`. */
const FROM_FUNCTIONS = new Set(['extract', 'substring', 'substr', 'trim', 'overlay', 'position']);

/** True when token `i` is inside the parentheses of a {@link FROM_FUNCTIONS} call. */
function insideSyntaxCall(tokens: Token[], i: number): boolean {
  let depth = 0;
  for (let k = i - 1; k >= 0; k -= 1) {
    if (isPunct(tokens[k], ')')) depth += 1;
    else if (isPunct(tokens[k], '(')) {
      if (depth === 0) return FROM_FUNCTIONS.has(lower(tokens[k - 1]) ?? '');
      depth -= 1;
    }
  }
  return false;
}

/**
 * Relations, constants and text filters of `sql` in `dialect` (see the module comment). PostgreSQL
 * text is scanned with DuckDB's quoting, which is its own less dollar quotes and `E''` strings.
 */
export function scanLiterals(sql: string, dialect: DatabaseDialectName): LiteralScan {
  const tokens = tokenize(sql, QUOTING[dialect === 'postgres' ? 'duckdb' : dialect]);
  const relations: ScannedRelation[] = [];
  const constants: ScannedConstant[] = [];
  const filters: ScannedFilter[] = [];
  const compared = new Map<number, string[]>();
  let unreadRelations = false;

  for (let i = 0; i < tokens.length; i += 1) {
    const word = lower(tokens[i]);
    // FROM a [AS] x, b y … / JOIN a [AS] x
    if ((word === 'from' && !insideSyntaxCall(tokens, i)) || word === 'join' || word === 'straight_join') {
      let j = i + 1;
      for (;;) {
        const name = dottedName(tokens, j);
        const subquery =
          isPunct(tokens[j], '(') && ['select', 'with', 'values'].includes(lower(tokens[j + 1]) ?? '');
        if (!name || name.parts.length > 2 || isPunct(tokens[name.next], '(')) {
          // A derived table's own FROM is scanned when the loop reaches it.
          if (!subquery) unreadRelations = true;
          break;
        }
        j = name.next;
        if (lower(tokens[j]) === 'as') j += 1;
        let alias = name.parts.at(-1)!;
        if (isName(tokens[j])) {
          alias = tokens[j]!.value;
          j += 1;
        }
        relations.push({
          ...(name.parts.length === 2 ? { schema: name.parts[0]! } : {}),
          name: name.parts.at(-1)!,
          alias,
        });
        if (word !== 'from' || !isPunct(tokens[j], ',')) break;
        j += 1;
      }
      continue;
    }
    const ref = dottedName(tokens, i);
    if (!ref || ref.parts.length > 3) continue;
    const fields = ref.parts.slice(-2);
    const before = tokens[i - 1];
    const predicate = isPunct(before, '(') || PREDICATE_START.has(lower(before) ?? '');
    let j = ref.next;
    const op = tokens[j];
    const opWord = lower(op);
    const filter = (literals: string[], operator: '=' | 'like', after: number) => {
      const end = tokens[after];
      const ends =
        end === undefined || isPunct(end, ')') || isPunct(end, ';') || PREDICATE_END.has(lower(end) ?? '');
      if (predicate && ends)
        filters.push({
          ...(fields.length === 2 ? { qualifier: fields[0]! } : {}),
          column: fields.at(-1)!,
          literals,
          operator,
        });
    };
    if (op?.kind === 'op' && ['=', '==', '<>', '!='].includes(op.value)) {
      const value = tokens[j + 1];
      if (value?.kind === 'string' || value?.kind === 'number') {
        compared.set(j + 1, fields);
        if (value.kind === 'string' && (op.value === '=' || op.value === '=='))
          filter([value.value], '=', j + 2);
      }
      i = j;
    } else if (opWord === 'like') {
      const value = tokens[j + 1];
      if (value?.kind === 'string') filter([value.value], 'like', j + 2);
      i = j;
    } else if (opWord === 'in' && isPunct(tokens[j + 1], '(')) {
      j += 2;
      const items: number[] = [];
      while (tokens[j]?.kind === 'string' || tokens[j]?.kind === 'number') {
        items.push(j);
        if (isPunct(tokens[j + 1], ',')) j += 2;
        else {
          j += 1;
          break;
        }
      }
      if (items.length > 0 && isPunct(tokens[j], ')')) {
        for (const k of items) compared.set(k, fields);
        if (items.every((k) => tokens[k]!.kind === 'string'))
          filter(
            items.map((k) => tokens[k]!.value),
            '=',
            j + 1,
          );
      }
      i = j;
    } else {
      i = ref.next - 1;
    }
  }
  // A constant on the left of a comparison: 'x' = col.
  for (let k = 0; k + 2 < tokens.length; k += 1) {
    const value = tokens[k]!;
    const op = tokens[k + 1]!;
    if ((value.kind !== 'string' && value.kind !== 'number') || compared.has(k)) continue;
    if (op.kind !== 'op' || !['=', '==', '<>', '!='].includes(op.value)) continue;
    if (tokens[k - 1]?.kind === 'op') continue;
    const ref = dottedName(tokens, k + 2);
    if (ref && ref.parts.length <= 3 && !isPunct(tokens[ref.next], '(') && tokens[ref.next]?.kind !== 'op')
      compared.set(k, ref.parts.slice(-2));
  }
  tokens.forEach((token, k) => {
    if (token.kind !== 'string' && token.kind !== 'number') return;
    constants.push({
      kind: token.kind,
      value: token.value,
      start: token.start,
      end: token.end,
      singleQuoted: token.kind === 'string' && token.quote === "'",
      compared: compared.get(k) ?? null,
    });
  });
  return { relations, unreadRelations, constants, filters };
}

/**
 * The catalog table a relation of a scanned statement names: the exact name first, then the one
 * table whose name differs in case only (these engines match unquoted names ignoring case).
 */
export function findScannedTable(
  schema: Schema,
  relation: Pick<ScannedRelation, 'schema' | 'name'>,
): Table | undefined {
  const inSchema = (t: Table) =>
    relation.schema === undefined || t.schema.toLowerCase() === relation.schema.toLowerCase();
  const exact = schema.tables.filter((t) => t.name === relation.name && inSchema(t));
  if (exact.length === 1) return exact[0];
  const folded = schema.tables.filter(
    (t) => t.name.toLowerCase() === relation.name.toLowerCase() && inSchema(t),
  );
  return folded.length === 1 ? folded[0] : undefined;
}

/** The catalog spelling of `column` in `table`: exact, else the one name differing in case only. */
export function scannedColumnName(table: Table, column: string): string | undefined {
  if (table.columns.some((c) => c.name === column)) return column;
  const folded = table.columns.filter((c) => c.name.toLowerCase() === column.toLowerCase());
  return folded.length === 1 ? folded[0]!.name : undefined;
}

/**
 * The table column `fields` (`[column]` or `[qualifier, column]`) names among the scanned
 * relations, when exactly one relation in scope has it; null otherwise.
 */
export function resolveScannedColumn(
  fields: readonly string[],
  relations: readonly ScannedRelation[],
  schema: Schema,
): { table: Table; column: string } | null {
  const column = fields.at(-1)!;
  const qualifier = fields.length === 2 ? fields[0]!.toLowerCase() : undefined;
  const found = new Map<string, { table: Table; column: string }>();
  for (const relation of relations) {
    if (qualifier !== undefined && relation.alias.toLowerCase() !== qualifier) continue;
    const table = findScannedTable(schema, relation);
    const name = table && scannedColumnName(table, column);
    if (table && name) found.set(`${table.schema}.${table.name}`, { table, column: name });
  }
  return found.size === 1 ? [...found.values()][0]! : null;
}
