/**
 * The seed of the connector conformance suite: the PostgreSQL dialect is turned into a connector
 * with each of its drivers (`createConnector(postgresDialect, driver)`), and every driver runs the
 * same cases — the read-only transaction, the row cap and the byte budget, value decoding, error
 * mapping, introspection and the guard's rolled-back analysis. Drivers: PGlite in this process,
 * a shared data directory this process owns, the shared-socket client (`pg` on the owner's Unix
 * socket) and, with TEST_DATABASE_URL, `pg` on a server. A next engine adds its dialect and drivers
 * to the list.
 */
import { rmSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createConnector } from '../src/databases/connector.js';
import type { Driver } from '../src/databases/engine.js';
import { createPgliteDriver, createSharedPgliteDriver } from '../src/databases/pglite/driver.js';
import {
  acquireSharedPglite,
  type OwnedPglite,
  openPglite,
  runDirOf,
} from '../src/databases/pglite/sharing.js';
import { postgresDialect } from '../src/databases/postgres/dialect.js';
import type { PgSession } from '../src/databases/postgres/execute.js';
import { createPgDriver } from '../src/databases/postgres/pg-driver.js';
import { freshPgliteDataDir, inMemoryPgliteOptions } from './support/pglite-template.js';
import { createTempDatabase, TEST_DATABASE_URL } from './support/server-db.js';

const FIXTURE = `
CREATE TABLE t (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 20) g;
CREATE TABLE child (id integer PRIMARY KEY, t_id integer REFERENCES t (id));
CREATE TABLE typed (big bigint, exact numeric(20,4), flag boolean, atz timestamptz, nums integer[], nothing text);
INSERT INTO typed VALUES (9007199254740993, 1234567890.1234, true, '2024-02-29 13:14:15.5+00', '{1,NULL,3}', NULL);
`;

const RUN = { maxRows: 100, timeoutMs: 10_000 };

/** One driver under test; `dispose` removes what `open` set up (the connector closes the driver). */
interface DriverCase {
  name: string;
  open(): Promise<{ driver: Driver<PgSession>; dispose(): Promise<void> }>;
}

/** A shared data directory with the fixture, owned by this process (as a running `chat` owns it). */
let sharedDir: string | undefined;
let owned: OwnedPglite | undefined;
async function ownedDirectory(): Promise<string> {
  if (sharedDir) return sharedDir;
  const dir = freshPgliteDataDir('sqlrecall-dialect-');
  const db = await openPglite(dir, false);
  await db.exec(FIXTURE);
  await db.close();
  const got = await acquireSharedPglite<never>(dir, {
    connect: () => Promise.reject(new Error('this process owns the directory')),
    unavailable: () => new Error('unavailable'),
  });
  if (got.kind !== 'owner') throw new Error('expected to own the directory');
  owned = got;
  sharedDir = dir;
  return dir;
}

const DRIVERS: DriverCase[] = [
  {
    name: 'PGlite in this process',
    async open() {
      const db = new PGlite(inMemoryPgliteOptions());
      await db.exec(FIXTURE);
      const driver = createPgliteDriver(
        'pglite:memory:',
        async (fn) => fn(db),
        async () => {},
      );
      return { driver, dispose: () => db.close() };
    },
  },
  {
    name: 'PGlite shared directory, owner',
    async open() {
      const driver = createSharedPgliteDriver(await ownedDirectory(), 10_000);
      return { driver, dispose: async () => {} };
    },
  },
  {
    name: 'shared-socket client (pg on the owner socket)',
    async open() {
      const dir = await ownedDirectory();
      const driver = createPgDriver(
        {
          url: 'postgres://postgres@localhost/postgres',
          socketDir: runDirOf(dir),
          displayName: `pglite:${dir}`,
          cancel: false,
        },
        undefined,
      );
      return { driver, dispose: async () => {} };
    },
  },
  ...(TEST_DATABASE_URL
    ? [
        {
          name: 'pg on a server',
          async open() {
            const temp = await createTempDatabase('sqlrecall_dialect');
            const admin = new pg.Client({ connectionString: temp.url });
            await admin.connect();
            await admin.query(FIXTURE);
            await admin.end();
            const driver = createPgDriver({ url: temp.url }, postgresDialect.cancellation?.sql);
            return {
              driver,
              dispose: () => temp.drop(),
            };
          },
        },
      ]
    : []),
];

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SqlrecallError);
  return error as SqlrecallError;
}

afterAll(async () => {
  await owned?.release();
  if (sharedDir) rmSync(sharedDir, { recursive: true, force: true });
});

