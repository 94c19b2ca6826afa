/**
 * The SQLite connector on real files: `sqlite:PATH` forms and their errors, the catalog, the values
 * model, the row cap and byte budget, the statement time limit and cancellation (the child process
 * holding the connection is killed and the next call opens the file again), and the "did you mean"
 * check reading SQLite names without regard to case.
 */
import { execFileSync } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { dialectOfUrl, openDatabase, parseDatabaseUrl } from '../src/databases/open.js';
import { sqliteDriverMissing } from '../src/databases/sqlite/errors.js';
import { sqlitePathOf } from '../src/databases/sqlite/url.js';
import { checkDatabaseRole } from '../src/runtime/doctor.js';
import { Runtime } from '../src/runtime/runtime.js';
import { DIALECTS } from '../src/sql/dialects.js';
import { checkIdentifiers } from '../src/sql/identifiers.js';
import { startSqlrecall } from './support/cli.js';
import {
  betterSqliteInstalled,
  fileSha256,
  makeSqliteFile,
  sqliteEngine,
} from './support/conformance/sqlite.js';
import { tempDir } from './support/temp-dir.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('sqlite: URLs', () => {
  it('selects the SQLite engine and dialect', () => {
    expect(parseDatabaseUrl('sqlite:./shop.db')).toEqual({ engine: 'sqlite', url: 'sqlite:./shop.db' });
    expect(dialectOfUrl('sqlite:/data/shop.db')).toBe('sqlite');
  });

  it('reads relative, absolute and home paths', () => {
    expect(sqlitePathOf('sqlite:shop.db')).toBe(resolve('shop.db'));
    expect(sqlitePathOf('sqlite:./data/shop.db')).toBe(resolve('data/shop.db'));
    expect(sqlitePathOf('sqlite:/data/shop.db')).toBe('/data/shop.db');
    expect(sqlitePathOf('sqlite:///data/shop.db')).toBe('/data/shop.db');
    expect(sqlitePathOf('sqlite:~/shop.db')).toBe(join(homedir(), 'shop.db'));
  });

  it('refuses a URL without a file, and never creates a missing one', async () => {
    expect(() => sqlitePathOf('sqlite:')).toThrow(/must name a database file/);
    expect(() => sqlitePathOf('sqlite::memory:')).toThrow(/must name a database file/);
    const dir = tempDir('sqlrecall-sqlite-missing-');
    const missing = join(dir, 'nope.db');
    await expect(openDatabase(`sqlite:${missing}`)).rejects.toMatchObject({
      code: 'config',
      message: `There is no SQLite database at ${missing}.`,
    });
    await expect(openDatabase(`sqlite:${dir}`)).rejects.toMatchObject({ code: 'config' });
  });

  it('names the package to install when the optional driver is missing', () => {
    const error = sqliteDriverMissing();
    expect(error.code).toBe('config');
    expect(error.message).toBe(
      'SQLite support needs the better-sqlite3 package: npm install better-sqlite3@12.11.1',
    );
  });

  it('has a dialect profile that names SQLite and its habits', () => {
    const profile = DIALECTS.sqlite;
    expect(profile.promptMarker).toMatch(/SQLite/);
    expect(profile.promptHabits.join(' ')).toMatch(/double quotes.*ILIKE.*strftime.*\|\|/s);
    expect(profile.parseRepairHint).toMatch(/ILIKE.*date_trunc.*INTERVAL/s);
  });
});

