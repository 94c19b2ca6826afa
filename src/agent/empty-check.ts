/**
 * The empty-result check: when a statement returns no rows, each text comparison
 * (`col = 'x'`, `col IN ('x', …)`, `col LIKE 'x%'`) is compared with the column's value hints — the
 * bounded sample the value-hint index uses (never a full scan). A literal absent from the values
 * while a case, accent, whitespace or near-spelling variant (or an ILIKE match) is present is a
 * likely cause (columns the value hints leave out are sampled the same bounded way): the loop asks the model once more naming the candidates. Otherwise the answer says
 * which filter matched nothing and which values exist.
 *
 * Every engine: PostgreSQL statements are read from their parse tree, those of the other engines
 * from their tokens (`sql/literal-scan.ts`), and each filter the sample cannot explain is then
 * confirmed against the engine ({@link LiteralConfirmer}): a literal that matches rows there,
 * compared the engine's own way, is not the cause and is not reported.
 */
import type { DatabaseConnector, DatabaseDialectName } from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';
import { editDistance } from '../core/text.js';
import { literalMatchesSql, sqlWriter } from '../databases/sql-writer.js';
import type { ValueHint } from '../linking/documents.js';
import { isSampledColumn, SAMPLE_ROWS, SAMPLE_TIMEOUT_MS } from '../linking/value-hints.js';
import { loadGuardParser } from '../sql/guard.js';
import { findScannedTable, scanLiterals, scannedColumnName } from '../sql/literal-scan.js';
import { parseTree } from '../sql/parse-tree.js';
import { qualifiedName, quoteIdent } from '../sql/render.js';

/** Reads the value hints of one table (sampled, bounded); never throws. */
export type ValueHintSource = (table: Table) => Promise<ValueHint[]>;

/**
 * Reads distinct values of one text column from a bounded sample (for columns the value-hint
 * table leaves out: too many distinct values or unique-looking); never throws.
 */
export type ColumnSampler = (table: Table, column: string) => Promise<string[]>;

/**
 * What the engine says of one literal filter: whether any row passes it alone (`matches`), and
 * the column's stored spellings equal to it ignoring case (for `=`, at most 3).
 */
export interface LiteralVerdict {
  matches: boolean;
  spellings: string[];
}

/**
 * Confirms one literal filter against the engine; undefined when it cannot be asked (the filter
 * is then judged by the sample alone). Never throws.
 */
export type LiteralConfirmer = (
  table: Table,
  column: string,
  operator: '=' | 'like',
  literal: string,
) => Promise<LiteralVerdict | undefined>;

/**
 * A {@link LiteralConfirmer} over `db`, in its dialect's SQL (`literalMatchesSql`,
 * `sameSpellingSql`), through the READ ONLY execution with {@link SAMPLE_TIMEOUT_MS}. With
 * `rowFilter` (a data policy's filter on the table) only the rows that pass it count and no
 * spellings are read; an engine that cannot take the filter is not asked (fail closed).
 */
export function createLiteralConfirmer(
  db: DatabaseConnector,
  options: { rowFilter?: (table: Table) => string | undefined } = {},
): LiteralConfirmer {
  const writer = sqlWriter(db.dialect);
  return async (table, column, operator, literal) => {
    if (table.kind === 'foreign_table' || (table.kind === 'view' && !writer.sampleViews)) return undefined;
    try {
      const filter = options.rowFilter?.(table);
      if (filter !== undefined && !writer.rowFilters) return undefined;
      const run = (sql: string, maxRows: number) =>
        db.execute(sql, { maxRows, timeoutMs: SAMPLE_TIMEOUT_MS });
      const found = await run(literalMatchesSql(writer, table, column, operator, literal, filter), 1);
      if (found.rowCount > 0) return { matches: true, spellings: [] };
      if (operator !== '=' || filter !== undefined) return { matches: false, spellings: [] };
      const spelled = await run(writer.sameSpellingSql(table, column, literal, 3), 3);
      const spellings = spelled.rows.map((r) => r[0]).filter((v): v is string => typeof v === 'string');
      return { matches: false, spellings };
    } catch {
      return undefined;
    }
  };
}

/**
 * A {@link ColumnSampler} over `db`: the same bounded sample as the value hints (the first
 * {@link SAMPLE_ROWS} rows, or on PostgreSQL a `TABLESAMPLE` share of a large table; never a full
 * scan), in the dialect's SQL, through the READ ONLY execution with {@link SAMPLE_TIMEOUT_MS}.
 * Foreign tables, and views where the engine's views may be unbounded, are not sampled. SQL is
 * built from catalog identifiers only; with `rowFilter` (a data policy's filter on the table,
 * values written in) only the rows that pass it are sampled, on the engines that can take it.
 */
