import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { openDatabase } from '../src/databases/open.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

const FIXTURE = `
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE TABLE t (id integer PRIMARY KEY, name text);
INSERT INTO t SELECT g, 'row ' || g FROM generate_series(1, 10) g;
CREATE TABLE typed (
  big bigint, exact numeric(30,10), small smallint, real4 real, dbl double precision, flag boolean,
  day date, at timestamp(6), atz timestamptz, clock time, span interval, doc jsonb, raw bytea,
  nums integer[], words text[], moods mood[], feeling mood, id uuid
);
INSERT INTO typed VALUES (
  9007199254740993, 12345678901234567890.0123456789, -32768, 1.5, 0.1, true,
  '2024-02-29', '2024-02-29 13:14:15.123456', '2024-02-29 13:14:15.5+00', '23:59:59', '1 day 02:03:04',
  '{"a": [1, "x", null], "b": {"c": true}}', decode(repeat('ab', 1234), 'hex'),
  '{1,NULL,3}', ARRAY['a,b', 'say "hi"', NULL, 'NULL'], '{sad,happy}', 'ok', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'
);
`;

const RUN = { maxRows: 100, timeoutMs: 5_000 };

async function expectError(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

describe.each(ENGINES)('execute on %s', (engine) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'sqlrecall_exec');
    await db.exec(FIXTURE);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it('answers ping', async () => {
    await expect(db.connector.ping()).resolves.toBeUndefined();
  });

  it('caps rows through the cursor and flags truncation', async () => {
    const capped = await db.connector.execute('SELECT id FROM t ORDER BY id', {
      maxRows: 3,
      timeoutMs: 5_000,
    });
    expect(capped.rows).toEqual([[1], [2], [3]]);
    expect(capped.rowCount).toBe(3);
    expect(capped.truncated).toBe(true);
    expect(capped.columns).toEqual([{ name: 'id', type: 'int4' }]);
    const exact = await db.connector.execute('SELECT id FROM t ORDER BY id', {
      maxRows: 10,
      timeoutMs: 5_000,
    });
    expect(exact.rowCount).toBe(10);
    expect(exact.truncated).toBe(false);
    const huge = await db.connector.execute('SELECT g FROM generate_series(1, 1000000) g', {
      maxRows: 2,
      timeoutMs: 5_000,
    });
    expect(huge.rows).toEqual([[1], [2]]);
    expect(huge.truncated).toBe(true);
  });

  it('returns JSON-safe values of every common type', async () => {
    const result = await db.connector.execute('SELECT * FROM typed', RUN);
    const row = Object.fromEntries(result.columns.map((column, i) => [column.name, result.rows[0]?.[i]]));
    expect(row).toEqual({
      big: '9007199254740993',
      exact: '12345678901234567890.0123456789',
      small: -32768,
      real4: 1.5,
      dbl: 0.1,
      flag: true,
      day: '2024-02-29',
      at: '2024-02-29T13:14:15.123456',
      atz: expect.stringMatching(/^2024-02-29T\d\d:\d\d:15\.5[+-]\d\d:\d\d$/),
      clock: '23:59:59',
      span: '1 day 02:03:04',
      // issue 14: jsonb is always its JSON text (same shape in every row)
      doc: '{"a": [1, "x", null], "b": {"c": true}}',
      raw: '<binary 1234 bytes>',
      nums: [1, null, 3],
      words: ['a,b', 'say "hi"', null, 'NULL'],
      moods: ['sad', 'happy'],
      feeling: 'ok',
      id: 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11',
    });
    expect(new Date(String(row.atz)).toISOString()).toBe('2024-02-29T13:14:15.500Z');
    expect(result.columns.map((c) => c.type)).toEqual([
      'int8',
      'numeric',
      'int2',
      'float4',
      'float8',
      'bool',
      'date',
      'timestamp',
      'timestamptz',
      'time',
      'interval',
      'jsonb',
      'bytea',
      'int4[]',
      'text[]',
      'mood[]',
      'mood',
      'uuid',
    ]);
    // The whole result survives a JSON round trip unchanged.
    expect(JSON.parse(JSON.stringify(result.rows))).toEqual(result.rows);
  });

  it('keeps int8 arithmetic exact beyond 2^53', async () => {
    const result = await db.connector.execute('SELECT big + 1 AS next, big * 1000 AS scaled FROM typed', RUN);
    expect(result.rows).toEqual([['9007199254740994', '9007199254740993000']]);
  });

  it('runs EXPLAIN directly inside the read-only transaction', async () => {
    const result = await db.connector.execute('/* plan */ explain SELECT * FROM t', RUN);
    expect(result.columns).toEqual([{ name: 'QUERY PLAN', type: 'text' }]);
    expect(String(result.rows[0]?.[0])).toMatch(/Seq Scan on t/);
  });

  it('refuses a write that bypassed the guard (25006) and leaves the table unchanged', async () => {
    for (const write of ['DELETE FROM t', 'UPDATE t SET name = NULL', 'CREATE TABLE x (a int)']) {
      const error = await expectError(db.connector.execute(write, RUN));
      expect(error.code).toBe('db_query');
      expect(error.details.sqlState).toBe('25006');
      expect(error.message).toMatch(/read-only transaction \(SQLSTATE 25006\)$/);
    }
    const error = await expectError(
      db.connector.execute('WITH gone AS (DELETE FROM t RETURNING id) SELECT count(*) FROM gone', RUN),
    );
    expect(error.code).toBe('db_query');
    const count = await db.connector.execute('SELECT count(*) AS n, count(name) AS named FROM t', RUN);
    expect(count.rows).toEqual([['10', '10']]);
  });

  it('never runs two statements in one round trip', async () => {
    const error = await expectError(db.connector.execute('SELECT 1; DELETE FROM t', RUN));
    expect(error.code).toBe('db_query');
    expect(error.details.sqlState).toBe('42601');
    const count = await db.connector.execute('SELECT count(*) FROM t', RUN);
    expect(count.rows).toEqual([['10']]);
  });

  it('maps database errors with their SQLSTATE and stays usable', async () => {
    const error = await expectError(db.connector.execute('SELECT no_such_column FROM t', RUN));
    expect(error.code).toBe('db_query');
    expect(error.details.sqlState).toBe('42703');
    expect(error.message).toBe('column "no_such_column" does not exist (SQLSTATE 42703)');
    const division = await expectError(db.connector.execute('SELECT 1 / 0', RUN));
    expect(division.details.sqlState).toBe('22012');
    const again = await db.connector.execute('SELECT 42 AS answer', RUN);
    expect(again.rows).toEqual([[42]]);
  });

  it('refuses an already aborted signal without running anything', async () => {
    const controller = new AbortController();
    controller.abort();
    const error = await expectError(db.connector.execute('SELECT 1', { ...RUN, signal: controller.signal }));
    expect(error.details).toMatchObject({ cancelled: true });
  });

  it('introspects the same connection afterwards', async () => {
    const schema = await db.connector.introspect();
    expect(schema.tables.map((t) => t.name)).toEqual(['t', 'typed']);
  });
});

