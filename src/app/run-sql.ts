/**
 * The `runSql` use case: one statement a person wrote, checked and run the same way on every
 * surface (`sqlrecall sql`, `POST /api/sql`, the MCP `sql` tool). The checks themselves (length
 * cap, the guard on the text as given, allowlist, function policy, limits, cancellation, the "did
 * you mean" hint) are {@link runCheckedSql}'s, the one path the question pipeline uses for saved examples
 * too; this module gives it the configured limits and the user's database, and shapes the result
 * document the CLI and MCP print.
 */

import { runCheckedSql } from '../agent/run-sql.js';
import type { Config } from '../config/config.js';
import type { StatementListener } from '../core/audit.js';
import type { DatabaseConnector, QueryResult } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import { dialectOfUrl } from '../databases/open.js';
import type { EffectivePolicy } from '../policy/types.js';
import { visibleSchema } from '../policy/visibility.js';
import { type ChartSpec, chartFor } from './chart.js';
import { type ErrorDocument, errorDocument } from './error-document.js';

/** The configured limits every user statement runs under. */
export interface SqlLimits {
  /** Allowlist mode (`--allow-tables`): the only relations a statement may read; empty: none. */
  allowTables: readonly string[];
  /** Row cap (`--max-rows`). */
  maxRows: number;
  /** Statement timeout, in milliseconds. */
  statementTimeoutMs: number;
  /** Result byte budget (`--max-result-bytes`), in bytes. */
  maxResultBytes: number;
}

/** What {@link runSql} needs of the running application. */
export interface SqlRuntime {
  /** The user's database (behind the function policy); opened only for a statement the guard accepts. */
  database(): Promise<DatabaseConnector>;
  /**
   * The database as one user may read it, under that user's data policy; used when the request
   * names its user. Absent: {@link SqlRuntime.database} for everyone.
   */
  databaseFor?(user: string, options: { team?: string }): Promise<DatabaseConnector>;
  /** The catalog; read only when a check needs it (an allowlist, or a name the database does not know). */
  catalog(): Promise<Schema>;
  limits: SqlLimits;
  /** The database's dialect (from its URL, without opening it): picks the guard. Default `postgres`. */
  dialect?: DatabaseConnector['dialect'];
}

/** The limits of a configuration. */
export function sqlLimitsOf(config: Config): SqlLimits {
  return {
    allowTables: config.allowTables,
    maxRows: config.maxRows,
    statementTimeoutMs: config.statementTimeoutMs,
    maxResultBytes: config.maxResultBytes,
  };
}

/**
 * {@link SqlRuntime} over a runtime's database and configuration (the catalog read with the
 * configured schemas).
 */
export function sqlRuntimeOf(runtime: {
  config: Config;
  database(): Promise<DatabaseConnector>;
  databaseFor?(user: string, options: { team?: string }): Promise<DatabaseConnector>;
}): SqlRuntime {
  const schemas = runtime.config.schemas;
  return {
    database: () => runtime.database(),
    ...(runtime.databaseFor
      ? { databaseFor: (user: string, options: { team?: string }) => runtime.databaseFor!(user, options) }
      : {}),
    catalog: async () =>
      (await runtime.database()).introspect({ schemas: schemas.length ? schemas : undefined }),
    limits: sqlLimitsOf(runtime.config),
    dialect: dialectOfUrl(runtime.config.databaseUrl),
  };
}

/** One statement to run. */
export interface RunSqlRequest {
  /** The statement as the person gave it (surrounding comments and a final semicolon are fine). */
  sql: string;
  /** Aborting it cancels the running statement on the server. */
  signal?: AbortSignal;
  /** Whose statement it is: it runs under that user's data policy (see {@link SqlRuntime.databaseFor}). */
  user?: string;
  /** The user's team, for the policy of a user the policy file does not name. */
  team?: string;
  /**
   * The data policy of the person running it: "did you mean" hints name only the tables and
   * columns it lets them see. Default nothing restricted.
   */
  policy?: EffectivePolicy;
  /** Told of the statement once it ran, failed or was refused (the audit trail). */
  onStatement?: StatementListener;
}

/** A statement that ran: as the guard normalised it, and its rows. */
export interface SqlRun {
  sql: string;
  result: QueryResult;
}

/**
 * Checks and runs one statement a person wrote.
 * @throws SqlrecallError `usage` (empty, or over 100,000 characters), `guard_refused` (several
 *   statements, a write, a refused function or relation; worded by `core/refusal.ts`),
 *   `config` (no database), `db_*` (the database's own error, with a "did you mean" hint for an
 *   unknown name; or its cancellation), `result_too_large`
 */
export function runSql(request: RunSqlRequest, runtime: SqlRuntime): Promise<SqlRun> {
  const { limits } = runtime;
  return runCheckedSql({
    db: () =>
      request.user !== undefined && runtime.databaseFor
        ? runtime.databaseFor(request.user, request.team !== undefined ? { team: request.team } : {})
        : runtime.database(),
    ...(runtime.dialect ? { dialect: runtime.dialect } : {}),
    sql: request.sql,
    schema: async () => {
      const catalog = await runtime.catalog();
      return request.policy ? visibleSchema(catalog, request.policy) : catalog;
    },
    allowTables: limits.allowTables,
    maxRows: limits.maxRows,
    timeoutMs: limits.statementTimeoutMs,
    maxBytes: limits.maxResultBytes,
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.onStatement ? { onStatement: request.onStatement } : {}),
  });
}

/**
 * The result document of a statement, the same on every front end (`sql --json`, `POST /api/sql`,
 * the MCP `sql` tool): column names and their server type names side by side; values by the value
 * contract (exact decimal strings, JSON text); the chart that fits the rows, as in the ask document.
 */
export type SqlDocument = {
  /** The statement as the guard normalised it (what ran). */
  sql: string;
  /** A chart that fits the rows (a bar or line chart), or null. */
  chart: ChartSpec | null;
} & ResultRows;

/** The rows part every result document shares (`sql --json`, `ask --json`, HTTP and MCP). */
export type ResultRows = {
  /** Column names of the result, in order. */
  columns: string[];
  /** The server's type name of each column (`int8`, `jsonb`, …), in the order of `columns`. */
  columnTypes: string[];
  rows: QueryResult['rows'];
  /** Rows returned (never more than the row cap). */
  rowCount: number;
  /** True when the statement had more rows than the row cap, or more bytes than the budget. */
  truncated: boolean;
  /** Set when `truncated`: the row cap (`max_rows`) or the byte budget (`max_bytes`). */
  truncatedReason?: 'max_rows' | 'max_bytes';
};

/** The {@link SqlDocument} of a run. */
export function sqlDocument(run: SqlRun): SqlDocument {
  const { result } = run;
  return {
    sql: run.sql,
    columns: result.columns.map((c) => c.name),
    columnTypes: result.columns.map((c) => c.type),
    rows: result.rows,
    rowCount: result.rowCount,
    truncated: result.truncated,
    ...(result.truncatedReason !== undefined ? { truncatedReason: result.truncatedReason } : {}),
    chart: chartFor(result),
  };
}

/**
 * The document of a statement that was refused or failed, the same on every front end
 * (`sql --json`, `POST /api/sql`, the MCP `sql` tool): the statement as given, so a script sees
 * what was refused, and the {@link ErrorDocument}.
 */
export type SqlFailureDocument = { sql: string; error: ErrorDocument };

/** The {@link SqlFailureDocument} of `sql` and what it failed with. */
export function sqlFailureDocument(sql: string, error: unknown): SqlFailureDocument {
  return { sql, error: errorDocument(error) };
}
