/**
 * Reuse of a saved `example` memory without the model. An example is a
 * question and its confirmed SQL. A new question reuses it when the two questions are the same
 * word for word except for literal values that the example's SQL also contains (a country, a year,
 * a status, a LIMIT count). Those literals are replaced by the question's values at the SQL
 * constants' token positions (never by string search on the SQL text): on PostgreSQL those of the
 * libpg-query parse tree, on MySQL/MariaDB, SQLite and DuckDB those of the engine's own tokens
 * (`sql/literal-scan.ts`, its quoting and escapes). Text values must be confirmed by the database
 * in its own SQL (the value exists in the compared column, its stored spelling is used). Anything
 * less certain is not reused: precision over coverage.
 *
 * The substituted SQL still goes through the guard, the identifier check and the limits (the
 * caller runs it with `runCheckedSql`).
 */
import type { Json, JsonObject } from '../core/json.js';
import type { Memory } from '../core/memory.js';
import type { DatabaseDialectName } from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';
import { sqlWriter } from '../databases/sql-writer.js';
import { resolveScannedColumn, scanLiterals } from '../sql/literal-scan.js';
import { loadSqlParser, parseTree, scanTokens } from '../sql/parse-tree.js';

/**
 * Thresholds of example reuse. Defaults are design choices for precision (an answer without the
 * model must never be a guess), not yet tuned by a measurement; `bench/` figures are to replace them.
 */
export interface ExampleReuseOptions {
  /** Most words one substituted value may span in the question (default 4, e.g. "united states of america"). */
  maxSlotWords?: number;
  /**
   * Fewest words the two questions must share outside the substituted values (default 2): a
   * question that is little more than the value itself is never matched.
   */
  minSharedWords?: number;
}

/** Default of {@link ExampleReuseOptions.maxSlotWords}. */
export const DEFAULT_MAX_SLOT_WORDS = 4;
/** Default of {@link ExampleReuseOptions.minSharedWords}. */
export const DEFAULT_MIN_SHARED_WORDS = 2;

/** One SQL constant of an example that the example's question names (a substitutable value). */
export interface ExampleSlot {
  /** The constant's value as the SQL holds it (unquoted). */
  value: string;
  kind: 'string' | 'number';
  /** Byte ranges `[start, end)` of every token of the SQL holding this value (UTF-8 offsets). */
  ranges: [number, number][];
  /** The column the value is compared with (`=`, `<>`, `IN`), when it resolves to one table column. */
  column: { table: Table; column: string } | null;
}

/** A reuse plan: which slots take which new values (before database confirmation). */
export interface ReuseMatch {
  example: Pick<Memory, 'id' | 'text' | 'sql'>;
  slots: { slot: ExampleSlot; newValue: string }[];
}

