/**
 * The read-only execution recipe of the PostgreSQL dialect, whatever the driver: one READ ONLY transaction with a
 * statement timeout, the statement behind a NO SCROLL cursor whose rows are fetched in batches under
 * the row cap and the byte budget (the rest never leaves the server), values converted from their text
 * form, and ROLLBACK always.
 */
import { SqlrecallError } from '../../core/errors.js';
import { DEFAULT_MAX_RESULT_BYTES, type ExecuteOptions, type QueryResult } from '../../core/ports.js';
import { guardRefusal } from '../../core/refusal.js';
import type { DriverSession } from '../engine.js';
import type { TypeNameCache } from './type-names.js';
import { convertValue } from './values.js';
import type { HeldBack } from './wire-gate.js';

/** A result with every value as the server's text (or null). */
export interface RawResult {
  fields: { name: string; typeOid: number }[];
  rows: (string | null)[][];
  /**
   * The first row the driver held back, undecoded, because it would have passed `limitBytes`
   * (`wire-gate.ts`); every row after it was held back too.
   */
  heldBack?: HeldBack;
}

/**
 * A PostgreSQL driver's session (`pg` pooled connection, PGlite transaction, shared-socket client):
 * the engine-neutral {@link DriverSession} plus raw-text reads under a byte budget.
 */
export interface PgSession extends DriverSession {
  /**
   * Runs ONE statement on the extended query protocol; values as raw text. Rows past `limitBytes`
   * (bytes of their values, counted on the wire before decoding; default: only the driver's own
   * ceiling, `MAX_DECODED_ROW_BYTES`) are not decoded: see {@link RawResult.heldBack}.
   */
  queryRaw(sql: string, limitBytes?: number, params?: readonly string[]): Promise<RawResult>;
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
 * Settings that change how PostgreSQL reads SQL text, forced to the values the guard's parser
 * (libpg-query) assumes, so the statement the server runs is the statement that was checked. With
 * `standard_conforming_strings = off` a backslash escapes the closing quote of an ordinary string
 * literal, so `'\' AS a, ' AS b, f() AS c, '` would be two literals to the guard and a call of
 * `f` to the server; `backslash_quote` governs `\'` in the same situations, `transform_null_equals`
 * rewrites `= NULL`, and `client_encoding` decides which bytes are quotes.
 */
export const PARSING_SETTINGS: readonly string[] = [
  'SET LOCAL standard_conforming_strings = on',
  `SET LOCAL backslash_quote = 'safe_encoding'`,
  'SET LOCAL transform_null_equals = off',
  `SET LOCAL client_encoding = 'UTF8'`,
];

/**
 * The `SET LOCAL` statements of one execution. `idle_in_transaction_session_timeout` ends the
 * session server-side if this process dies mid-transaction; DateStyle/bytea_output fix the text
 * forms that {@link convertValue} parses; {@link PARSING_SETTINGS} come first.
 */
export function sessionSettings(timeoutMs: number, enforceTimeout: boolean): string[] {
  const ms = Math.max(1, Math.round(timeoutMs));
  return [
    ...PARSING_SETTINGS,
    ...(enforceTimeout ? [`SET LOCAL statement_timeout = ${ms}`] : []),
    `SET LOCAL idle_in_transaction_session_timeout = ${ms + 10_000}`,
    `SET LOCAL DateStyle = 'ISO, YMD'`,
    `SET LOCAL IntervalStyle = 'postgres'`,
    `SET LOCAL bytea_output = 'hex'`,
    // money prints as `$1,234.56` / `-$1,234.56` in the C locale; convertValue strips `$` and `,`.
    `SET LOCAL lc_monetary = 'C'`,
  ];
}

/**
 * The statements that open the transaction of one execution (after the driver's `BEGIN`): READ
 * ONLY, then {@link sessionSettings}.
 */
export function readOnlyTransaction(timeoutMs: number, enforceTimeout: boolean): string[] {
  return ['SET TRANSACTION READ ONLY', ...sessionSettings(timeoutMs, enforceTimeout)];
}

/**
 * The statements that open the guard's analysis transaction: READ WRITE (a temporary view needs
 * it; the transaction is always rolled back), the {@link PARSING_SETTINGS} and the timeout.
 */
export function analysisTransaction(timeoutMs: number, enforceTimeout: boolean): string[] {
  const ms = Math.max(1, Math.round(timeoutMs));
  return [
    'SET TRANSACTION READ WRITE',
    ...PARSING_SETTINGS,
    ...(enforceTimeout ? [`SET LOCAL statement_timeout = ${ms}`] : []),
  ];
}

/** The statements that open a catalog read: one snapshot for every query, read-only. */
export const SNAPSHOT_TRANSACTION: readonly string[] = [
  'SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY',
];

/**
 * Opens the transaction with `settings`; when the server will not take one of the
 * {@link PARSING_SETTINGS}, the statement is refused (what the server would read might differ
 * from what the guard checked) instead of running under the database's own setting.
 * @throws SqlrecallError `guard_refused` (rule `parsing-settings`) when a parsing setting is refused
 */
export async function beginForced(
  session: Pick<DriverSession, 'begin'>,
  settings: readonly string[],
): Promise<void> {
  try {
    await session.begin(settings);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const setting = PARSING_SETTINGS.map((line) => /SET LOCAL (\w+)/.exec(line)![1]!).find((name) =>
      message.toLowerCase().includes(name),
    );
    if (setting === undefined) throw error;
    throw guardRefusal(
      `the database does not accept ${setting} for this session (${message}), so it might read the statement differently from the guard.`,
      'parsing-settings',
      { cause: error },
    );
  }
}

/** Rows of the first FETCH (before the average row size is known). */
const FIRST_BATCH_ROWS = 8;
/** Most rows of one FETCH. */
const MAX_BATCH_ROWS = 1000;
/**
 * Each FETCH after the first asks for about this share of the byte budget (1/16), so the rows
 * held while the budget is checked overshoot it by at most one sixteenth (plus one row).
 */
const BATCH_BUDGET_SHARE = 16;

/**
 * Throws PostgreSQL's own "query_canceled" (SQLSTATE 57014) when the caller aborted: a cancel that
 * arrived between two statements (the backend was idle, so `pg_cancel_backend` had nothing to
 * stop) must still stop the next one.
 */
function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) {
    throw Object.assign(new Error('canceling statement due to user request'), { code: '57014' });
  }
}

