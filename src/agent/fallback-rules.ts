/**
 * Rule-based SQL for the simplest question shapes, used only when the model is
 * unreachable or `--no-model` is asked for. Each rule is a fixed sentence shape whose nouns must
 * name exactly one table (and column) of the catalog by its own name (singular or plural, words
 * joined by `_`); any doubt (no match, two matches, a word left over) means no rule applies.
 * Precision over coverage: a rule never guesses.
 *
 * Shapes (case-insensitive, optional trailing `?`):
 * - count: "how many <table> are there", "how many <table>", "number of <table>", "count <table>"
 * - list: "list <table>", "list all <table>", "show (me) (all|the) <table>"
 * - top-N: "top <n> <table> by <numeric column>" (descending), "bottom <n> <table> by <column>"
 * - group-by count: "how many <table> per|by|for each <column>", "number of <table> per|by <column>"
 * - the one foreign-key join: "how many <table> per <other table> <column>" ("count of orders per
 *   customer country"), when exactly one single-column foreign key leads from the first table to
 *   the second (grouped by the second table's column, inner join on that key)
 * - a filter on any shape, at the end of the question: "… in|from|with|for <value>", when the value
 *   equals (ignoring case) a value hint (enum label or sampled value, `linking/value-hints.ts`) of
 *   exactly one text column of the counted table, across every column; its stored spelling is used
 *   ({@link ruleSqlWithFilter}). A value found in no hint, or in two columns, means no rule.
 */
import type { Column, Schema, Table } from '../core/schema.js';
import type { ValueHint } from '../linking/documents.js';
import { quoteIdent } from '../sql/render.js';

/** SQL chosen by a rule, with the rule's name and how the question was read. */
export interface RuleAnswer {
  rule: 'count' | 'list' | 'top-n' | 'group-count';
  sql: string;
  /** e.g. `table public.customers`, `table public.products, column price`. */
  reading: string;
  /** The table counted, listed or ranked (a filter applies to it). */
  table: Table;
}

/** A confirmed filter: `column = value` on the rule's table (value as stored). */
export interface RuleFilter {
  column: string;
  value: string;
}

/** Largest N accepted by the top-N rule (larger asks are left to the model). */
export const MAX_TOP_N = 1000;

const NUMERIC_TYPE =
  /^(smallint|integer|bigint|int2|int4|int8|numeric|decimal|real|double precision|float4|float8|money)\b/;

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}_]+/gu) ?? [];
}

/** Singular form by the regular English endings only (`categories` → `category`, `boxes` → `box`). */
function singular(word: string): string {
  if (/ies$/.test(word) && word.length > 4) return `${word.slice(0, -3)}y`;
  if (/(ses|xes|zes|ches|shes)$/.test(word)) return word.slice(0, -2);
  if (/s$/.test(word) && !/ss$/.test(word)) return word.slice(0, -1);
  return word;
}

function nameKey(name: string): string {
  return words(name.replace(/_/g, ' ')).map(singular).join(' ');
}

/** The one table whose name the phrase is, or null (none or several). */
function resolveTable(phrase: string, schema: Schema): Table | null {
  const key = nameKey(phrase);
  if (!key) return null;
  const found = schema.tables.filter((t) => nameKey(t.name) === key);
  return found.length === 1 ? found[0]! : null;
}

/**
 * The one column whose name the phrase is; failing that, for grouping only, the one column named
 * `<phrase>_name` (a common naming convention: "per country" → `country_name`).
 */
function resolveColumn(phrase: string, table: Table, allowNameSuffix = false): Column | null {
  const key = nameKey(phrase);
  if (!key) return null;
  const found = table.columns.filter((c) => nameKey(c.name) === key);
  if (found.length === 1) return found[0]!;
  if (found.length > 1 || !allowNameSuffix) return null;
  const named = table.columns.filter((c) => nameKey(c.name) === `${key} name`);
  return named.length === 1 ? named[0]! : null;
}

