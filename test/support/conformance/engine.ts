/**
 * The shape every engine takes in the conformance suite (test/conformance.test.ts): one module per
 * engine in this folder exports a {@link ConformanceEngine}, and `index.ts` lists them. The suite
 * loops over the list and runs the same cases on each (connect, introspect, read each value type,
 * limits, cancel, hostile statements refused with the data unchanged, reads of each kind accepted).
 *
 * Every engine's database holds the same fixture, written in its own dialect:
 * - `customers(id integer primary key, name text not null, email text, region <enum or text>,
 *   created_on date)`, 3 rows: (1,'Ada','ada@example.com','EMEA','2024-01-05'),
 *   (2,'Grace',NULL,'AMER','2024-02-10'), (3,'Linus','linus@example.com','EMEA','2024-03-15');
 *   a comment "People who bought something" on the table where the engine keeps comments;
 *   `region` an enum ('EMEA','AMER','APAC') where the engine has enums.
 * - `orders(id integer primary key, customer_id integer references customers(id),
 *   total decimal(12,2), placed_at timestamp)`, 4 rows: (10,1,'120.50','2024-04-01 10:00:00'),
 *   (11,1,'99999999.99','2024-04-02 11:30:00'), (12,2,'0.10','2024-04-03 12:00:00'),
 *   (13,3,NULL,'2024-04-04 09:15:00').
 * - a view `big_orders` = `SELECT id, customer_id, total FROM orders WHERE total > 100`.
 */
import type { CellValue, DatabaseConnector, DatabaseDialectName } from '../../../src/core/ports.js';

/** One engine of the suite. */
export interface ConformanceEngine {
  /** Shown in test names: `postgres`, `pglite`, `mariadb`, `sqlite`, `duckdb`, … */
  name: string;
  dialect: DatabaseDialectName;
  /**
   * Why this engine cannot run here (no server answers, the optional driver is not installed), or
   * undefined when it can. CI provides every engine; a reason there is a failure, not a skip
   * (the suite fails when `CI_REQUIRE_ALL_ENGINES` is set and an engine is unavailable).
   */
  unavailable(): Promise<string | undefined>;
  /** A fresh database holding the fixture above, and a connector on it through the product's own path. */
  setUp(): Promise<ConformanceDatabase>;
}

/** One engine's database for one run of the suite. */
export interface ConformanceDatabase {
  /** The connector as `openDatabase(url)` builds it (never a test double). */
  connector: DatabaseConnector;
  /** The URL the connector was opened with (a user would pass it as `--db`). */
  url: string;
  /** Statements in this engine's dialect. */
  sql: {
    /**
     * One row whose columns cover the value types: a big integer beyond 2^53, an exact decimal,
     * a date, a timestamp, a boolean (where the engine has one), a JSON value (where it has one),
     * a binary value, a NULL; with the cell each must decode to (README's values model: big
     * integers and decimals as exact strings, dates ISO, JSON as text, blobs as `<binary N bytes>`).
     */
    values: { sql: string; expected: Record<string, CellValue> };
    /** A statement producing exactly `n` rows (for the row cap and byte budget). */
    rows(n: number): string;
    /** A read that runs for at least 5 seconds unless cancelled (for cancellation and the timeout). */
    slow: string;
    /** Reads of each kind the guard must accept and the engine run: join, CTE, window, aggregate with GROUP BY, subquery, the view. */
    reads: string[];
    /**
     * Statements that must never change the data: each is refused by the guard, or, if the guard
     * lets it through, fails in the engine's read-only session. `why` names the danger.
     */
    hostile: { sql: string; why: string }[];
  };
  /**
   * Why this engine cannot stop a statement once it runs (an embedded engine executing on the
   * caller's thread), when it cannot: the cancellation and timeout cases are then skipped, saying
   * this. Undefined (the default): both cases run.
   */
  uninterruptible?: string;
  /** A fingerprint of the data (a file's hash; row counts and a checksum on a server): equal before and after every hostile statement. */
  fingerprint(): Promise<string>;
  /** Closes the connector and removes the database. */
  dispose(): Promise<void>;
}
