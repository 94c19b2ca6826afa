/**
 * One database file, several processes at once. SQLite: the connector's reader (its own child
 * process) reads a WAL database while a writer in this process holds an open write transaction,
 * and sees the committed rows only; a writer holding an exclusive lock in rollback-journal mode
 * makes a read wait the 3 s busy timeout and then fail with `db_busy`, not hang or crash; a WAL
 * file whose shared-memory file cannot be opened gets a clear error. DuckDB: a file another
 * process has open for writing is `db_busy` naming that process's pid.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { duckdbLockHolder, duckdbOpenError } from '../src/databases/duckdb/errors.js';
import { openDatabase } from '../src/databases/open.js';
import { sqliteDriverInstalled } from '../src/databases/sqlite/connector.js';
import { sqliteError } from '../src/databases/sqlite/errors.js';
import { SQLITE_BUSY_TIMEOUT_MS } from '../src/databases/sqlite/worker-protocol.js';
import { tempDir } from './support/temp-dir.js';

const Database = sqliteDriverInstalled()
  ? (createRequire(import.meta.url)('better-sqlite3') as typeof BetterSqlite3)
  : undefined;

async function caught(promise: Promise<unknown>): Promise<SqlrecallError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(SqlrecallError);
  return error as SqlrecallError;
}

const open: { close(): unknown }[] = [];
afterEach(async () => {
  for (const item of open.splice(0).reverse()) await item.close();
});

async function connect(url: string): Promise<DatabaseConnector> {
  const db = await openDatabase(url);
  open.push(db);
  return db;
}

const run = (db: DatabaseConnector, sql: string) => db.execute(sql, { maxRows: 100, timeoutMs: 20_000 });

describe.skipIf(!Database)('SQLite: a reader beside a writer', () => {
  it('reads a WAL database while another connection holds an uncommitted write', async () => {
    const path = join(tempDir('sqlrecall-shared-wal-'), 'shop.db');
    const writer = new Database!(path);
    open.push(writer);
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1), (2)');
    writer.exec('BEGIN IMMEDIATE; INSERT INTO t VALUES (99)');
    const db = await connect(`sqlite:${path}`);
    const started = Date.now();
    const result = await run(db, 'SELECT count(*) AS n, max(x) AS top FROM t');
    expect(result.rows).toEqual([[2, 2]]);
    expect(Date.now() - started).toBeLessThan(SQLITE_BUSY_TIMEOUT_MS);
    writer.exec('COMMIT');
    expect((await run(db, 'SELECT max(x) AS top FROM t')).rows).toEqual([[99]]);
  });

  it('waits the busy timeout for an exclusive writer, then fails with db_busy, and reads once it is gone', async () => {
    const path = join(tempDir('sqlrecall-shared-busy-'), 'shop.db');
    const writer = new Database!(path);
    open.push(writer);
    writer.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)');
    const db = await connect(`sqlite:${path}`);
    await db.ping();
    writer.exec('BEGIN EXCLUSIVE; INSERT INTO t VALUES (2)');
    const started = Date.now();
    const error = await caught(run(db, 'SELECT count(*) AS n FROM t'));
    const waited = Date.now() - started;
    expect(error.code).toBe('db_busy');
    expect(error.message).toMatch(/locked by another connection; it stayed locked for the 3 s/);
    expect(error.details).toMatchObject({ retryable: true });
    expect(waited).toBeGreaterThanOrEqual(SQLITE_BUSY_TIMEOUT_MS - 200);
    expect(waited).toBeLessThan(SQLITE_BUSY_TIMEOUT_MS + 5_000);
    writer.exec('COMMIT');
    expect((await run(db, 'SELECT count(*) AS n FROM t')).rows).toEqual([[2]]);
  }, 30_000);

  it('reads a WAL database whose -shm file cannot be created when no writer left a -wal file', async () => {
    const dir = tempDir('sqlrecall-shared-noshm-');
    const path = join(dir, 'shop.db');
    const writer = new Database!(path);
    writer.pragma('journal_mode = WAL');
    writer.exec('CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (7)');
    writer.close();
    mkdirSync(`${path}-shm`); // a folder where the -shm file would go: it cannot be created
    try {
      const db = await connect(`sqlite:${path}`);
      expect((await run(db, 'SELECT x FROM t')).rows).toEqual([[7]]);
    } finally {
      rmdirSync(`${path}-shm`);
    }
  });
});

describe('SQLite: the errors of a shared file', () => {
  it('names the -shm file of a WAL database it cannot open, with what to do', () => {
    const error = sqliteError(
      { message: 'unable to open database file', code: 'SQLITE_CANTOPEN', wal: true },
      'sqlite:/srv/data/shop.db',
    );
    expect(error.code).toBe('db_unreachable');
    expect(error.message).toMatch(/in WAL mode.*\/srv\/data\/shop\.db-shm.*could not be opened or created/);
    expect(error.details).toMatchObject({ retryable: false });
    expect(String((error.details as { hint?: string }).hint)).toMatch(/journal_mode = DELETE/);
    expect(error.message).not.toMatch(/\n\s+at /);
  });

  it('reports a busy code with a suffix (SQLITE_BUSY_SNAPSHOT) as db_busy too', () => {
    const error = sqliteError(
      { message: 'database is locked', code: 'SQLITE_BUSY_SNAPSHOT' },
      'sqlite:/x.db',
    );
    expect(error.code).toBe('db_busy');
  });

  it('leaves a cannot-open error of a file not in WAL mode as it was', () => {
    const error = sqliteError(
      { message: 'unable to open database file', code: 'SQLITE_CANTOPEN' },
      'sqlite:/x.db',
    );
    expect(error.code).toBe('db_unreachable');
    expect(error.message).not.toMatch(/WAL/);
  });
});

/** A child process holding `path` open for writing with DuckDB until killed. */
async function duckdbWriter(path: string): Promise<ChildProcess> {
  const script = `
    import { DuckDBInstance } from '@duckdb/node-api';
    const instance = await DuckDBInstance.create(${JSON.stringify(path)});
    const connection = await instance.connect();
    await connection.run('CREATE TABLE IF NOT EXISTS t (x INTEGER)');
    process.stdout.write('ready\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: process.cwd(),
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  open.push({ close: () => child.kill('SIGKILL') });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the writer exited (${code})`)));
  });
  return child;
}