function rel(table: Table): string {
  return `${quoteIdent(table.schema)}.${quoteIdent(table.name)}`;
}

const PHRASE = '([\\p{L}\\p{N}_ ]+?)';
const shape = (body: string) => new RegExp(`^\\s*${body}\\s*\\??\\s*$`, 'iu');

const COUNT = [
  shape(`how many ${PHRASE}(?: are there| do we have| exist| in total)?`),
  shape(`(?:what is |what's )?the (?:number|count) of ${PHRASE}`),
  shape(`(?:number of|count(?: the| all)?) ${PHRASE}`),
];
const LIST = [shape(`(?:list|show(?: me)?|get|give me)(?: all| the| all the| every)? ${PHRASE}`)];
const TOP = shape(`(?:show(?: me)? )?(?:the )?(top|bottom) (\\d{1,4}) ${PHRASE} by ${PHRASE}`);
const GROUP = [
  shape(`how many ${PHRASE} (?:are there )?(?:per|by|for each|in each|in every) ${PHRASE}`),
  shape(`(?:the )?(?:number|count) of ${PHRASE} (?:per|by|for each|in each) ${PHRASE}`),
];

/**
 * The SQL of the one rule that fits `question` with certainty, or null.
 * Pure: reads only the catalog; the caller guards and runs the SQL.
 */
export function ruleSql(question: string, schema: Schema, filter?: RuleFilter): RuleAnswer | null {
  const where = (alias?: string) =>
    filter
      ? `${alias ? `${alias}.` : ''}${quoteIdent(filter.column)} = '${filter.value.replace(/'/g, "''")}'`
      : '';
  const filtered = filter ? `, where ${filter.column} = '${filter.value}'` : '';
  for (const re of GROUP) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    if (!table) return null;
    const column = resolveColumn(m[2]!, table, true);
    if (column) {
      const col = quoteIdent(column.name);
      return {
        rule: 'group-count',
        sql: `SELECT ${col}, count(*) AS count FROM ${rel(table)}${filter ? ` WHERE ${where()}` : ''} GROUP BY ${col} ORDER BY count DESC, ${col}`,
        reading: `table ${table.schema}.${table.name}, column ${column.name}${filtered}`,
        table,
      };
    }
    const joined = foreignKeyGroup(m[2]!, table, schema);
    if (!joined) return null;
    const { parent, fk, column: pcol } = joined;
    const on = fk.columns
      .map((c, i) => `t.${quoteIdent(c)} = p.${quoteIdent(fk.references.columns[i]!)}`)
      .join(' AND ');
    const col = `p.${quoteIdent(pcol.name)}`;
    return {
      rule: 'group-count',
      sql: `SELECT ${col}, count(*) AS count FROM ${rel(table)} t JOIN ${rel(parent)} p ON ${on}${filter ? ` WHERE ${where('t')}` : ''} GROUP BY ${col} ORDER BY count DESC, ${col}`,
      reading: `table ${table.schema}.${table.name} joined to ${parent.schema}.${parent.name} by ${fk.columns.join(', ')}, column ${pcol.name}${filtered}`,
      table,
    };
  }
  const top = TOP.exec(question);
  if (top) {
    const n = Number(top[2]);
    const table = resolveTable(top[3]!, schema);
    const column = table && resolveColumn(top[4]!, table);
    if (!table || !column || n < 1 || n > MAX_TOP_N) return null;
    if (!NUMERIC_TYPE.test(column.domainBaseType ?? column.type)) return null;
    const dir = top[1]!.toLowerCase() === 'top' ? 'DESC' : 'ASC';
    // Ties are broken by the primary key, so the same question always returns the same rows.
    const ties = table.primaryKey
      .filter((k) => k !== column.name)
      .map((k) => `, ${quoteIdent(k)}`)
      .join('');
    return {
      rule: 'top-n',
      sql: `SELECT * FROM ${rel(table)} WHERE ${quoteIdent(column.name)} IS NOT NULL${filter ? ` AND ${where()}` : ''} ORDER BY ${quoteIdent(column.name)} ${dir}${ties} LIMIT ${n}`,
      reading: `table ${table.schema}.${table.name}, column ${column.name}, ${dir === 'DESC' ? 'largest' : 'smallest'} ${n}${filtered}`,
      table,
    };
  }
  for (const re of COUNT) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    if (!table) return null;
    return {
      rule: 'count',
      sql: `SELECT count(*) AS count FROM ${rel(table)}${filter ? ` WHERE ${where()}` : ''}`,
      reading: `table ${table.schema}.${table.name}${filtered}`,
      table,
    };
  }
  for (const re of LIST) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    if (!table) return null;
    return {
      rule: 'list',
      sql: `SELECT * FROM ${rel(table)}${filter ? ` WHERE ${where()}` : ''}`,
      reading: `table ${table.schema}.${table.name}${filtered}`,
      table,
    };
  }
  return null;
}