export function createColumnSampler(
  db: DatabaseConnector,
  options: { rowFilter?: (table: Table) => string | undefined } = {},
): ColumnSampler {
  const writer = sqlWriter(db.dialect);
  return async (table, column) => {
    if (table.kind === 'foreign_table' || (table.kind === 'view' && !writer.sampleViews)) return [];
    const spec = table.columns.find((c) => c.name === column);
    if (!spec || !isSampledColumn(spec)) return [];
    try {
      const filter = options.rowFilter?.(table);
      if (filter !== undefined && !writer.rowFilters) return [];
      const sql =
        filter === undefined
          ? writer.columnSampleSql(table, column, SAMPLE_ROWS, 200)
          : filteredColumnSampleSql(table, column, filter);
      const result = await db.execute(sql, { maxRows: SAMPLE_ROWS, timeoutMs: SAMPLE_TIMEOUT_MS });
      return result.rows.map((r) => String(r[0])).sort();
    } catch {
      return [];
    }
  };
}

/**
 * The distinct values of one column among the first {@link SAMPLE_ROWS} rows that pass `filter`
 * (a data policy's row filter: PostgreSQL only).
 */
function filteredColumnSampleSql(table: Table, column: string, filter: string): string {
  const writer = sqlWriter('postgres');
  const c = writer.quote(column);
  return `SELECT DISTINCT ${writer.textCut(column, 200)} AS v FROM (SELECT ${c} FROM ${writer.relation(table)} WHERE ${filter} LIMIT ${SAMPLE_ROWS}) s WHERE ${c} IS NOT NULL`;
}

/** One text filter of a statement that returned no rows, judged against the column's values. */
export interface EmptyFilter {
  table: Table;
  column: string;
  /** The literal as written (a LIKE pattern for `like`). */
  literal: string;
  operator: '=' | 'like';
  /** Stored values that are a case/accent/whitespace/near-spelling variant of the literal. */
  candidates: string[];
  /** Some of the column's values (sampled), for the answer when nothing close exists. */
  values: string[];
  /** The engine whose SQL the filter is shown in. */
  dialect: DatabaseDialectName;
}

/** Options of {@link checkEmptyResult}. */
export interface EmptyCheckOptions {
  /** The engine the statement was written for; default PostgreSQL. */
  dialect?: DatabaseDialectName;
  /** Asks the engine about each filter the sample cannot explain; without it the sample decides. */
  confirm?: LiteralConfirmer;
}

/** Most values named in a message. */
const MAX_SHOWN_VALUES = 8;

type Node = Record<string, unknown>;

interface RawFilter {
  qualifier?: string;
  column: string;
  literals: string[];
  operator: '=' | 'like';
}

/** Case, accents and runs of whitespace removed: the form variants are compared in. */
export function foldValue(value: string): string {
  return value.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

/**
 * Stored values that the literal probably meant: equal after {@link foldValue}, or within an edit
 * distance of max(1, ⌊length / 6⌋) for literals of 4+ characters (a typo per six letters, the same
 * order as the identifier check's length / 3 for names, stricter because values are data).
 */
export function valueVariants(literal: string, values: readonly string[]): string[] {
  if (values.includes(literal)) return [];
  const target = foldValue(literal);
  const scored: [string, number][] = [];
  for (const value of values) {
    const folded = foldValue(value);
    if (folded === target) {
      scored.push([value, 0]);
      continue;
    }
    if (target.length < 4) continue;
    const distance = editDistance(folded, target);
    if (distance <= Math.max(1, Math.floor(target.length / 6))) scored.push([value, distance]);
  }
  return scored
    .sort((a, b) => a[1] - b[1] || a[0].localeCompare(b[0]))
    .slice(0, 3)
    .map(([value]) => value);
}

/** `LIKE` pattern → anchored regular expression (`%` any run, `_` one character, `\` escapes). */
function likeRegex(pattern: string, flags: string): RegExp {
  let out = '';
  for (let i = 0; i < pattern.length; i += 1) {
    const ch = pattern[i]!;
    if (ch === '\\' && i + 1 < pattern.length) out += pattern[++i]!.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    else if (ch === '%') out += '.*';
    else if (ch === '_') out += '.';
    else out += ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  }
  return new RegExp(`^${out}$`, `s${flags}`);
}

function stringConst(node: unknown): string | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const n = node as Node;
  const cast = n.TypeCast as Node | undefined;
  if (cast) return stringConst(cast.arg);
  const constant = n.A_Const as Node | undefined;
  const sval = constant?.sval as Node | undefined;
  return typeof sval?.sval === 'string' ? sval.sval : undefined;
}