describe.skipIf(!betterSqliteInstalled())('the SQLite connector on a real file', () => {
  let db: DatabaseConnector;
  let path: string;
  let before: string;
  const setUp = sqliteEngine.setUp();

  beforeAll(async () => {
    const fixture = await setUp;
    db = fixture.connector;
    path = fixture.url.slice('sqlite:'.length);
    before = fileSha256(path);
  });
  afterAll(async () => {
    expect(fileSha256(path)).toBe(before);
    await (await setUp).dispose();
  });

  it('reads the catalog: tables, the view, columns, keys', async () => {
    await db.ping();
    const schema = await db.introspect();
    expect(schema.dialect).toBe('sqlite');
    expect(schema.schemas).toEqual(['main']);
    expect(schema.tables.map((t) => [t.name, t.kind])).toEqual([
      ['big_orders', 'view'],
      ['customers', 'table'],
      ['orders', 'table'],
    ]);
    const orders = schema.tables.find((t) => t.name === 'orders')!;
    expect(orders.columns.map((c) => [c.name, c.type])).toEqual([
      ['id', 'integer'],
      ['customer_id', 'integer'],
      ['total', 'decimal(12,2)'],
      ['placed_at', 'timestamp'],
    ]);
    expect(orders.primaryKey).toEqual(['id']);
    expect(orders.foreignKeys).toEqual([
      expect.objectContaining({
        columns: ['customer_id'],
        references: { schema: 'main', table: 'customers', columns: ['id'] },
      }),
    ]);
    const customers = schema.tables.find((t) => t.name === 'customers')!;
    expect(customers.columns.find((c) => c.name === 'name')?.nullable).toBe(false);
    expect(customers.columns.find((c) => c.name === 'email')?.nullable).toBe(true);
  });

  it('decodes each kind of value by the values model', async () => {
    const { values } = (await setUp).sql;
    const result = await db.execute(values.sql, { maxRows: 10, timeoutMs: 5_000 });
    const row = Object.fromEntries(result.columns.map((c, i) => [c.name, result.rows[0]![i]]));
    expect(row).toEqual(values.expected);
    expect(JSON.parse(JSON.stringify(result.rows))).toEqual(result.rows);
    const stored = await db.execute('SELECT total FROM orders WHERE id = 11', {
      maxRows: 1,
      timeoutMs: 5_000,
    });
    expect(stored.columns).toEqual([{ name: 'total', type: 'decimal(12,2)' }]);
    expect(stored.rows).toEqual([[99999999.99]]);
  });

  it('stops at the row cap and the byte budget', async () => {
    const { rows } = (await setUp).sql;
    const capped = await db.execute(rows(50), { maxRows: 10, timeoutMs: 5_000 });
    expect(capped).toMatchObject({ rowCount: 10, truncated: true, truncatedReason: 'max_rows' });
    const all = await db.execute(rows(10), { maxRows: 10, timeoutMs: 5_000 });
    expect(all).toMatchObject({ rowCount: 10, truncated: false });
    // One integer column (the fixture's rows carry a pad too wide for this exact count).
    const numbers =
      'WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 50) SELECT i FROM s';
    const budget = await db.execute(numbers, { maxRows: 100, maxBytes: 20, timeoutMs: 5_000 });
    expect(budget).toMatchObject({ truncated: true, truncatedReason: 'max_bytes' });
    // "1"…"9" count 1 byte each and "10"…"14" two: 19 bytes; "15" would make 21.
    expect(budget.rowCount).toBe(14);
    await expect(
      db.execute("SELECT printf('%.100c', 'x') AS wide", { maxRows: 10, maxBytes: 50, timeoutMs: 5_000 }),
    ).rejects.toMatchObject({ code: 'result_too_large' });
  });

  it('stops a statement at its time limit without blocking the event loop, then answers again', async () => {
    const { slow } = (await setUp).sql;
    let ticks = 0;
    const ticker = setInterval(() => {
      ticks += 1;
    }, 20);
    const started = performance.now();
    const error = await db.execute(slow, { maxRows: 1, timeoutMs: 400 }).catch((e: unknown) => e);
    const stoppedAfter = performance.now() - started;
    clearInterval(ticker);
    expect(error).toBeInstanceOf(SqlrecallError);
    expect((error as SqlrecallError).code).toBe('db_timeout');
    expect(stoppedAfter).toBeLessThan(2_000);
    expect(ticks).toBeGreaterThan(5);
    const reopened = performance.now();
    const again = await db.execute('SELECT count(*) AS n FROM customers', { maxRows: 1, timeoutMs: 30_000 });
    console.log(
      `sqlite: slow statement stopped after ${Math.round(stoppedAfter)} ms (limit 400 ms); the file reopened and answered in ${Math.round(performance.now() - reopened)} ms`,
    );
    expect(again.rows).toEqual([[3]]);
  }, 60_000);

  it('cancels a running statement when its signal aborts', async () => {
    const { slow } = (await setUp).sql;
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 300);
    const started = performance.now();
    await expect(
      db.execute(slow, { maxRows: 1, timeoutMs: 30_000, signal: controller.signal }),
    ).rejects.toMatchObject({ code: 'db_query', details: { cancelled: true } });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect((await db.execute('SELECT 1 AS one', { maxRows: 1, timeoutMs: 30_000 })).rows).toEqual([[1]]);
  }, 60_000);

  it('maps an unknown name to the standard SQLSTATE, and reads names without regard to case', async () => {
    await expect(
      db.execute('SELECT nope FROM customers', { maxRows: 1, timeoutMs: 5_000 }),
    ).rejects.toMatchObject({
      code: 'db_query',
      details: { sqlState: '42703' },
    });
    await expect(db.execute('SELECT * FROM nope', { maxRows: 1, timeoutMs: 5_000 })).rejects.toMatchObject({
      details: { sqlState: '42P01' },
    });
    const schema = await db.introspect();
    expect((await checkIdentifiers('SELECT "Name", rowid FROM Customers', schema)).ok).toBe(true);
    const typo = await checkIdentifiers('SELECT nmae FROM customers', schema);
    expect(typo.ok).toBe(false);
    expect(typo.unknown[0]?.candidates.join(' ')).toMatch(/name/);
  });
});

