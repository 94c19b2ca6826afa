/**
 * The PostgreSQL {@link Dialect}: value decoding (`values.ts`), error mapping (`errors.ts`), catalog
 * introspection (`introspect.ts`), the statements that open each transaction and the read-only
 * execution recipe (`execute.ts`), the cancellation statement, and the SQL sqlrecall writes for
 * itself (bounded samples of a table's values, the check of a value's stored spellings, the read
 * of the session's date, time zone and search path). Driver-independent: the same statements run
 * through `pg` on a server (`pg-driver.ts`), through PGlite in this process and through the
 * shared-socket client of another process's PGlite (`../pglite/driver.ts`). The pipeline
 * (`agent/`, `linking/`) asks this object for SQL instead of writing PostgreSQL itself.
 */
import { quoteIdent } from '../../sql/render.js';
import type { Dialect, SqlDialect } from '../engine.js';
import { queryError, unreachableError } from './errors.js';
import {
  analysisTransaction,
  beginForced,
  executeReadOnly,
  type PgSession,
  readOnlyTransaction,
  SNAPSHOT_TRANSACTION,
} from './execute.js';
import { introspectCatalog } from './introspect.js';
import { TypeNameCache } from './type-names.js';
import { convertValue } from './values.js';

export type { DatabaseSession, SqlDialect } from '../engine.js';

/**
 * Above this planner row estimate a sample takes `TABLESAMPLE SYSTEM` pages instead of the first
 * rows (on a large table the first pages are often the oldest rows only).
 */
export const TABLESAMPLE_MIN_ROWS = 100_000;

/** A standard SQL string literal (quotes doubled; standard_conforming_strings is on since 9.1). */
const literal = (value: string) => `'${value.replace(/'/g, "''")}'`;

/** The SQL sqlrecall writes for itself on PostgreSQL (see {@link SqlDialect}). */
const postgresSql: SqlDialect = {
  relation: (table) => `${quoteIdent(table.schema)}.${quoteIdent(table.name)}`,

  sampledFrom(table, rows) {
    const estimate = table.estimatedRows ?? 0;
    const sample =
      table.kind === 'table' && estimate > TABLESAMPLE_MIN_ROWS
        ? ` TABLESAMPLE SYSTEM (${Math.max(0.01, Math.min(100, (100 * rows * 4) / estimate)).toFixed(4)})`
        : '';
    return `${postgresSql.relation(table)}${sample}`;
  },

  columnSampleSql(table, column, rows, maxLength) {
    const c = quoteIdent(column);
    return `SELECT DISTINCT left(${c}::text, ${maxLength}) AS v FROM (SELECT ${c} FROM ${postgresSql.sampledFrom(table, rows)} LIMIT ${rows}) s WHERE ${c} IS NOT NULL`;
  },

  sameSpellingSql(table, column, value, limit) {
    const c = quoteIdent(column);
    return `SELECT DISTINCT ${c}::text AS v FROM ${postgresSql.relation(table)} WHERE lower(${c}::text) = lower(${literal(value)}) LIMIT ${limit}`;
  },

  sessionSql:
    "SELECT to_char(current_date, 'YYYY-MM-DD') AS today, current_setting('TimeZone') AS time_zone, array_to_json(current_schemas(false))::text AS search_path",

  sessionFromRow(row) {
    const [today, timeZone, path] = row;
    if (typeof today !== 'string' || !/^\d{4}-\d{2}-\d{2}$/.test(today)) return undefined;
    let searchPath: string[] | undefined;
    try {
      const parsed = JSON.parse(String(path)) as unknown;
      if (Array.isArray(parsed)) searchPath = parsed.map(String);
    } catch {
      searchPath = undefined;
    }
    return {
      today,
      ...(typeof timeZone === 'string' && timeZone !== '' ? { timeZone } : {}),
      ...(searchPath ? { searchPath } : {}),
    };
  },
};

/**
 * Runs `work` between `begin` and a rollback that always happens: on failure the rollback's own
 * error is dropped (a failed rollback leaves the connection discarded by its driver) and the
 * original error is thrown.
 */
async function rolledBack<T>(session: PgSession, work: () => Promise<T>): Promise<T> {
  let result: T;
  try {
    result = await work();
  } catch (error) {
    await session.rollback().catch(() => {});
    throw error;
  }
  await session.rollback();
  return result;
}

/** The PostgreSQL dialect (see the module comment); {@link SqlDialect} members at the top level. */
export const postgresDialect: Dialect<PgSession> = {
  ...postgresSql,
  name: 'postgres',
  decodeValue: (text, typeId) => convertValue(text, typeId),
  errors: {
    unreachable: unreachableError,
    query: queryError,
    // PostgreSQL's own query_canceled, so a cancel before the statement reads like one during it.
    cancelled: (context) => queryError({ code: '57014' }, { ...context, aborted: true }),
  },
  transactions: {
    readOnly: readOnlyTransaction,
    snapshot: SNAPSHOT_TRANSACTION,
    analysis: analysisTransaction,
  },
  cancellation: { sql: 'SELECT pg_cancel_backend($1)' },

  runner() {
    // Type oids of user-defined types differ per database: one cache per connector.
    const types = new TypeNameCache();
    return {
      introspect: (session, options) =>
        rolledBack(session, async () => {
          await session.begin(SNAPSHOT_TRANSACTION);
          return introspectCatalog(session, { schemas: options.schemas });
        }),

      execute: (session, sql, options) => executeReadOnly(session, sql, options, types),

      analyse: (session, statements, options) =>
        rolledBack(session, async () => {
          await beginForced(session, analysisTransaction(options.timeoutMs, session.enforcesTimeout));
          let rows: Record<string, string | null>[] = [];
          for (const text of statements) {
            // Extended protocol: exactly one statement per message, whatever the text holds.
            const result = await session.queryRaw(text);
            const names = result.fields.map((field) => field.name);
            rows = result.rows.map((row) =>
              Object.fromEntries(names.map((name, i) => [name, row[i] ?? null])),
            );
          }
          return rows;
        }),
    };
  },
};