/** Lower-case words of a text: letters/digits, keeping inner `.`, `'` and `-` (e.g. "o'neil", "2.5"). */
export function questionWords(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+(?:[.'-][\p{L}\p{N}]+)*/gu) ?? [];
}

interface FoundConst {
  location: number;
  kind: 'string' | 'number';
  value: string;
  /** The nearest comparison's column reference fields, when the constant is compared with a column. */
  columnRef: string[] | null;
}

function isObject(value: Json | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function columnRefFields(node: Json | undefined): string[] | null {
  if (!isObject(node) || !isObject(node.ColumnRef)) return null;
  const fields = node.ColumnRef.fields;
  if (!Array.isArray(fields)) return null;
  const names: string[] = [];
  for (const f of fields) {
    if (!isObject(f) || !isObject(f.String) || typeof f.String.sval !== 'string') return null;
    names.push(f.String.sval);
  }
  return names;
}

function constOf(node: JsonObject): Omit<FoundConst, 'columnRef'> | null {
  const c = node.A_Const;
  if (!isObject(c) || typeof c.location !== 'number') return null;
  if (isObject(c.sval)) return { location: c.location, kind: 'string', value: String(c.sval.sval ?? '') };
  if (isObject(c.ival)) return { location: c.location, kind: 'number', value: String(c.ival.ival ?? 0) };
  if (isObject(c.fval) && typeof c.fval.fval === 'string')
    return { location: c.location, kind: 'number', value: c.fval.fval };
  return null;
}

/** Every A_Const of the tree, with the column it is directly compared with (`=`, `<>`, `IN`). */
function collectConsts(
  node: Json,
  compared: string[] | null,
  out: FoundConst[],
  relations: JsonObject[],
): void {
  if (Array.isArray(node)) {
    for (const item of node) collectConsts(item, compared, out, relations);
    return;
  }
  if (!isObject(node)) return;
  const found = constOf(node);
  if (found) {
    out.push({ ...found, columnRef: compared });
    return;
  }
  if (isObject(node.RangeVar)) relations.push(node.RangeVar);
  const expr = node.A_Expr;
  if (isObject(expr)) {
    const op =
      Array.isArray(expr.name) && isObject(expr.name[0]) ? (expr.name[0].String as JsonObject) : null;
    const opName = op && typeof op.sval === 'string' ? op.sval : '';
    const comparison =
      (expr.kind === 'AEXPR_OP' && (opName === '=' || opName === '<>')) || expr.kind === 'AEXPR_IN';
    const left = columnRefFields(expr.lexpr);
    const right = columnRefFields(expr.rexpr);
    if (comparison && (left || right)) {
      collectConsts(expr.lexpr ?? null, right, out, relations);
      collectConsts(expr.rexpr ?? null, left, out, relations);
      return;
    }
    for (const [key, value] of Object.entries(expr))
      if (key !== 'name') collectConsts(value, null, out, relations);
    return;
  }
  for (const value of Object.values(node)) collectConsts(value, null, out, relations);
}

function findTable(schema: Schema, name: string, schemaName?: string): Table | undefined {
  const matches = schema.tables.filter(
    (t) => t.name === name && (schemaName === undefined ? true : t.schema === schemaName),
  );
  if (matches.length === 1) return matches[0];
  return matches.find((t) => t.schema === 'public');
}

/** The table column a reference names, when it resolves without doubt among the statement's relations. */
function resolveColumn(
  fields: string[],
  relations: JsonObject[],
  schema: Schema,
): { table: Table; column: string } | null {
  const column = fields.at(-1)!;
  const tables: { table: Table; alias: string }[] = [];
  for (const r of relations) {
    if (typeof r.relname !== 'string') continue;
    const table = findTable(schema, r.relname, typeof r.schemaname === 'string' ? r.schemaname : undefined);
    if (!table) continue;
    const alias = isObject(r.alias) && typeof r.alias.aliasname === 'string' ? r.alias.aliasname : r.relname;
    tables.push({ table, alias });
  }
  const candidates =
    fields.length === 2 ? tables.filter((t) => t.alias === fields[0]) : fields.length === 1 ? tables : [];
  const having = candidates.filter((t) => t.table.columns.some((c) => c.name === column));
  const distinct = new Set(having.map((t) => `${t.table.schema}.${t.table.name}`));
  return distinct.size === 1 ? { table: having[0]!.table, column } : null;
}

/** A constant found in an example's SQL, before it is matched with the question. */
interface SlotConstant {
  kind: 'string' | 'number';
  value: string;
  range: [number, number];
  column: { table: Table; column: string } | null;
}

/** Keeps the constants whose value occurs exactly once (as whole words) in the question, merged by value. */
function slotsNamedBy(constants: SlotConstant[], question: string): ExampleSlot[] {
  const words = questionWords(question);
  const byValue = new Map<string, ExampleSlot>();
  for (const c of constants) {
    const valueWords = questionWords(c.value);
    if (valueWords.length === 0 || valueWords.join(' ') !== c.value.toLowerCase().trim().replace(/\s+/g, ' '))
      continue; // only values that are plain words
    if (occurrences(words, valueWords) !== 1) continue;
    const key = `${c.kind}:${c.value.toLowerCase()}`;
    const slot = byValue.get(key);
    if (slot) {
      slot.ranges.push(c.range);
      if (
        slot.column &&
        (!c.column || slot.column.column !== c.column.column || slot.column.table !== c.column.table)
      )
        slot.column = null;
    } else {
      byValue.set(key, { value: c.value, kind: c.kind, ranges: [c.range], column: c.column });
    }
  }
  return [...byValue.values()];
}

/**
 * The constants of SQL written for MySQL/MariaDB, SQLite or DuckDB, from the engine's tokens:
 * single-quoted strings and plain numbers, with the column each is compared with.
 */
function scannedConstants(sql: string, schema: Schema, dialect: DatabaseDialectName): SlotConstant[] {
  const scan = scanLiterals(sql, dialect);
  const bytes = (offset: number) => Buffer.byteLength(sql.slice(0, offset), 'utf8');
  return scan.constants
    .filter((c) => c.kind === 'number' || c.singleQuoted)
    .map((c) => ({
      kind: c.kind,
      value: c.value,
      range: [bytes(c.start), bytes(c.end)] as [number, number],
      column: c.compared ? resolveScannedColumn(c.compared, scan.relations, schema) : null,
    }));
}

/**
 * The substitutable constants of `sql` (written for `dialect`, default PostgreSQL) that `question`
 * names: each constant backed by a token of the engine's own reading (on PostgreSQL a scanner
 * token at its parse-tree location), whose value occurs exactly once (as whole words) in the
 * question.
 * @throws Error when PostgreSQL `sql` does not parse (callers treat that example as unusable)
 */
export async function exampleSlots(
  sql: string,
  question: string,
  schema: Schema,
  dialect: DatabaseDialectName = 'postgres',
): Promise<ExampleSlot[]> {
  if (dialect !== 'postgres') return slotsNamedBy(scannedConstants(sql, schema, dialect), question);
  await loadSqlParser();
  const tree = parseTree(sql);
  const consts: FoundConst[] = [];
  const relations: JsonObject[] = [];
  collectConsts(tree.stmts ?? null, null, consts, relations);
  const tokens = scanTokens(sql);
  const found: SlotConstant[] = [];
  for (const c of consts) {
    const token = tokens.find((t) => t.start === c.location);
    const expected = c.kind === 'string' ? 'SCONST' : c.kind === 'number' ? /^[IF]CONST$/ : null;
    if (!token || !expected) continue;
    if (typeof expected === 'string' ? token.tokenName !== expected : !expected.test(token.tokenName))
      continue;
    if (c.kind === 'string' && !token.text.startsWith("'")) continue; // E'', U&'', $$…$$: not substituted
    const column = c.columnRef ? resolveColumn(c.columnRef, relations, schema) : null;
    found.push({ kind: c.kind, value: c.value, range: [token.start, token.end], column });
  }
  return slotsNamedBy(found, question);
}

function occurrences(words: string[], needle: string[]): number {
  let n = 0;
  for (let i = 0; i + needle.length <= words.length; i++) {
    if (needle.every((w, j) => words[i + j] === w)) n++;
  }
  return n;
}

type Pattern = ({ word: string } | { slot: number })[];

/**
 * Words that never change what a question asks and are ignored on both sides of an alignment
 * ("list the customers" = "list customers"): articles and "please" only. Kept this small on
 * purpose: words such as "all", "not", "many" or prepositions can change the answer.
 */
export const FILLER_WORDS: ReadonlySet<string> = new Set(['a', 'an', 'the', 'please']);

/**
 * Aligns `question` with the example question in which each slot's words are a hole. Returns the
 * words each hole takes, or null when there is no alignment or more than one (ambiguous).
 * {@link FILLER_WORDS} outside the example's values are ignored on both sides.
 */
export function alignQuestion(
  exampleQuestion: string,
  slots: Pick<ExampleSlot, 'value' | 'kind'>[],
  question: string,
  options: ExampleReuseOptions = {},
): string[][] | null {
  const maxSlotWords = options.maxSlotWords ?? DEFAULT_MAX_SLOT_WORDS;
  const words = questionWords(exampleQuestion);
  // A value that holds a filler word ("the netherlands"): no word is ignored on either side.
  const keepFiller = slots.some((s) => questionWords(s.value).some((w) => FILLER_WORDS.has(w)));
  const pattern: Pattern = [];
  for (let i = 0; i < words.length; ) {
    const k = slots.findIndex((s) => {
      const v = questionWords(s.value);
      return v.every((w, j) => words[i + j] === w);
    });
    if (k >= 0) {
      pattern.push({ slot: k });
      i += questionWords(slots[k]!.value).length;
    } else {
      const word = words[i++]!;
      if (keepFiller || !FILLER_WORDS.has(word)) pattern.push({ word });
    }
  }
  const shared = pattern.filter((p) => 'word' in p).length;
  if (shared < (options.minSharedWords ?? DEFAULT_MIN_SHARED_WORDS)) return null;
  const target = questionWords(question).filter((w) => keepFiller || !FILLER_WORDS.has(w));
  const results: string[][][] = [];
  const fill: string[][] = slots.map(() => []);
  const walk = (p: number, t: number): void => {
    if (results.length > 1) return;
    if (p === pattern.length) {
      if (t === target.length) results.push(fill.map((f) => [...f]));
      return;
    }
    const item = pattern[p]!;
    if ('word' in item) {
      if (target[t] === item.word) walk(p + 1, t + 1);
      return;
    }
    const slot = slots[item.slot]!;
    const most = slot.kind === 'number' ? 1 : maxSlotWords;
    for (let n = 1; n <= most && t + n <= target.length; n++) {
      const taken = target.slice(t, t + n);
      if (slot.kind === 'number' && !/^\d+(\.\d+)?$/.test(taken[0]!)) continue;
      fill[item.slot] = taken;
      walk(p + 1, t + n);
    }
  };
  walk(0, 0);
  if (results.length !== 1) return null;
  return results[0]!;
}

/**
 * The example's SQL with each slot's tokens replaced by a new value: strings as standard SQL string
 * literals (quotes doubled), numbers as their digits. Offsets are the scanner's UTF-8 byte offsets.
 * @throws Error when a number value is not plain digits or a string holds a control character
 */
export function substituteSlots(sql: string, changes: { slot: ExampleSlot; newValue: string }[]): string {
  const edits: { start: number; end: number; text: string }[] = [];
  for (const { slot, newValue } of changes) {
    let text: string;
    if (slot.kind === 'number') {
      if (!/^\d+(\.\d+)?$/.test(newValue)) throw new Error(`not a plain number: ${newValue}`);
      text = newValue;
    } else {
      if (/[\u0000-\u001f\\]/.test(newValue)) throw new Error('value holds a control character or backslash');
      text = `'${newValue.replace(/'/g, "''")}'`;
    }
    for (const [start, end] of slot.ranges) edits.push({ start, end, text });
  }
  edits.sort((a, b) => b.start - a.start);
  let bytes = Buffer.from(sql, 'utf8');
  for (const e of edits) {
    bytes = Buffer.concat([bytes.subarray(0, e.start), Buffer.from(e.text, 'utf8'), bytes.subarray(e.end)]);
  }
  return bytes.toString('utf8');
}

/**
 * The SQL that checks a text value against the column it is compared with, in `dialect` (default
 * PostgreSQL): the column's distinct stored spellings equal to it ignoring case (at most 3).
 * Identifiers come from the catalog and are quoted; the value is the engine's string literal.
 */
export function confirmValueSql(
  column: { table: Table; column: string },
  value: string,
  dialect: DatabaseDialectName = 'postgres',
): string {
  return sqlWriter(dialect).sameSpellingSql(column.table, column.column, value, 3);
}

/**
 * Tries each example (its SQL written for `dialect`, default PostgreSQL) against `question`;
 * returns the reuse plans that align (exact-question matches first, then by fewest changed
 * values), before database confirmation.
 */
export async function matchExamples(
  question: string,
  examples: Pick<Memory, 'id' | 'text' | 'sql'>[],
  schema: Schema,
  options: ExampleReuseOptions = {},
  dialect: DatabaseDialectName = 'postgres',
): Promise<ReuseMatch[]> {
  const matches: { match: ReuseMatch; changed: number }[] = [];
  for (const example of examples) {
    if (!example.sql) continue;
    let slots: ExampleSlot[];
    try {
      slots = await exampleSlots(example.sql, example.text, schema, dialect);
    } catch {
      continue; // an example whose SQL no longer parses is not reused
    }
    const fill = alignQuestion(example.text, slots, question, options);
    if (!fill) continue;
    const changes = slots.map((slot, i) => ({ slot, newValue: fill[i]!.join(' ') }));
    const changed = changes.filter((c) => c.newValue !== c.slot.value.toLowerCase()).length;
    matches.push({ match: { example, slots: changes }, changed });
  }
  return matches.sort((a, b) => a.changed - b.changed).map((m) => m.match);
}
