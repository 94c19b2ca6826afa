/**
 * The one migration runner for every table sqlrecall owns in its own database (the memory store's
 * PGlite or server PostgreSQL): memories and conversations, users and tokens, the schema index.
 *
 * Each component that owns tables declares a {@link MigrationSeries}: a name (`memory`, `users`,
 * `schema_index`) and its numbered steps 1, 2, 3, … Series are independent, so whoever opens a
 * component (the memory store, the user directory, the schema index store) runs only its own series
 * and a database where only some components were ever opened is still consistent. Every applied
 * step is one row of `sqlrecall_migrations(component, version, description, applied_at)`.
 *
 * One call first reads the ledger without a lock (every step recorded, the usual start: done). Else
 * it applies the missing steps of the series in one transaction that first takes the global
 * migration advisory lock: two processes opening the same database at once serialize, and the
 * second finds the steps recorded by the first. A step that fails rolls back the whole call, so a
 * database is never left half-way through a step.
 *
 * Databases written before the runner was shared are adopted in place: their
 * `sqlrecall_migrations(version, applied_at)` rows are all memory-store versions (the only writer
 * then), so the table gains the `component` column filled with `memory` and the key
 * `(component, version)`; the first step of the other series creates its tables with
 * `IF NOT EXISTS`, so tables made by the code before are kept with their rows.
 *
 * Never edit or renumber a released step: append a new one. Versions recorded that this code does
 * not know (a database last opened by a newer sqlrecall) are left as they are.
 */

/** Runs one statement with `$n` parameters and returns its rows (the memory store's `SqlSession` fits). */
export interface MigrationSession {
  query<R extends Record<string, unknown> = Record<string, unknown>>(
    text: string,
    params?: unknown[],
  ): Promise<R[]>;
}

/**
 * A connection that runs single statements and functions in one transaction (the memory store's
 * `SqlClient` fits).
 */
export interface MigrationClient extends MigrationSession {
  /** Runs `fn` in one transaction on one connection: COMMIT when it resolves, ROLLBACK when it throws. */
  transaction<T>(fn: (tx: MigrationSession) => Promise<T>): Promise<T>;
}

/** One numbered step of a series: its statements run in order, in the caller's transaction. */
export interface Migration {
  /** 1 for the first step of a series, then one more for each. */
  version: number;
  /** What the step adds, recorded with it. */
  description: string;
  statements: readonly string[];
}

/** The steps of one component, in order. */
export interface MigrationSeries {
  /** Lower-case name recorded with every step (`memory`, `users`, `schema_index`). */
  component: string;
  /** Versions 1..n, each once, ascending. */
  migrations: readonly Migration[];
}

/** The ledger table of applied steps. */
export const MIGRATIONS_TABLE = 'sqlrecall_migrations';

/**
 * Component of the rows written before the ledger had a `component` column: only the memory store
 * recorded steps then.
 */
export const LEGACY_COMPONENT = 'memory';

/**
 * The global advisory lock (namespace, purpose) held by migrations and by other changes of the
 * stores' layout (the memory store's embedding column); released at the end of the transaction.
 */
const MIGRATION_LOCK = "SELECT pg_advisory_xact_lock(hashtext('sqlrecall'), hashtext('sqlrecall.migrate'))";

/** Takes the global migration lock for the current transaction (waits while another holds it). */
export async function lockMigrations(tx: MigrationSession): Promise<void> {
  await tx.query(MIGRATION_LOCK);
}

/**
 * Checks that a series is well formed: a lower-case name, versions 1..n in order, statements.
 * @throws Error naming the fault (a programming error, never a user's)
 */
export function checkSeries(series: MigrationSeries): void {
  if (!/^[a-z][a-z0-9_]*$/.test(series.component))
    throw new Error(
      `Migration series name ${JSON.stringify(series.component)} is not lower-case letters, digits and _.`,
    );
  series.migrations.forEach((migration, index) => {
    if (migration.version !== index + 1)
      throw new Error(
        `Migration series ${series.component}: step ${index + 1} is numbered ${migration.version}; versions run 1, 2, 3, … without gaps.`,
      );
    if (migration.statements.length === 0)
      throw new Error(`Migration series ${series.component}: step ${migration.version} has no statement.`);
  });
}