describe.skipIf(!betterSqliteInstalled())('a file that is not a SQLite database', () => {
  it('is reported as unreadable, not as a query error', async () => {
    const path = join(tempDir('sqlrecall-sqlite-notadb-'), 'notes.db');
    writeFileSync(path, 'this is not a database, just some text long enough to have a header. '.repeat(10));
    const db = await openDatabase(`sqlite:${path}`);
    try {
      await expect(db.execute('SELECT 1', { maxRows: 1, timeoutMs: 5_000 })).rejects.toMatchObject({
        code: 'db_unreachable',
      });
    } finally {
      await db.close();
    }
  });

  it('a second file opened read-only is never written by the connector', async () => {
    const path = await makeSqliteFile('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1);');
    const sha = fileSha256(path);
    const db = await openDatabase(`sqlite:${path}`);
    try {
      await db.introspect();
      expect((await db.execute('SELECT x FROM t', { maxRows: 1, timeoutMs: 5_000 })).rows).toEqual([[1]]);
    } finally {
      await db.close();
    }
    expect(fileSha256(path)).toBe(sha);
  });
});

describe.skipIf(!betterSqliteInstalled())('a sqlrecall process killed during a SQLite statement', () => {
  /** Process ids of SQLite children holding `path` (from `ps`, so no library is needed). */
  const childrenOn = (path: string): number[] =>
    execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes('sqlite-worker') && line.includes(path))
      .map((line) => Number(line.trim().split(/\s+/)[0]));

  it('leaves no child computing: the child ends when its parent is gone, even mid-statement', async () => {
    const fixture = await sqliteEngine.setUp();
    const path = fixture.url.slice('sqlite:'.length);
    const running = startSqlrecall(
      [
        'sql',
        '--db',
        fixture.url,
        '--timeout-ms',
        '120000',
        'WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c',
      ],
      {},
    );
    try {
      const deadline = Date.now() + 30_000;
      while (childrenOn(path).length === 0 && Date.now() < deadline) await sleep(200);
      expect(childrenOn(path).length).toBe(1);
      await sleep(500); // the endless statement is running now
      running.child.kill('SIGKILL');
      await running.exited;
      const gone = Date.now() + 5_000;
      while (childrenOn(path).length > 0 && Date.now() < gone) await sleep(200);
      expect(childrenOn(path)).toEqual([]);
    } finally {
      for (const pid of childrenOn(path)) process.kill(pid, 'SIGKILL');
      await fixture.dispose();
    }
  }, 60_000);
});

describe.skipIf(!betterSqliteInstalled())('doctor on a SQLite file', () => {
  it('checks that the file is read-only for this user instead of running a role query', async () => {
    const fixture = await sqliteEngine.setUp();
    const path = fixture.url.slice('sqlite:'.length);
    const runtime = new Runtime(
      loadConfig({ env: {}, cwd: '/nonexistent', flags: { databaseUrl: fixture.url } }),
    );
    try {
      const check = await checkDatabaseRole(runtime);
      expect(check?.name).toBe('database file');
      // The test may run as root, who can write any file: the verdict follows what access() says.
      let writable = true;
      try {
        accessSync(path, constants.W_OK);
      } catch {
        writable = false;
      }
      expect(check?.level).toBe(writable ? 'warn' : 'ok');
      expect(check?.message).toContain(path);
      if (writable) expect(check?.fix).toContain(`chmod a-w ${path}`);
    } finally {
      await runtime.close();
      await fixture.dispose();
    }
  });
});
