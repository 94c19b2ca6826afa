/**
 * Value hints: the distinct values of low-cardinality text columns, read from a bounded sample in
 * the connector's READ ONLY execution (row cap, statement timeout), and enum labels straight from
 * the catalog. The sampling SQL is generated here from catalog identifiers in the connector's
 * dialect (its `SqlWriter`, `databases/sql-writer.ts`: every engine has one); no user text ever
 * reaches it.
 */
import type { CellValue, DatabaseConnector, DatabaseDialectName } from '../core/ports.js';
import type { Column, Table } from '../core/schema.js';
import { sqlWriter } from '../databases/sql-writer.js';
import { MAX_HINT_VALUE_LENGTH, type ValueHint } from './documents.js';

/** Most distinct values for a column to count as low-cardinality: at most 50. */
export const MAX_HINT_VALUES = 50;
/** Rows read per table for sampling. */
export const SAMPLE_ROWS = 2000;
export { TABLESAMPLE_MIN_ROWS } from '../databases/postgres/dialect.js';
/** Most text columns sampled per table (the first ones in column order). */
export const MAX_SAMPLED_COLUMNS = 40;
/** Statement timeout of one sampling query, in milliseconds. */
export const SAMPLE_TIMEOUT_MS = 3000;

/** Reads value hints of one table; never throws (a failure means no hints for that table). */
export type ValueSampler = (table: Table) => Promise<ValueHint[]>;

/**
 * Types whose values are sampled: the text types of every engine (any case; SQLite's and DuckDB's
 * names come as declared), and domains over them.
 */
const TEXT_TYPE =
  /^(text|citext|name|character varying|varchar|character|char|bpchar|nvarchar|nchar|varying character|native character|clob|string|tinytext|mediumtext|longtext)(\(\d+\))?$/i;

/** True when `column` holds text worth sampling (not an enum: its labels come from the catalog). */
export function isSampledColumn(column: Column): boolean {
  if (column.enumValues) return false;
  return TEXT_TYPE.test(column.domainBaseType ?? column.type);
}

/** Enum labels of a table's enum columns, as hints (complete, from the catalog). */
export function enumHints(table: Table): ValueHint[] {
  return table.columns
    .filter((column) => column.enumValues && column.enumValues.length > 0)
    .map((column) => ({
      column: column.name,
      values: column.enumValues!.slice(0, MAX_HINT_VALUES),
      source: 'enum' as const,
      sampledRows: null,
    }));
}

/**
 * The sampling statement for `table` in `dialect` (default PostgreSQL), or `null` when nothing is
 * sampled (no text column; foreign tables, and views where the engine's views may be unbounded in
 * cost: `SqlWriter.sampleViews`). One row comes back: `n` (rows sampled)
 * and one JSON array per column with up to {@link MAX_HINT_VALUES} + 1 distinct values, each cut to
 * {@link MAX_HINT_VALUE_LENGTH} + 1 characters (so over-long values are recognisable).
 * @throws Error when `rowFilter` is given for a dialect that cannot take it (nothing is sampled)
 */
export function samplingSql(
  table: Table,
  rowFilter?: string,
  dialect: DatabaseDialectName = 'postgres',
): string | null {
  const syntax = sqlWriter(dialect);
  if (table.kind === 'foreign_table' || (table.kind === 'view' && !syntax.sampleViews)) return null;
  const columns = table.columns.filter(isSampledColumn).slice(0, MAX_SAMPLED_COLUMNS);
  if (columns.length === 0) return null;
  const from =
    rowFilter === undefined
      ? syntax.sampledFrom(table, SAMPLE_ROWS)
      : syntax.rowFilters
        ? `${syntax.relation(table)} WHERE ${rowFilter}`
        : null;
  if (from === null) throw new Error(`a row filter cannot be sampled in the ${dialect} dialect`);
  const list = columns.map((column) => syntax.quote(column.name)).join(', ');
  const parts = columns.map((column, i) => {
    const c = syntax.quote(column.name);
    return (
      `(SELECT ${syntax.listOf('v')} FROM (SELECT DISTINCT ${syntax.textCut(column.name, MAX_HINT_VALUE_LENGTH + 1)} AS v FROM s ` +
      `WHERE ${c} IS NOT NULL LIMIT ${MAX_HINT_VALUES + 1}) d) AS c${i}, ` +
      `(SELECT count(${c}) FROM s) AS n${i}`
    );
  });
  return `WITH s AS (SELECT ${list} FROM ${from} LIMIT ${SAMPLE_ROWS}) SELECT ${parts.join(', ')}`;
}

/**
 * Turns the sampling row into hints: columns with 1…{@link MAX_HINT_VALUES} distinct values, none
 * spanning lines (over-long values are dropped one by one), and not unique-looking (a column whose every sampled row differs is an
 * identifier or a name, unless the table is tiny: ≤ 20 rows).
 */
export function hintsFromRow(table: Table, row: readonly CellValue[]): ValueHint[] {
  const columns = table.columns.filter(isSampledColumn).slice(0, MAX_SAMPLED_COLUMNS);
  const hints: ValueHint[] = [];
  columns.forEach((column, i) => {
    const raw = row[2 * i];
    const count = Number(row[2 * i + 1] ?? 0);
    const all = parseValues(raw);
    if (all.length === 0 || all.length > MAX_HINT_VALUES) return;
    if (all.some((value) => /[\r\n]/.test(value))) return; // prose, not categories
    if (all.length === count && count > 20) return;
    const values = all.filter((value) => value.length <= MAX_HINT_VALUE_LENGTH);
    if (values.length === 0) return;
    hints.push({ column: column.name, values: values.sort(), source: 'sample', sampledRows: count });
  });
  return hints;
}

function parseValues(raw: CellValue | undefined): string[] {
  let value: unknown = raw;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return [];
    }
  }
  if (!Array.isArray(value)) return [];
  return value.filter((item): item is string => typeof item === 'string');
}

/** Options of {@link createValueSampler}. */
export interface ValueSamplerOptions {
  /** Statement timeout per table; default {@link SAMPLE_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Called with each failure (permission denied, timeout): the table just gets no sampled hints. */
  onError?: (table: Table, error: unknown) => void;
  /**
   * The row filter a user's data policy puts on a table, as SQL with its values written in (see
   * `rowFilterSql` in `policy/visibility.ts`): only rows that pass it are sampled. Default none.
   * @throws Error to sample nothing of that table (fail closed)
   */
  rowFilter?: (table: Table) => string | undefined;
}

/**
 * A sampler that runs {@link samplingSql} through `db.execute` (READ ONLY transaction, row cap 1,
 * statement timeout) and adds the enum labels of the catalog.
 */
export function createValueSampler(db: DatabaseConnector, options: ValueSamplerOptions = {}): ValueSampler {
  return async (table) => {
    const hints = enumHints(table);
    let sql: string | null;
    try {
      sql = samplingSql(table, options.rowFilter?.(table), db.dialect);
    } catch (error) {
      options.onError?.(table, error);
      return hints;
    }
    if (!sql) return hints;
    try {
      const result = await db.execute(sql, { maxRows: 1, timeoutMs: options.timeoutMs ?? SAMPLE_TIMEOUT_MS });
      const row = result.rows[0];
      if (row) hints.push(...hintsFromRow(table, row));
    } catch (error) {
      options.onError?.(table, error);
    }
    return hints;
  };
}