describe.skipIf(!TEST_DATABASE_URL)('server-only behaviour', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase('server', 'sqlrecall_timeout');
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it('cancels a statement at the timeout and stays usable', async () => {
    const started = Date.now();
    const error = await expectError(
      db.connector.execute('SELECT pg_sleep(5)', { maxRows: 10, timeoutMs: 300 }),
    );
    const elapsed = Date.now() - started;
    expect(error.code).toBe('db_timeout');
    expect(error.message).toBe('The query ran longer than the 300 ms statement timeout and was cancelled.');
    expect(elapsed).toBeLessThan(1_500);
    for (let i = 0; i < 4; i += 1) {
      // more runs than the pool has connections: every connection went back clean
      const result = await db.connector.execute('SELECT current_setting($$statement_timeout$$) AS st', RUN);
      expect(result.rows).toEqual([['5s']]);
    }
    const outside = await db.connector.execute('SELECT 1', RUN);
    expect(outside.rows).toEqual([[1]]);
  });

  it('cancels a running statement when the signal aborts', async () => {
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const error = await expectError(
      db.connector.execute('SELECT pg_sleep(5)', {
        maxRows: 10,
        timeoutMs: 10_000,
        signal: controller.signal,
      }),
    );
    expect(error.details).toMatchObject({ cancelled: true });
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await db.connector.execute('SELECT 2', RUN)).rows).toEqual([[2]]);
  });

  it('reports the timeout with its own value', async () => {
    const error = await expectError(
      db.connector.execute('SELECT pg_sleep(3)', { maxRows: 1, timeoutMs: 1_500 }),
    );
    expect(error.message).toBe('The query ran longer than the 1.5 s statement timeout and was cancelled.');
  });
});

describe('connection failures', () => {
  it('masks the password when the server is unreachable', async () => {
    const connector = createPostgresConnector({ url: 'postgres://alice:s3cr3t-pw@127.0.0.1:1/shop' });
    try {
      const error = await expectError(connector.execute('SELECT 1', RUN));
      expect(error.code).toBe('db_unreachable');
      expect(error.message).toBe(
        'Cannot connect to postgres://alice:***@127.0.0.1:1/shop: connection refused. Is PostgreSQL running?',
      );
      expect(JSON.stringify({ message: error.message, details: error.details })).not.toContain('s3cr3t');
      const ping = await expectError(connector.ping());
      expect(ping.code).toBe('db_unreachable');
      const introspect = await expectError(connector.introspect());
      expect(introspect.code).toBe('db_unreachable');
    } finally {
      await connector.close();
    }
  });

  it.skipIf(!TEST_DATABASE_URL)('reports a missing database and a bad role as unreachable', async () => {
    const base = new URL(TEST_DATABASE_URL ?? 'postgres://localhost');
    base.pathname = '/sqlrecall_no_such_database';
    base.password = 'hunter2';
    const missing = await openDatabase(base.toString());
    try {
      const error = await expectError(missing.ping());
      expect(error.code).toBe('db_unreachable');
      expect(error.message).toMatch(/database "sqlrecall_no_such_database" does not exist\.$/);
      expect(error.message).not.toContain('hunter2');
    } finally {
      await missing.close();
    }
    base.username = 'sqlrecall_no_such_role';
    const badRole = await openDatabase(base.toString());
    try {
      const error = await expectError(badRole.ping());
      expect(error.code).toBe('db_unreachable');
      expect(error.message).toContain('sqlrecall_no_such_role:***@');
      expect(error.message).not.toContain('hunter2');
    } finally {
      await badRole.close();
    }
  });

  it('refuses unsupported URL schemes with a masked config error', async () => {
    const error = await expectError(openDatabase('oracle://root:topsecret@db/shop'));
    expect(error.code).toBe('config');
    expect(error.message).toBe(
      'DATABASE_URL must start with postgres://, postgresql://, pglite:, mysql://, mariadb://, sqlite: or duckdb:, or name a data file or folder (got "oracle://root:***@db/shop").',
    );
  });

  it('opens an in-memory PGlite from pglite:memory:', async () => {
    const connector = await openDatabase('pglite:memory:');
    try {
      expect(connector.displayName).toBe('pglite:memory:');
      expect((await connector.execute('SELECT version() AS v', RUN)).rows[0]?.[0]).toMatch(/^PostgreSQL 18/);
    } finally {
      await connector.close();
    }
  });
});
