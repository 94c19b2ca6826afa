/**
 * The DuckDB connector on real files: a `.duckdb` file and folders of CSV/TSV/Parquet/JSON files,
 * opened through `openDatabase` as a user's `--db` would be. Values, limits, timeout and
 * cancellation, introspection, the files left byte for byte as they were, and the clear errors
 * of a missing package, a missing path or a folder that cannot be read.
 */
import { mkdirSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createDuckdbConnector } from '../src/databases/duckdb/connector.js';
import { scanDataFiles, tableNameOf } from '../src/databases/duckdb/files.js';
import { isoTimestamp } from '../src/databases/duckdb/values.js';
import { dialectOfUrl, openDatabase, parseDatabaseUrl } from '../src/databases/open.js';
import { DUCKDB_SHOP_SQL, folderFingerprint, writeDuckdbFile } from './support/duckdb-files.js';
import { tempDir } from './support/temp-dir.js';

async function caught(promise: Promise<unknown>): Promise<SqlrecallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SqlrecallError);
  return error as SqlrecallError;
}

describe('duckdb: URLs and plain paths', () => {
  it('selects DuckDB for duckdb:PATH, data files, .duckdb files and folders', () => {
    const dir = tempDir('sqlrecall-duckdb-url-');
    expect(parseDatabaseUrl('duckdb:./shop.duckdb')).toEqual({
      engine: 'duckdb',
      path: resolve('shop.duckdb'),
    });
    expect(parseDatabaseUrl('duckdb:///var/data/x.duckdb')).toEqual({
      engine: 'duckdb',
      path: '/var/data/x.duckdb',
    });
    expect(parseDatabaseUrl('./sales.csv')).toEqual({ engine: 'duckdb', path: resolve('sales.csv') });
    expect(parseDatabaseUrl('exports/')).toEqual({ engine: 'duckdb', path: resolve('exports') });
    expect(parseDatabaseUrl('/srv/x.PARQUET')).toEqual({ engine: 'duckdb', path: '/srv/x.PARQUET' });
    expect(parseDatabaseUrl(dir)).toEqual({ engine: 'duckdb', path: dir });
    expect(dialectOfUrl('./events.jsonl')).toBe('duckdb');
    expect(dialectOfUrl('duckdb:x.duckdb')).toBe('duckdb');
  });

  it('sends a bare SQLite file to sqlite:PATH and refuses duckdb: without a path', () => {
    for (const [text, message] of [
      ['./shop.sqlite', /use sqlite:\.\/shop\.sqlite/],
      ['data.db', /use sqlite:data\.db/],
      ['duckdb:', /names no file or folder/],
    ] as const) {
      let error: unknown;
      try {
        parseDatabaseUrl(text);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(SqlrecallError);
      expect((error as SqlrecallError).code).toBe('config');
      expect((error as SqlrecallError).message).toMatch(message);
    }
  });

  it('says how to install the package when @duckdb/node-api is missing', async () => {
    const missing = Object.assign(new Error("Cannot find package '@duckdb/node-api'"), {
      code: 'ERR_MODULE_NOT_FOUND',
    });
    const error = await caught(
      createDuckdbConnector({ path: '/nowhere.duckdb', loader: () => Promise.reject(missing) }),
    );
    expect(error.code).toBe('config');
    expect(error.message).toBe(
      'DuckDB support needs the @duckdb/node-api package: npm install @duckdb/node-api@1.5.6-r.1',
    );
  });

  it('gives a clear error for a missing file or folder', async () => {
    const dir = tempDir('sqlrecall-duckdb-missing-');
    const error = await caught(openDatabase(join(dir, 'nope.csv')));
    expect(error.code).toBe('config');
    expect(error.message).toBe(`There is no file or folder at ${join(dir, 'nope.csv')}.`);
    const db = await openDatabase(`duckdb:${join(dir, 'nope.duckdb')}`);
    expect((await caught(db.ping())).code).toBe('db_unreachable');
    await db.close();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('refuses a SQLite file given as duckdb: before DuckDB opens it (it would fetch and load its SQLite extension)', async () => {
    const dir = tempDir('sqlrecall-duckdb-sqlite-header-');
    const home = tempDir('sqlrecall-duckdb-home-');
    const file = join(dir, 'shop.duckdb');
    // SQLite's 16-byte header and a page of zeros: what DuckDB recognises as a SQLite database.
    writeFileSync(file, Buffer.concat([Buffer.from('SQLite format 3\u0000', 'latin1'), Buffer.alloc(4080)]));
    const before = process.env.HOME;
    process.env.HOME = home;
    try {
      const db = await openDatabase(`duckdb:${file}`);
      const error = await caught(db.ping());
      await db.close();
      expect(error.code).toBe('config');
      expect(error.message).toContain(`use sqlite:${file}`);
    } finally {
      process.env.HOME = before;
    }
    // Nothing was installed: no extension folder appeared in the home folder.
    expect(readdirSync(home)).toEqual([]);
  });
});

describe('a .duckdb file', () => {
  let dir: string;
  let file: string;
  let db: DatabaseConnector;
  let before: Record<string, string>;

  beforeAll(async () => {
    dir = tempDir('sqlrecall-duckdb-file-');
    file = join(dir, 'shop.duckdb');
    await writeDuckdbFile(file, DUCKDB_SHOP_SQL);
    before = folderFingerprint(dir);
    db = await openDatabase(`duckdb:${file}`);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('reads every value type the way the PostgreSQL dialect does', async () => {
    const { result } = await runCheckedSql({
      db,
      maxRows: 10,
      timeoutMs: 5_000,
      sql: `SELECT 9007199254740993::BIGINT AS big, 170141183460469231731687303715884105727::HUGEINT AS huge,
        99999999.99::DECIMAL(12,2) AS dec, DATE '2024-01-05' AS d, TIMESTAMP '2024-04-01 10:00:00.5' AS ts,
        TIMESTAMPTZ '2024-04-01 10:00:00+02' AS tstz, '{"a": 1, "big": 12345678901234567890}'::JSON AS j,
        '\\xAA\\xBB\\x00'::BLOB AS b, NULL::INTEGER AS n, true AS t, 7::SMALLINT AS small, 1.5::DOUBLE AS f,
        'NaN'::DOUBLE AS nan, [1, NULL, 3] AS l, {'k': 'v', 'x': [DATE '2024-01-01']} AS s,
        MAP {'a': 1} AS m, INTERVAL 1 DAY + INTERVAL 2 HOUR AS iv, TIME '10:11:12' AS tm,
        'AMER'::region AS e, ['\\xAA'::BLOB] AS lb, 'infinity'::DATE AS dinf`,
    });
    const row = Object.fromEntries(result.columns.map((column, i) => [column.name, result.rows[0]![i]]));
    expect(row).toEqual({
      big: '9007199254740993',
      huge: '170141183460469231731687303715884105727',
      dec: '99999999.99',
      d: '2024-01-05',
      ts: '2024-04-01T10:00:00.5',
      tstz: '2024-04-01T08:00:00+00:00',
      j: '{"a": 1, "big": 12345678901234567890}',
      b: '<binary 3 bytes>',
      n: null,
      t: true,
      small: 7,
      f: 1.5,
      nan: 'NaN',
      l: [1, null, 3],
      s: { k: 'v', x: ['2024-01-01'] },
      m: [{ key: 'a', value: 1 }],
      iv: '1 day 02:00:00',
      tm: '10:11:12',
      e: 'AMER',
      lb: ['<binary 1 bytes>'],
      dinf: 'infinity',
    });
    const types = Object.fromEntries(result.columns.map((column) => [column.name, column.type]));
    expect(types).toMatchObject({
      big: 'BIGINT',
      dec: 'DECIMAL(12,2)',
      j: 'JSON',
      tstz: 'TIMESTAMP WITH TIME ZONE',
    });
    expect(JSON.parse(JSON.stringify(result.rows))).toEqual(result.rows);
  });

  it('caps rows while streaming and flags truncation, then keeps working', async () => {
    const capped = await db.execute('SELECT i FROM range(100000) t(i)', { maxRows: 5, timeoutMs: 5_000 });
    expect(capped).toMatchObject({ rowCount: 5, truncated: true, truncatedReason: 'max_rows' });
    expect(capped.rows).toEqual([['0'], ['1'], ['2'], ['3'], ['4']]);
    const all = await db.execute('SELECT id FROM customers ORDER BY id', { maxRows: 3, timeoutMs: 5_000 });
    expect(all).toMatchObject({ rowCount: 3, truncated: false });
  });

  it('stops at the byte budget, and refuses a first row larger than it', async () => {
    const cut = await db.execute("SELECT repeat('x', 100) AS s FROM range(50)", {
      maxRows: 1000,
      timeoutMs: 5_000,
      maxBytes: 1_000,
    });
    expect(cut).toMatchObject({ rowCount: 10, truncated: true, truncatedReason: 'max_bytes' });
    const error = await caught(
      db.execute("SELECT repeat('x', 5000) AS s", { maxRows: 10, timeoutMs: 5_000, maxBytes: 1_000 }),
    );
    expect(error.code).toBe('result_too_large');
  });

  it('interrupts a statement at its time limit, and when the caller aborts', async () => {
    const slow = 'SELECT sum(i) FROM range(1000000000000) t(i)';
    let started = Date.now();
    const timeout = await caught(db.execute(slow, { maxRows: 1, timeoutMs: 300 }));
    expect(timeout.code).toBe('db_timeout');
    expect(timeout.message).toMatch(/300 ms statement timeout/);
    expect(Date.now() - started).toBeLessThan(3_000);
    const controller = new AbortController();
    started = Date.now();
    setTimeout(() => controller.abort(), 200);
    const cancelled = await caught(
      db.execute(slow, { maxRows: 1, timeoutMs: 60_000, signal: controller.signal }),
    );
    expect(cancelled.code).toBe('db_query');
    expect(cancelled.details).toMatchObject({ cancelled: true });
    expect(Date.now() - started).toBeLessThan(3_000);
    expect((await db.execute('SELECT 1 AS one', { maxRows: 1, timeoutMs: 5_000 })).rows).toEqual([[1]]);
  });

  it('maps a DuckDB error to db_query with its message', async () => {
    const error = await caught(db.execute('SELECT nope FROM customers', { maxRows: 1, timeoutMs: 5_000 }));
    expect(error.code).toBe('db_query');
    expect(error.message).toMatch(/Binder Error: .*nope/);
  });

  it('refuses in the engine what is not one SELECT, even past the guard, and the file is unchanged', async () => {
    for (const sql of [
      "UPDATE customers SET name = 'x'",
      'CREATE TABLE t (i INTEGER)',
      `COPY customers TO '${join(dir, 'out.csv')}'`,
      'SELECT 1; SELECT 2',
      `ATTACH '${join(dir, 'other.duckdb')}' AS other`,
    ]) {
      const error = await caught(db.execute(sql, { maxRows: 1, timeoutMs: 5_000 }));
      expect(['guard_refused', 'db_query']).toContain(error.code);
    }
    const insert = await caught(
      db.execute("INSERT INTO customers VALUES (9, 'x', NULL, NULL, NULL)", { maxRows: 1, timeoutMs: 5_000 }),
    );
    expect(insert.message).toMatch(/only SELECT/);
    expect(folderFingerprint(dir)).toEqual(before);
  });

  it('introspects tables, views, columns, keys, comments and enum values', async () => {
    const schema = await db.introspect();
    expect(schema).toMatchObject({ dialect: 'duckdb', database: 'shop', schemas: ['main'] });
    expect(schema.serverVersion).toMatch(/^1\.5\./);
    expect(schema.tables.map((t) => `${t.schema}.${t.name}:${t.kind}`)).toEqual([
      'main.big_orders:view',
      'main.customers:table',
      'main.orders:table',
    ]);
    const customers = schema.tables.find((t) => t.name === 'customers')!;
    expect(customers.comment).toBe('People who bought something');
    expect(customers.estimatedRows).toBe(3);
    expect(customers.primaryKey).toEqual(['id']);
    expect(customers.columns.map((c) => [c.name, c.type, c.nullable])).toEqual([
      ['id', 'INTEGER', false],
      ['name', 'VARCHAR', false],
      ['email', 'VARCHAR', true],
      ['region', 'ENUM', true],
      ['created_on', 'DATE', true],
    ]);
    expect(customers.columns.find((c) => c.name === 'region')!.enumValues).toEqual(['EMEA', 'AMER', 'APAC']);
    expect(customers.columns.find((c) => c.name === 'email')!.comment).toBe('Where receipts go');
    const orders = schema.tables.find((t) => t.name === 'orders')!;
    expect(orders.foreignKeys).toEqual([
      {
        name: expect.any(String),
        columns: ['customer_id'],
        references: { schema: 'main', table: 'customers', columns: ['id'] },
      },
    ]);
    expect(schema.tables.find((t) => t.name === 'big_orders')!.columns.map((c) => c.name)).toEqual([
      'id',
      'customer_id',
      'total',
    ]);
    expect(folderFingerprint(dir)).toEqual(before);
  });
});

describe('a folder of data files', () => {
  let root: string;
  let folder: string;
  let db: DatabaseConnector;

  beforeAll(async () => {
    root = tempDir('sqlrecall-duckdb-folder-');
    folder = join(root, 'exports');
    mkdirSync(join(folder, 'archive'), { recursive: true });
    writeFileSync(join(folder, 'Sales 2024.csv'), 'id,region,amount\n1,EMEA,10.50\n2,AMER,20\n3,EMEA,7.25\n');
    writeFileSync(join(folder, 'regions.tsv'), 'code\tname\nEMEA\tEurope\nAMER\tAmericas\n');
    writeFileSync(join(folder, 'events.jsonl'), '{"id": 1, "kind": "open"}\n{"id": 2, "kind": "close"}\n');
    writeFileSync(join(folder, 'people.json'), '[{"name": "Ada", "age": 36}]');
    writeFileSync(join(folder, 'notes.txt'), 'not a table');
    writeFileSync(join(folder, 'archive', 'old.csv'), 'x\n1\n');
    await writeDuckdbFile(
      join(root, 'make-parquet.duckdb'),
      `COPY (SELECT i AS id, i * 2 AS twice FROM range(5) t(i)) TO '${join(folder, 'numbers.parquet')}' (FORMAT parquet)`,
    );
    db = await openDatabase(`${folder}/`);
  });
  afterAll(async () => {
    await db?.close();
  });

  it('makes one view per file, named after it, and reads each format', async () => {
    const schema = await db.introspect();
    expect(schema.database).toBe('exports');
    expect(schema.tables.map((t) => `${t.name}:${t.kind}`)).toEqual([
      'events:view',
      'numbers:view',
      'people:view',
      'regions:view',
      'sales_2024:view',
    ]);
    const run = async (sql: string) =>
      (await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 })).result.rows;
    expect(
      await run('SELECT region, sum(amount) AS total FROM sales_2024 GROUP BY region ORDER BY region'),
    ).toEqual([
      // The amounts are decimals in the file: exact DECIMAL, shown with their scale.
      ['AMER', '20.00'],
      ['EMEA', '17.75'],
    ]);
    expect(
      await run('SELECT s.id, r.name FROM sales_2024 s JOIN regions r ON r.code = s.region ORDER BY s.id'),
    ).toEqual([
      ['1', 'Europe'],
      ['2', 'Americas'],
      ['3', 'Europe'],
    ]);
    expect(await run('SELECT kind FROM events ORDER BY id')).toEqual([['open'], ['close']]);
    expect(await run('SELECT name, age FROM people')).toEqual([['Ada', '36']]);
    expect(await run('SELECT sum(twice) FROM numbers')).toEqual([['20']]);
  });

  it('reads the files in place: a change shows in the next statement, and nothing is written beside them', async () => {
    const before = folderFingerprint(root);
    writeFileSync(join(folder, 'regions.tsv'), 'code\tname\nEMEA\tEurope\nAMER\tAmericas\nAPAC\tAsia\n');
    const rows = (await db.execute('SELECT count(*) FROM regions', { maxRows: 1, timeoutMs: 5_000 })).rows;
    expect(rows).toEqual([['3']]);
    const after = folderFingerprint(root);
    expect(Object.keys(after)).toEqual(Object.keys(before));
  });

  it('opens a single data file as one table', async () => {
    const single = await openDatabase(join(folder, 'Sales 2024.csv'));
    try {
      const schema = await single.introspect();
      expect(schema.tables.map((t) => t.name)).toEqual(['sales_2024']);
      await expect(
        single.execute('SELECT * FROM regions', { maxRows: 1, timeoutMs: 5_000 }),
      ).rejects.toMatchObject({
        code: 'db_query',
      });
    } finally {
      await single.close();
    }
  });

  it('removes its temporary database on close', async () => {
    const temporaries = () =>
      new Set(readdirSync(tmpdir()).filter((name) => name.startsWith('sqlrecall-duckdb-views-')));
    const before = temporaries();
    const other = await openDatabase(`duckdb:${folder}`);
    await other.ping();
    const made = [...temporaries()].filter((name) => !before.has(name));
    expect(made.length).toBeGreaterThan(0);
    await other.close();
    const after = temporaries();
    for (const name of made) expect(after.has(name)).toBe(false);
  });
});

describe('folder rules', () => {
  it('names tables as identifiers and tells apart two files with the same name', () => {
    expect(tableNameOf('Sales 2024')).toBe('sales_2024');
    expect(tableNameOf('2024-orders')).toBe('t_2024_orders');
    expect(tableNameOf('Café')).toBe('café');
    expect(tableNameOf('***')).toBe('t');
    const dir = tempDir('sqlrecall-duckdb-names-');
    writeFileSync(join(dir, 'sales.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'sales.json'), '[{"a": 1}]');
    writeFileSync(join(dir, 'orders.csv'), 'a\n1\n');
    expect(scanDataFiles(dir).files.map((f) => f.table)).toEqual(['orders', 'sales_csv', 'sales_json']);
    writeFileSync(join(dir, 'a-b.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'a b.csv'), 'a\n1\n');
    expect(() => scanDataFiles(dir)).toThrow(/a b\.csv and a-b\.csv would both be the table a_b/);
  });

  it('refuses a folder without data files, and a link to a file outside the folder', async () => {
    const root = tempDir('sqlrecall-duckdb-rules-');
    const empty = join(root, 'empty');
    mkdirSync(join(empty, 'sub'), { recursive: true });
    writeFileSync(join(empty, 'sub', 'x.csv'), 'a\n1\n');
    const none = await caught(openDatabase(`${empty}/`));
    expect(none.code).toBe('config');
    expect(none.message).toMatch(/There is no CSV, TSV, Parquet or JSON file in .*subfolders are not read/);
    const linked = join(root, 'linked');
    mkdirSync(linked);
    writeFileSync(join(root, 'secret.csv'), 'password\nhunter2\n');
    writeFileSync(join(linked, 'ok.csv'), 'a\n1\n');
    symlinkSync(join(root, 'secret.csv'), join(linked, 'leak.csv'));
    const error = await caught(openDatabase(`${linked}/`));
    expect(error.code).toBe('config');
    expect(error.message).toMatch(/leak\.csv is a link to a file outside/);
    expect(error.message).not.toContain('hunter2');
  });

  it('names a data file DuckDB cannot read, as a configuration error', async () => {
    const dir = tempDir('sqlrecall-duckdb-broken-');
    writeFileSync(join(dir, 'broken.parquet'), 'this is not parquet');
    const db = await openDatabase(dir);
    const error = await caught(db.ping());
    expect(error.code).toBe('config');
    expect(error.message).toMatch(/^Cannot read .*broken\.parquet as PARQUET/);
    await db.close();
  });
});

describe('value forms', () => {
  it('writes timestamps in ISO form and keeps what has no date in front as printed', () => {
    expect(isoTimestamp('2024-04-01 10:00:00.5')).toBe('2024-04-01T10:00:00.5');
    expect(isoTimestamp('2024-04-01 08:00:00+00', true)).toBe('2024-04-01T08:00:00+00:00');
    expect(isoTimestamp('2024-04-01 08:00:00+05:30', true)).toBe('2024-04-01T08:00:00+05:30');
    expect(isoTimestamp('infinity')).toBe('infinity');
    expect(isoTimestamp('0057-03-15 (BC) 00:00:00')).toBe('0057-03-15 (BC) 00:00:00');
  });
});
