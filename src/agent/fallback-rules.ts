/**
 * Rule-based SQL for the simplest question shapes (issue 19, point 4), used only when the model is
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
 */
import type { Column, Schema, Table } from '../core/schema.js';
import { quoteIdent } from '../sql/render.js';

/** SQL chosen by a rule, with the rule's name and how the question was read. */
export interface RuleAnswer {
  rule: 'count' | 'list' | 'top-n' | 'group-count';
  sql: string;
  /** e.g. `table public.customers`, `table public.products, column price`. */
  reading: string;
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
export function ruleSql(question: string, schema: Schema): RuleAnswer | null {
  for (const re of GROUP) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    const column = table && resolveColumn(m[2]!, table, true);
    if (!table || !column) return null;
    const col = quoteIdent(column.name);
    return {
      rule: 'group-count',
      sql: `SELECT ${col}, count(*) AS count FROM ${rel(table)} GROUP BY ${col} ORDER BY count DESC, ${col}`,
      reading: `table ${table.schema}.${table.name}, column ${column.name}`,
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
      sql: `SELECT * FROM ${rel(table)} WHERE ${quoteIdent(column.name)} IS NOT NULL ORDER BY ${quoteIdent(column.name)} ${dir}${ties} LIMIT ${n}`,
      reading: `table ${table.schema}.${table.name}, column ${column.name}, ${dir === 'DESC' ? 'largest' : 'smallest'} ${n}`,
    };
  }
  for (const re of COUNT) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    if (!table) return null;
    return {
      rule: 'count',
      sql: `SELECT count(*) AS count FROM ${rel(table)}`,
      reading: `table ${table.schema}.${table.name}`,
    };
  }
  for (const re of LIST) {
    const m = re.exec(question);
    if (!m) continue;
    const table = resolveTable(m[1]!, schema);
    if (!table) return null;
    return {
      rule: 'list',
      sql: `SELECT * FROM ${rel(table)}`,
      reading: `table ${table.schema}.${table.name}`,
    };
  }
  return null;
}