describe.each(DRIVERS)('the PostgreSQL dialect over $name', (driverCase) => {
  let connector: DatabaseConnector;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    const opened = await driverCase.open();
    connector = createConnector(postgresDialect, opened.driver);
    dispose = opened.dispose;
  }, 120_000);
  afterAll(async () => {
    await connector?.close();
    await dispose?.();
  });

  it('answers ping and names its dialect', async () => {
    await expect(connector.ping()).resolves.toBeUndefined();
    expect(connector.dialect).toBe('postgres');
  });

  it('caps rows through the cursor and says why it stopped', async () => {
    const result = await connector.execute('SELECT id FROM t ORDER BY id', { ...RUN, maxRows: 3 });
    expect(result.rows).toEqual([[1], [2], [3]]);
    expect(result).toMatchObject({ rowCount: 3, truncated: true, truncatedReason: 'max_rows' });
    expect(result.columns).toEqual([{ name: 'id', type: 'int4' }]);
  });

  it('stops at the byte budget, and refuses a first row larger than it', async () => {
    // 'row 1'..'row 9' are 5 bytes each: 12 bytes hold two rows, not three.
    const result = await connector.execute('SELECT name FROM t ORDER BY id', { ...RUN, maxBytes: 12 });
    expect(result.rows).toEqual([['row 1'], ['row 2']]);
    expect(result.truncatedReason).toBe('max_bytes');
    const error = await failure(
      connector.execute("SELECT repeat('x', 5000) AS wide", { ...RUN, maxBytes: 100 }),
    );
    expect(error.code).toBe('result_too_large');
  });

  it('decodes values the same way whatever the driver', async () => {
    const result = await connector.execute('SELECT * FROM typed', RUN);
    expect(result.rows).toEqual([
      ['9007199254740993', '1234567890.1234', true, '2024-02-29T13:14:15.5+00:00', [1, null, 3], null],
    ]);
    expect(result.columns.map((column) => column.type)).toEqual([
      'int8',
      'numeric',
      'bool',
      'timestamptz',
      'int4[]',
      'text',
    ]);
  });

  it('refuses writes that reach it (READ ONLY transaction) and changes nothing', async () => {
    // A write that bypassed the guard runs directly in the read-only transaction.
    const error = await failure(connector.execute('DELETE FROM t', RUN));
    expect(error.code).toBe('db_query');
    expect(error.details).toMatchObject({ sqlState: '25006' });
    // Hidden in a CTE it goes behind a cursor, which PostgreSQL refuses for a data-modifying WITH.
    const hidden = await failure(
      connector.execute('WITH gone AS (DELETE FROM t RETURNING id) SELECT count(*) FROM gone', RUN),
    );
    expect(hidden.code).toBe('db_query');
    const left = await connector.execute('SELECT count(*)::int AS n FROM t', RUN);
    expect(left.rows).toEqual([[20]]);
  });

  it('maps a statement error to db_query with its SQLSTATE, and the next statement runs', async () => {
    const error = await failure(connector.execute('SELECT no_such_column FROM t', RUN));
    expect(error.code).toBe('db_query');
    expect(error.details).toMatchObject({ sqlState: '42703' });
    await expect(connector.execute('SELECT 1 AS one', RUN)).resolves.toMatchObject({ rows: [[1]] });
  });

  it('refuses an already aborted signal without running anything', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await failure(connector.execute('SELECT 1', { ...RUN, signal: controller.signal }));
    expect(error.details).toMatchObject({ cancelled: true });
  });

  it('reads the catalog: tables, primary and foreign keys', async () => {
    const schema = await connector.introspect({ schemas: ['public'] });
    const names = schema.tables.map((table) => table.name).sort();
    expect(names).toEqual(['child', 't', 'typed']);
    const child = schema.tables.find((table) => table.name === 'child')!;
    expect(child.primaryKey).toEqual(['id']);
    expect(child.foreignKeys).toEqual([
      expect.objectContaining({
        columns: ['t_id'],
        references: { schema: 'public', table: 't', columns: ['id'] },
      }),
    ]);
  });

  it("runs the guard's analysis in a rolled-back transaction, values as the server's text", async () => {
    const rows = await connector.probe!(
      [
        'CREATE TEMP VIEW sqlrecall_probe_view AS SELECT id, id > 1 AS big FROM t WHERE id <= 2',
        'SELECT id::text AS id, big FROM sqlrecall_probe_view ORDER BY id',
      ],
      { timeoutMs: 10_000 },
    );
    expect(rows).toEqual([
      { id: '1', big: 'f' },
      { id: '2', big: 't' },
    ]);
    // Rolled back: the view is gone.
    const error = await failure(connector.execute('SELECT * FROM sqlrecall_probe_view', RUN));
    expect(error.details).toMatchObject({ sqlState: '42P01' });
  });
});