describe('DuckDB: a file another process writes', () => {
  it('is db_busy naming the pid of the process holding the lock', async () => {
    const path = join(tempDir('sqlrecall-shared-duckdb-'), 'shop.duckdb');
    const writer = await duckdbWriter(path);
    const db = await connect(`duckdb:${path}`);
    const error = await caught(db.ping());
    expect(error.code).toBe('db_busy');
    expect(error.message).toContain(`pid ${writer.pid}`);
    expect(error.message).toMatch(/open for writing/);
    expect(error.details).toMatchObject({ retryable: true, pid: writer.pid });
    writer.kill('SIGKILL');
    await new Promise((resolve) => writer.once('exit', resolve));
    await db.ping();
  }, 30_000);

  it('reads the holder out of the engine message, and stays db_busy without a pid', () => {
    expect(
      duckdbLockHolder(
        'IO Error: Could not set lock on file "/d/x.duckdb": Conflicting lock is held in /usr/bin/node (PID 4242). See also …',
      ),
    ).toEqual({ locked: true, pid: 4242, program: '/usr/bin/node' });
    expect(duckdbLockHolder('Catalog Error: Table with name x does not exist')).toEqual({ locked: false });
    const error = duckdbOpenError(
      'duckdb:/d/x.duckdb',
      new Error('IO Error: Could not set lock on file "/d/x.duckdb"'),
    );
    expect(error.code).toBe('db_busy');
    expect(error.message).toMatch(/another process has the DuckDB file open/);
    const other = duckdbOpenError(
      'duckdb:/d/x.duckdb',
      new Error('IO Error: Cannot open file "/d/x.duckdb": No such file'),
    );
    expect(other.code).toBe('db_unreachable');
  });
});