/** What the ledger looks like: missing, or which of its later columns it has. */
interface LedgerShape {
  present: boolean;
  component: boolean;
  description: boolean;
}

/** Reads the ledger's shape from the catalog (one statement, no lock, nothing written). */
async function ledgerShape(session: MigrationSession): Promise<LedgerShape> {
  const rows = await session.query<{ present: boolean; component: boolean; description: boolean }>(
    `SELECT l.oid IS NOT NULL AS present,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = l.oid AND a.attname = 'component'
                     AND NOT a.attisdropped) AS component,
            EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = l.oid AND a.attname = 'description'
                     AND NOT a.attisdropped) AS description
       FROM (SELECT to_regclass('${MIGRATIONS_TABLE}') AS oid) l`,
  );
  const row = rows[0];
  return {
    present: row?.present === true,
    component: row?.component === true,
    description: row?.description === true,
  };
}

/** The versions of `component` recorded in a ledger of the current shape. */
async function recorded(session: MigrationSession, component: string): Promise<Set<number>> {
  const rows = await session.query<{ version: number }>(
    `SELECT version FROM ${MIGRATIONS_TABLE} WHERE component = $1`,
    [component],
  );
  return new Set(rows.map((row) => Number(row.version)));
}

/**
 * Creates the ledger, or brings one written before the runner was shared to the current shape
 * (adds `component` filled with {@link LEGACY_COMPONENT}, keys it by `(component, version)`, adds
 * `description`). Call with the migration lock held.
 */
async function ensureLedger(tx: MigrationSession): Promise<void> {
  const shape = await ledgerShape(tx);
  if (!shape.present) {
    await tx.query(`CREATE TABLE ${MIGRATIONS_TABLE} (
      component text NOT NULL,
      version integer NOT NULL,
      description text,
      applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),
      PRIMARY KEY (component, version))`);
    return;
  }
  if (!shape.component) {
    await tx.query(
      `ALTER TABLE ${MIGRATIONS_TABLE} ADD COLUMN component text NOT NULL DEFAULT '${LEGACY_COMPONENT}'`,
    );
    await tx.query(`ALTER TABLE ${MIGRATIONS_TABLE} ALTER COLUMN component DROP DEFAULT`);
    const keys = await tx.query<{ conname: string }>(
      `SELECT conname FROM pg_constraint WHERE conrelid = '${MIGRATIONS_TABLE}'::regclass AND contype = 'p'`,
    );
    for (const key of keys)
      await tx.query(`ALTER TABLE ${MIGRATIONS_TABLE} DROP CONSTRAINT "${key.conname}"`);
    await tx.query(`ALTER TABLE ${MIGRATIONS_TABLE} ADD PRIMARY KEY (component, version)`);
  }
  if (!shape.description) await tx.query(`ALTER TABLE ${MIGRATIONS_TABLE} ADD COLUMN description text`);
}

/**
 * Applies every step of `series` not yet recorded, in version order, in one transaction under the
 * migration lock, and records each. Idempotent: a second call applies nothing.
 * @returns the versions applied by this call (empty when the database was up to date)
 * @throws the driver's error of the failing statement (nothing of the call is kept)
 */
export async function runMigrations(client: MigrationClient, series: MigrationSeries): Promise<number[]> {
  checkSeries(series);
  // Every step recorded (the usual start): nothing to lock. A step's row commits with the step, so
  // a recorded version is an applied one.
  const shape = await ledgerShape(client);
  if (shape.present && shape.component) {
    const done = await recorded(client, series.component);
    if (series.migrations.every((migration) => done.has(migration.version))) return [];
  }
  return client.transaction(async (tx) => {
    await lockMigrations(tx);
    await ensureLedger(tx);
    // Read again under the lock: another process may have applied steps meanwhile.
    const done = await recorded(tx, series.component);
    const applied: number[] = [];
    for (const migration of series.migrations) {
      if (done.has(migration.version)) continue;
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query(
        `INSERT INTO ${MIGRATIONS_TABLE} (component, version, description) VALUES ($1, $2, $3)`,
        [series.component, migration.version, migration.description],
      );
      applied.push(migration.version);
    }
    return applied;
  });
}