/**
 * "<parent table> <column>" for the foreign-key join: the phrase split (at every word boundary)
 * into a table name and a column of that table, where exactly one foreign key of `table` references
 * that table. Exactly one reading must fit; otherwise null.
 */
function foreignKeyGroup(
  phrase: string,
  table: Table,
  schema: Schema,
): { parent: Table; fk: Table['foreignKeys'][number]; column: Column } | null {
  const parts = words(phrase);
  const found: { parent: Table; fk: Table['foreignKeys'][number]; column: Column }[] = [];
  for (let i = 1; i < parts.length; i++) {
    const parent = resolveTable(parts.slice(0, i).join(' '), schema);
    if (!parent || parent === table) continue;
    const column = resolveColumn(parts.slice(i).join(' '), parent, true);
    if (!column) continue;
    const fks = table.foreignKeys.filter(
      (fk) => fk.references.schema === parent.schema && fk.references.table === parent.name,
    );
    if (fks.length !== 1) continue;
    found.push({ parent, fk: fks[0]!, column });
  }
  return found.length === 1 ? found[0]! : null;
}

/** The prepositions that introduce a trailing filter value. */
const FILTER = /^(.*\S)\s+(?:in|from|with|for)\s+([\p{L}\p{N}][\p{L}\p{N} .'&-]*?)\s*\??\s*$/iu;
/** Most words of a filter value. */
const MAX_FILTER_WORDS = 4;

/**
 * {@link ruleSql}, and when no rule fits the whole question, a rule for the question without a
 * trailing "in|from|with|for <value>" whose value one text column of the rule's table confirms:
 * among `hints(table)` (enum labels and sampled values), exactly one column holds a value equal to
 * it ignoring case (its stored spelling is used). Anything else: null (never a guess).
 */
export async function ruleSqlWithFilter(
  question: string,
  schema: Schema,
  hints: (table: Table) => Promise<ValueHint[]>,
): Promise<RuleAnswer | null> {
  const whole = ruleSql(question, schema);
  if (whole) return whole;
  const m = FILTER.exec(question);
  if (!m) return null;
  const value = m[2]!.trim();
  if (value.split(/\s+/).length > MAX_FILTER_WORDS) return null;
  const base = ruleSql(m[1]!, schema);
  if (!base) return null;
  const matches: RuleFilter[] = [];
  for (const hint of await hints(base.table).catch(() => [])) {
    const column = base.table.columns.find((c) => c.name === hint.column);
    if (!column) continue;
    const same = hint.values.filter((v) => v.toLowerCase() === value.toLowerCase());
    // Two stored spellings of the same value ("India", "INDIA") are two readings: ambiguous.
    for (const v of same) matches.push({ column: column.name, value: v });
  }
  if (matches.length !== 1) return null;
  return ruleSql(m[1]!, schema, matches[0]!);
}
