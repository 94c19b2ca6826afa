/**
 * The read-only execution recipe shared by both connectors: one READ ONLY transaction with a
 * statement timeout, the statement behind a NO SCROLL cursor so at most `maxRows + 1` rows ever
 * leave the server, values converted from their text form, and ROLLBACK always.
 */
import type { ExecuteOptions, QueryResult } from '../../core/ports.js';
import type { Queryable } from './queryable.js';
import type { TypeNameCache } from './type-names.js';
import { convertValue } from './values.js';

/** A result with every value as the server's text (or null). */
export interface RawResult {
  fields: { name: string; typeOid: number }[];
  rows: (string | null)[][];
}

/** One connection inside one transaction, as each driver provides it. */
export interface ReadOnlySession extends Queryable {
  /**
   * Opens the READ ONLY transaction and applies `settings` (our own fixed `SET LOCAL …`
   * statements) in one round trip.
   */
  begin(settings: string[]): Promise<void>;
  /** Runs ONE statement on the extended query protocol; values as raw text. */
  queryRaw(sql: string): Promise<RawResult>;
  /** Ends the transaction without committing anything. */
  rollback(): Promise<void>;
}

/** Cursor name used for every statement (one cursor per transaction). */
const CURSOR = 'sqlrecall_cursor';

/**
 * Statements that `DECLARE … CURSOR FOR` accepts (SELECT, VALUES, TABLE, WITH … SELECT). Anything
 * else that reaches us (EXPLAIN, SHOW, or a write that bypassed the guard) runs directly in the
 * same read-only transaction, where PostgreSQL itself rejects writes (SQLSTATE 25006).
 */
export function isCursorable(sql: string): boolean {
  const word = /^[a-z]+/i.exec(stripLeadingNoise(sql))?.[0]?.toLowerCase();
  return word === 'select' || word === 'with' || word === 'values' || word === 'table';
}

/** Removes leading whitespace, `--` and (nested) `/* *\/` comments and opening parentheses. */
function stripLeadingNoise(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const char = sql[i]!;
    if (/\s|\(/.test(char)) {
      i += 1;
    } else if (sql.startsWith('--', i)) {
      const end = sql.indexOf('\n', i);
      i = end === -1 ? sql.length : end + 1;
    } else if (sql.startsWith('/*', i)) {
      let depth = 0;
      do {
        if (sql.startsWith('/*', i)) {
          depth += 1;
          i += 2;
        } else if (sql.startsWith('*/', i)) {
          depth -= 1;
          i += 2;
        } else {
          i += 1;
        }
      } while (depth > 0 && i < sql.length);
    } else {
      break;
    }
  }
  return sql.slice(i);
}

/**
 * The `SET LOCAL` statements of one execution. `idle_in_transaction_session_timeout` ends the
 * session server-side if this process dies mid-transaction; DateStyle/bytea_output fix the text
 * forms that {@link convertValue} parses.
 */
export function sessionSettings(timeoutMs: number, enforceTimeout: boolean): string[] {
  const ms = Math.max(1, Math.round(timeoutMs));
  return [
    ...(enforceTimeout ? [`SET LOCAL statement_timeout = ${ms}`] : []),
    `SET LOCAL idle_in_transaction_session_timeout = ${ms + 10_000}`,
    `SET LOCAL DateStyle = 'ISO, YMD'`,
    `SET LOCAL IntervalStyle = 'postgres'`,
    `SET LOCAL bytea_output = 'hex'`,
  ];
}

/**
 * Runs one guarded statement read-only. Errors propagate as thrown by the driver (the connector
 * maps them); the transaction is rolled back in every case.
 * @param session a connection (see {@link ReadOnlySession})
 * @param types the connector's type-name cache
 * @param enforceTimeout false for PGlite, which does not enforce `statement_timeout`
 */
export async function executeReadOnly(
  session: ReadOnlySession,
  sql: string,
  options: ExecuteOptions,
  types: TypeNameCache,
  enforceTimeout: boolean,
): Promise<QueryResult> {
  const maxRows = Math.max(0, Math.floor(options.maxRows));
  const started = performance.now();
  await session.begin(sessionSettings(options.timeoutMs, enforceTimeout));
  let raw: RawResult;
  try {
    if (isCursorable(sql)) {
      await session.queryRaw(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${sql}`);
      raw = await session.queryRaw(`FETCH ${maxRows + 1} FROM ${CURSOR}`);
    } else {
      raw = await session.queryRaw(sql);
    }
    await types.resolve(
      raw.fields.map((field) => field.typeOid),
      session,
    );
  } catch (error) {
    // Keep the original error; a failing rollback means a broken connection the connector discards.
    await session.rollback().catch(() => {});
    throw error;
  }
  await session.rollback();
  const truncated = raw.rows.length > maxRows;
  const rows = truncated ? raw.rows.slice(0, maxRows) : raw.rows;
  const oids = raw.fields.map((field) => field.typeOid);
  return {
    columns: raw.fields.map((field) => ({ name: field.name, type: types.name(field.typeOid) })),
    rows: rows.map((row) => row.map((value, i) => convertValue(value, oids[i] ?? 25, types.elementOf))),
    rowCount: rows.length,
    truncated,
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  };
}
