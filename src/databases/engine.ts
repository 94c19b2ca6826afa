/**
 * The two halves a database connector is made of, in the style of Kysely's dialects:
 *
 * - a {@link Dialect} describes an engine: how its values decode, how its errors map to
 *   {@link SqlrecallError}s, how its catalog is read, which statements open a read-only session,
 *   the SQL sqlrecall writes for itself (sampling, same spelling, the session's date and search
 *   path) and how a running statement is cancelled. It holds SQL and rules, never a connection.
 * - a {@link Driver} moves statements: it opens a session (one connection inside one transaction),
 *   runs statements on it, cancels the one running if it can, and closes. It holds no SQL of its
 *   own beyond opening and ending the transaction.
 *
 * `createConnector` (`connector.ts`) builds the one {@link DatabaseConnector} from a dialect and
 * a driver, so the read-only execution, timeouts, cancellation and error mapping are written once
 * per engine whatever client library carries them. PostgreSQL is `postgres/` (dialect, `pg`
 * driver) with the embedded PGlite driver in `pglite/`; a further engine is a sibling folder with
 * its own dialect and drivers.
 */
import type { SqlrecallError } from '../core/errors.js';
import type {
  CellValue,
  DatabaseDialectName,
  ExecuteOptions,
  IntrospectOptions,
  QueryResult,
} from '../core/ports.js';
import type { Schema, Table } from '../core/schema.js';

export type { DatabaseDialectName } from '../core/ports.js';

