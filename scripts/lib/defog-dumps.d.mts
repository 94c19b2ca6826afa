// Types of scripts/lib/defog-dumps.mjs, for the tests that import it.

/** One column as `information_schema.columns` describes it. */
export interface DumpColumn {
  table_schema: string;
  table_name: string;
  column_name: string;
  data_type: string;
  character_maximum_length: number | null;
  numeric_precision: number | null;
  numeric_scale: number | null;
}

/** One evaluated base table: its columns, primary key columns in key order, and rows as PostgreSQL text. */
export interface DumpTable {
  schema: string;
  name: string;
  columns: DumpColumn[];
  primary: string[];
  rows: (string | null)[][];
}

/** A dump evaluated on `day` (UTC, `CURRENT_DATE` in PGlite). */
export interface EvaluatedDump {
  day: string;
  tables: DumpTable[];
}

export const DUMPS_CACHE_FORMAT: string;
export const DUMPS_CACHE_TTL_MS: number;
export function defaultDumpsCacheDir(): string;
export function dumpCacheKey(text: string, day?: string): string;
export function evaluateDump(text: string): Promise<EvaluatedDump>;
export function evaluatedDefogDump(options: {
  dumpsDir: string;
  name: string;
  cacheDir?: string | false;
  ttlMs?: number;
}): Promise<EvaluatedDump & { name: string; cached: boolean }>;