/** UTF-8 size of one raw row (SQL NULL counts 0). */
function rowBytes(row: (string | null)[]): number {
  let bytes = 0;
  for (const value of row) if (value !== null) bytes += Buffer.byteLength(value, 'utf8');
  return bytes;
}

/** Raw rows gathered under the row cap and the byte budget. */
interface Gathered {
  fields: RawResult['fields'];
  rows: (string | null)[][];
  truncatedReason?: 'max_rows' | 'max_bytes';
  /** The row that did not fit, when the driver held it back before decoding. */
  heldBack?: HeldBack;
}

/**
 * Fetches rows from the open cursor in batches sized from the average row so far, stopping at
 * `maxRows` (one more row is fetched to detect truncation) or when the next row would pass
 * `maxBytes`. The server keeps the rest; the rollback closes the cursor.
 */
async function gather(
  session: PgSession,
  maxRows: number,
  maxBytes: number,
  signal: AbortSignal | undefined,
): Promise<Gathered> {
  const rows: (string | null)[][] = [];
  let fields: RawResult['fields'] | undefined;
  let bytes = 0;
  let batch = Math.min(maxRows + 1, FIRST_BATCH_ROWS);
  for (;;) {
    throwIfAborted(signal);
    // The driver holds back, undecoded, the rows past what is left of the budget.
    const raw = await session.queryRaw(`FETCH ${batch} FROM ${CURSOR}`, maxBytes - bytes);
    fields ??= raw.fields;
    for (const row of raw.rows) {
      if (rows.length === maxRows) return { fields, rows, truncatedReason: 'max_rows' };
      const size = rowBytes(row);
      if (bytes + size > maxBytes) return { fields, rows, truncatedReason: 'max_bytes' };
      bytes += size;
      rows.push(row);
    }
    if (raw.heldBack) {
      if (rows.length === maxRows) return { fields, rows, truncatedReason: 'max_rows' };
      return { fields, rows, truncatedReason: 'max_bytes', heldBack: raw.heldBack };
    }
    if (raw.rows.length < batch) return { fields, rows };
    const average = Math.max(1, bytes / Math.max(1, rows.length));
    const byBudget = Math.floor(maxBytes / BATCH_BUDGET_SHARE / average);
    batch = Math.max(1, Math.min(MAX_BATCH_ROWS, byBudget, maxRows + 1 - rows.length));
  }
}