/** Anything that runs a parameterised statement: a driver session, a pool, a PGlite transaction. */
export interface Queryable {
  /** Runs one statement with `$n` parameters; rows as objects keyed by column name. */
  query(sql: string, params?: unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * One connection of a driver checked out for one unit of work. The dialect's statements open a
 * transaction on it ({@link DriverSession.begin}) and end it ({@link DriverSession.rollback});
 * an engine's own session type adds how statements run (PostgreSQL: `PgSession`, raw text rows
 * under a byte budget).
 */
export interface DriverSession extends Queryable {
  /**
   * Starts a transaction and runs `statements` (the dialect's own fixed SQL, e.g. `SET
   * TRANSACTION READ ONLY`, `SET LOCAL …`) in it, in one round trip where the driver can.
   */
  begin(statements: readonly string[]): Promise<void>;
  /** Ends the transaction without committing anything; a failure leaves the connection discarded. */
  rollback(): Promise<void>;
  /** True when the engine behind this session enforces the dialect's statement timeout. */
  readonly enforcesTimeout: boolean;
  /**
   * Best effort: stops the statement running in this session from outside (PostgreSQL:
   * {@link Dialect.cancellation} from a second connection). Does nothing when the driver cannot
   * interrupt its engine (PGlite in this process, or served over a socket by another process).
   */
  cancel(): void;
}

/** Options of {@link Driver.withSession}. */
export interface SessionOptions {
  /**
   * Statement timeout of the work in milliseconds: a pooled driver waits at least this long for a
   * free connection. Default: the driver's own wait.
   */
  timeoutMs?: number;
  /** Aborting gives up waiting for a connection (the connector maps it to "cancelled"). */
  signal?: AbortSignal;
}

/**
 * Carries statements to one database. Errors of its client library are thrown as they are (the
 * dialect maps them); its own failures to hand out a connection are already
 * {@link SqlrecallError}s (`db_busy`, `db_unreachable`).
 */
export interface Driver<S extends DriverSession = DriverSession> {
  /** The target with any password masked, safe to print. */
  readonly displayName: string;
  /** Runs the engine's cheapest statement on a connection. */
  ping(): Promise<void>;
  /**
   * Checks out a session, runs `work` on it and gives the connection back (discarded when its
   * rollback failed or it broke). `work` runs inside whatever exclusive access the engine needs
   * (PGlite: its transaction lock and the gate it shares with socket clients).
   */
  withSession<T>(work: (session: S) => Promise<T>, options?: SessionOptions): Promise<T>;
  /** Closes every connection (or the instance this driver opened). */
  close(): Promise<void>;
}

/** What the database says about the session: its today, time zone and search path. */
export interface DatabaseSession {
  /** `current_date` as YYYY-MM-DD. */
  today: string;
  /** The time zone setting, e.g. `Pacific/Kiritimati`; absent when unknown. */
  timeZone?: string;
  /** The schemas an unqualified name is looked up in. */
  searchPath?: string[];
}

/**
 * The SQL sqlrecall writes for itself (never the model's SQL): bounded samples of a table's values,
 * the check of a value's stored spellings, the read of the session's date, time zone and search
 * path. The pipeline (`agent/`, `linking/`) asks the dialect for this SQL instead of writing it.
 */
export interface SqlDialect {
  /** `schema.table`, both quoted. */
  relation(table: Table): string;
  /**
   * A FROM item with at most `rows` rows of `table` and never a full scan. Used inside
   * `(SELECT … FROM <item> LIMIT rows)`.
   */
  sampledFrom(table: Table, rows: number): string;
  /**
   * Distinct non-null values of one column (as text, cut to `maxLength` characters) among the
   * first `rows` rows of {@link SqlDialect.sampledFrom}; one column `v`.
   */
  columnSampleSql(table: Table, column: string, rows: number, maxLength: number): string;
  /** The column's distinct stored spellings equal to `value` ignoring case, at most `limit`; one column `v`. */
  sameSpellingSql(table: Table, column: string, value: string, limit: number): string;
  /** One row: today (YYYY-MM-DD), the time zone and the search path as a JSON array text. */
  readonly sessionSql: string;
  /**
   * {@link DatabaseSession} from the row of {@link SqlDialect.sessionSql}.
   * @returns undefined when the row holds no valid date
   */
  sessionFromRow(row: readonly unknown[]): DatabaseSession | undefined;
}

/** Where an error happened, for the dialect's message. */
export interface ErrorContext {
  /** The connection target, already masked. */
  displayName: string;
  /** The statement timeout in force, for a timeout's message. */
  timeoutMs?: number;
  /** True when the caller aborted (a cancel is then "cancelled", not a timeout). */
  aborted?: boolean;
}

/** How a dialect maps driver errors (every error a user sees is a {@link SqlrecallError}). */
export interface DialectErrors {
  /** `db_unreachable` naming the target and the reason. */
  unreachable(displayName: string, error: unknown): SqlrecallError;
  /** An error of a running statement: `db_query`, `db_timeout`, `db_unreachable`, `result_too_large`; a SqlrecallError passes. */
  query(error: unknown, context: ErrorContext): SqlrecallError;
  /** The error of a statement the caller cancelled (before or while it ran). */
  cancelled(context: ErrorContext): SqlrecallError;
}

/** The statements that open each kind of transaction (run by {@link DriverSession.begin}). */
export interface DialectTransactions {
  /** Running one guarded statement: read-only, statement timeout (when enforced), fixed parsing and output settings. */
  readOnly(timeoutMs: number, enforceTimeout: boolean): string[];
  /** Reading the catalog: read-only, one snapshot for every catalog query. */
  readonly snapshot: readonly string[];
  /** The guard's server-side analysis: read-write (a temporary view needs it) but always rolled back. */
  analysis(timeoutMs: number, enforceTimeout: boolean): string[];
}

/**
 * How a running statement is stopped: `sql` runs on a second connection with the session's
 * server-side id as `$1`; undefined when the engine offers no such statement.
 */
export interface DialectCancellation {
  sql: string;
}

/**
 * The recipes a dialect runs on a session, bound to what one connector keeps about its database
 * (PostgreSQL: the type names of user-defined types). Each opens its own transaction and rolls it
 * back, always; driver errors propagate as thrown (the connector maps them).
 */
export interface DialectRunner<S extends DriverSession> {
  /** Reads the catalog in a fixed number of queries. */
  introspect(session: S, options: IntrospectOptions): Promise<Schema>;
  /** Runs one guarded statement read-only under the row cap, the byte budget and the timeout. */
  execute(session: S, sql: string, options: ExecuteOptions): Promise<QueryResult>;
  /** Runs our own analysis statements in one transaction; the last one's rows, every value as text. */
  analyse(
    session: S,
    statements: readonly string[],
    options: { timeoutMs: number },
  ): Promise<Record<string, string | null>[]>;
}

/** An engine, described; see the module comment. */
export interface Dialect<S extends DriverSession = DriverSession> extends SqlDialect {
  /** The engine's name, {@link DatabaseConnector.dialect}. */
  readonly name: DatabaseDialectName;
  /** One value from the engine's text form and its column's type id to a JSON-safe cell. */
  decodeValue(text: string | null, typeId: number): CellValue;
  readonly errors: DialectErrors;
  readonly transactions: DialectTransactions;
  readonly cancellation: DialectCancellation | undefined;
  /** A runner for one connector (one database). */
  runner(): DialectRunner<S>;
}