function columnRef(node: unknown): { qualifier?: string; column: string } | undefined {
  if (!node || typeof node !== 'object') return undefined;
  const ref = (node as Node).ColumnRef as Node | undefined;
  const fields = Array.isArray(ref?.fields) ? (ref.fields as Node[]) : [];
  const names = fields.map((f) => (f.String as Node | undefined)?.sval);
  if (names.length === 0 || names.some((n) => typeof n !== 'string')) return undefined;
  const column = names[names.length - 1] as string;
  return names.length >= 2 ? { qualifier: names[names.length - 2] as string, column } : { column };
}

function operatorName(expr: Node): string {
  const name = Array.isArray(expr.name) ? (expr.name as Node[]) : [];
  return String((name[name.length - 1]?.String as Node | undefined)?.sval ?? '');
}

/** Walks the tree: text filters and the FROM relations (with aliases). */
function collect(root: unknown): {
  filters: RawFilter[];
  ranges: { alias: string; schema?: string; name: string }[];
} {
  const filters: RawFilter[] = [];
  const ranges: { alias: string; schema?: string; name: string }[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (Array.isArray(value)) {
      stack.push(...value);
      continue;
    }
    if (!value || typeof value !== 'object') continue;
    const node = value as Node;
    const range = node.RangeVar as Node | undefined;
    if (range && typeof range.relname === 'string') {
      const alias = (range.alias as Node | undefined)?.aliasname;
      ranges.push({
        alias: typeof alias === 'string' ? alias : range.relname,
        ...(typeof range.schemaname === 'string' ? { schema: range.schemaname } : {}),
        name: range.relname,
      });
    }
    const expr = node.A_Expr as Node | undefined;
    if (expr) {
      const ref = columnRef(expr.lexpr);
      const op = operatorName(expr);
      if (ref && expr.kind === 'AEXPR_OP' && op === '=') {
        const literal = stringConst(expr.rexpr);
        if (literal !== undefined) filters.push({ ...ref, literals: [literal], operator: '=' });
      } else if (ref && expr.kind === 'AEXPR_IN' && op === '=') {
        const items = ((expr.rexpr as Node | undefined)?.List as Node | undefined)?.items;
        const literals = (Array.isArray(items) ? items : []).map(stringConst);
        if (literals.length > 0 && literals.every((l) => l !== undefined))
          filters.push({ ...ref, literals: literals as string[], operator: '=' });
      } else if (ref && expr.kind === 'AEXPR_LIKE' && op === '~~') {
        const literal = stringConst(expr.rexpr);
        if (literal !== undefined) filters.push({ ...ref, literals: [literal], operator: 'like' });
      }
    }
    for (const child of Object.values(node))
      if (child !== null && typeof child === 'object') stack.push(child);
  }
  return { filters, ranges };
}

/** The text filters and FROM relations of `sql`, read the way its engine's text is written. */
async function filtersOf(
  sql: string,
  dialect: DatabaseDialectName,
): Promise<ReturnType<typeof collect> | undefined> {
  if (dialect !== 'postgres') {
    const scan = scanLiterals(sql, dialect);
    return { filters: scan.filters, ranges: scan.relations };
  }
  await loadGuardParser();
  try {
    return collect(parseTree(sql));
  } catch {
    return undefined;
  }
}

/**
 * The text filters of `sql` that matched nothing, judged against sampled values and, with
 * `options.confirm`, against the engine. Statements that do not parse, and filters on columns
 * without sampled values, yield nothing.
 */