/**
 * Runs one guarded statement read-only. Rows stream from a cursor in batches under the row cap
 * (`options.maxRows`) and the byte budget (`options.maxBytes`, default
 * {@link DEFAULT_MAX_RESULT_BYTES}). Driver errors propagate as thrown (the connector maps them);
 * the transaction is rolled back in every case.
 * @param session a connection (see {@link PgSession}); `statement_timeout` is set only when it
 *   {@link DriverSession.enforcesTimeout} (PGlite does not)
 * @param types the connector's type-name cache
 * @throws SqlrecallError `result_too_large` when not even the first row fits in the byte budget
 */
export async function executeReadOnly(
  session: PgSession,
  sql: string,
  options: ExecuteOptions,
  types: TypeNameCache,
): Promise<QueryResult> {
  const maxRows = Math.max(0, Math.floor(options.maxRows));
  const maxBytes = Math.max(0, Math.floor(options.maxBytes ?? DEFAULT_MAX_RESULT_BYTES));
  const started = performance.now();
  await beginForced(session, readOnlyTransaction(options.timeoutMs, session.enforcesTimeout));
  let gathered: Gathered;
  try {
    if (isCursorable(sql)) {
      await session.queryRaw(`DECLARE ${CURSOR} NO SCROLL CURSOR FOR ${sql}`, undefined, options.params);
      gathered = await gather(session, maxRows, maxBytes, options.signal);
    } else {
      const raw = await session.queryRaw(sql, maxBytes, options.params);
      gathered = { fields: raw.fields, rows: [], ...(raw.heldBack ? { heldBack: raw.heldBack } : {}) };
      let bytes = 0;
      for (const row of raw.rows) {
        if (gathered.rows.length === maxRows) {
          gathered.truncatedReason = 'max_rows';
          break;
        }
        bytes += rowBytes(row);
        if (bytes > maxBytes) {
          gathered.truncatedReason = 'max_bytes';
          break;
        }
        gathered.rows.push(row);
      }
      if (raw.heldBack && gathered.rows.length < maxRows) gathered.truncatedReason = 'max_bytes';
    }
    await types.resolve(
      gathered.fields.map((field) => field.typeOid),
      session,
    );
  } catch (error) {
    // Keep the original error; a failing rollback means a broken connection the connector discards.
    await session.rollback().catch(() => {});
    throw error;
  }
  await session.rollback();
  const { fields, rows, truncatedReason, heldBack } = gathered;
  if (truncatedReason === 'max_bytes' && rows.length === 0) {
    const size = heldBack ? ` (${formatBytes(heldBack.rowBytes)})` : '';
    const budget =
      heldBack && heldBack.remainingBytes < maxBytes
        ? `the ${formatBytes(heldBack.remainingBytes)} one row may have`
        : `the result budget of ${formatBytes(maxBytes)}`;
    throw new SqlrecallError(
      'result_too_large',
      `The first row alone${size} is larger than ${budget}; it was not read.`,
      {
        details: {
          maxBytes,
          hint: 'Select fewer or shorter columns (e.g. left(col, 1000)), or raise --max-result-bytes.',
        },
      },
    );
  }
  const oids = fields.map((field) => field.typeOid);
  return {
    columns: fields.map((field) => ({ name: field.name, type: types.name(field.typeOid) })),
    rows: rows.map((row) => row.map((value, i) => convertValue(value, oids[i] ?? 25, types.elementOf))),
    rowCount: rows.length,
    truncated: truncatedReason !== undefined,
    ...(truncatedReason !== undefined ? { truncatedReason } : {}),
    durationMs: Math.round((performance.now() - started) * 100) / 100,
  };
}

/** `64 MiB`, `1.5 KiB`, `300 bytes`. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ['KiB', 'MiB', 'GiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${Number(value.toFixed(1))} ${units[unit]}`;
}