export async function checkEmptyResult(
  sql: string,
  schema: Schema,
  hintsFor: ValueHintSource,
  sampleColumn?: ColumnSampler,
  options: EmptyCheckOptions = {},
): Promise<EmptyFilter[]> {
  const dialect = options.dialect ?? 'postgres';
  const found = await filtersOf(sql, dialect);
  if (!found) return [];
  const { filters, ranges } = found;
  // PostgreSQL names are exact (the parse tree folds unquoted ones); the other engines match
  // unquoted names ignoring case, so their names resolve to the one catalog name differing in case.
  const exact = dialect === 'postgres';
  const searchPath = schema.schemas.length > 0 ? schema.schemas : ['public'];
  const resolve = (schemaName: string | undefined, name: string): Table | undefined => {
    if (!exact) return findScannedTable(schema, { ...(schemaName ? { schema: schemaName } : {}), name });
    for (const s of schemaName ? [schemaName] : searchPath) {
      const table = schema.tables.find((t) => t.schema === s && t.name === name);
      if (table) return table;
    }
    return undefined;
  };
  const columnOf = (table: Table, column: string): string | undefined =>
    exact ? table.columns.find((c) => c.name === column)?.name : scannedColumnName(table, column);
  const sameName = (a: string, b: string) => (exact ? a === b : a.toLowerCase() === b.toLowerCase());
  const inScope = ranges.flatMap((r) => {
    const table = resolve(r.schema, r.name);
    return table ? [{ alias: r.alias, table }] : [];
  });
  const hintCache = new Map<Table, Promise<ValueHint[]>>();
  const columnCache = new Map<string, Promise<string[]>>();
  const out: EmptyFilter[] = [];
  for (const filter of filters) {
    const owner = filter.qualifier
      ? inScope.find((r) => sameName(r.alias, filter.qualifier!) || sameName(r.table.name, filter.qualifier!))
          ?.table
      : inScope.find((r) => columnOf(r.table, filter.column) !== undefined)?.table;
    const column = owner && columnOf(owner, filter.column);
    if (!owner || !column) continue;
    if (!hintCache.has(owner))
      hintCache.set(
        owner,
        hintsFor(owner).catch(() => []),
      );
    let hint: { values: string[] } | undefined = (await hintCache.get(owner)!).find(
      (h) => h.column === column,
    );
    if ((!hint || hint.values.length === 0) && sampleColumn) {
      const key = `${owner.schema}.${owner.name}.${column}`;
      if (!columnCache.has(key))
        columnCache.set(
          key,
          sampleColumn(owner, column).catch(() => []),
        );
      hint = { values: await columnCache.get(key)! };
    }
    if (!hint || hint.values.length === 0) continue;
    for (const literal of filter.literals) {
      let candidates: string[];
      if (filter.operator === 'like') {
        if (hint.values.some((v) => likeRegex(literal, '').test(v))) continue;
        const loose = likeRegex(literal, 'i');
        candidates = hint.values.filter((v) => loose.test(foldValue(v)) || loose.test(v)).slice(0, 3);
      } else {
        if (hint.values.includes(literal)) continue;
        candidates = valueVariants(literal, hint.values);
      }
      // The sample holds no row with the literal: the engine says whether the table has one.
      const verdict = await options.confirm?.(owner, column, filter.operator, literal).catch(() => undefined);
      if (verdict?.matches) continue;
      if (verdict && verdict.spellings.length > 0)
        candidates = [...new Set([...verdict.spellings.filter((v) => v !== literal), ...candidates])].slice(
          0,
          3,
        );
      out.push({
        table: owner,
        column,
        literal,
        operator: filter.operator,
        candidates,
        values: hint.values.slice(0, MAX_SHOWN_VALUES),
        dialect,
      });
    }
  }
  return out;
}

/** A value as a string literal of the filter's engine. */
function sqlString(f: EmptyFilter, value: string): string {
  return sqlWriter(f.dialect).literal(value);
}

/**
 * The filter as its engine writes it: the table (named alone in the default schema, `public` or
 * SQLite's and DuckDB's `main`), the quoted column, the literal.
 */
function filterText(f: EmptyFilter): string {
  const writer = sqlWriter(f.dialect);
  const table =
    f.dialect === 'postgres'
      ? qualifiedName(f.table)
      : f.table.schema === 'main'
        ? writer.quote(f.table.name)
        : writer.relation(f.table);
  const column = f.dialect === 'postgres' ? quoteIdent(f.column) : writer.quote(f.column);
  return `${table}.${column} ${f.operator === 'like' ? 'LIKE' : '='} ${writer.literal(f.literal)}`;
}

/** The repair-prompt text: the filters that matched nothing and the stored values they probably meant. */
export function emptyRepairText(filters: EmptyFilter[]): string {
  return [
    'The query returned no rows. These filters match no stored value:',
    ...filters
      .filter((f) => f.candidates.length > 0)
      .map(
        (f) =>
          `- ${filterText(f)}: the column holds ${f.candidates.map((v) => sqlString(f, v)).join(' or ')} (write the value exactly as stored)`,
      ),
  ].join('\n');
}

/**
 * The answer for a statement that still returned no rows: which filter matched nothing and which
 * values exist (sampled), or undefined when no text filter explains the empty result.
 */
export function emptyResultAnswer(filters: EmptyFilter[]): string | undefined {
  if (filters.length === 0) return undefined;
  const parts = filters.slice(0, 3).map((f) => {
    const values = f.values.map((v) => sqlString(f, v)).join(', ');
    return `${filterText(f)} matched nothing (values there include ${values})`;
  });
  return `No matching data: ${parts.join('; ')}.`;
}
