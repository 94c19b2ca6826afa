/**
 * The MySQL/MariaDB read-only path against a real server: every hostile statement is refused by
 * the guard with a reason AND the data is unchanged (row counts read by an admin connection);
 * reads of each kind are accepted and run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { guardMysqlSql } from '../src/sql/mysql/guard.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

const FIXTURE = `
CREATE TABLE accounts (id INT PRIMARY KEY, owner VARCHAR(50), balance DECIMAL(12,2));
CREATE TABLE audit (id INT AUTO_INCREMENT PRIMARY KEY, note TEXT);
INSERT INTO accounts VALUES (1, 'ann', 100.00), (2, 'bob', 250.50), (3, 'cy', 0);
INSERT INTO audit (note) VALUES ('opened');
CREATE SEQUENCE seq;
`;

/** Statement → the rule that must refuse it. */
const HOSTILE: [string, string][] = [
  ['SELECT SLEEP(3)', 'function'],
  ['SELECT id FROM accounts WHERE SLEEP(3) = 0', 'function'],
  ['SELECT `sleep`(3)', 'function'],
  ["SELECT BENCHMARK(100000000, MD5('x'))", 'function'],
  ["SELECT GET_LOCK('sqlrecall', 10)", 'function'],
  ["SELECT RELEASE_LOCK('sqlrecall')", 'function'],
  ["SELECT IS_USED_LOCK('sqlrecall')", 'function'],
  ["SELECT LOAD_FILE('/etc/passwd')", 'function'],
  ['SELECT NEXTVAL(seq)', 'function'],
  ['SELECT LAST_INSERT_ID(5)', 'function'],
  ['SELECT test.some_stored_function(1)', 'function'],
  ["SELECT * FROM accounts INTO OUTFILE '/tmp/sqlrecall-out.txt'", 'into'],
  ["SELECT owner FROM accounts LIMIT 1 INTO DUMPFILE '/tmp/sqlrecall-dump.bin'", 'into'],
  ['SELECT owner FROM accounts LIMIT 1 INTO @x', 'into'],
  ['SELECT * FROM accounts FOR UPDATE', 'locking-read'],
  ['SELECT * FROM accounts LOCK IN SHARE MODE', 'locking-read'],
  ['SELECT * FROM accounts FOR SHARE', 'parse-error'],
  ['DO SLEEP(3)', 'statement-kind'],
  ['HANDLER accounts OPEN', 'statement-kind'],
  ['SET @a = 1', 'statement-kind'],
  ['SET SESSION TRANSACTION READ WRITE', 'statement-kind'],
  ['CALL some_procedure()', 'statement-kind'],
  ["INSERT INTO audit (note) VALUES ('x')", 'statement-kind'],
  ['UPDATE accounts SET balance = 0', 'statement-kind'],
  ['DELETE FROM accounts', 'statement-kind'],
  ['REPLACE INTO accounts VALUES (1, "eve", 1)', 'statement-kind'],
  ['DROP TABLE accounts', 'statement-kind'],
  ['TRUNCATE accounts', 'statement-kind'],
  ['LOCK TABLES accounts WRITE', 'statement-kind'],
  ["LOAD DATA LOCAL INFILE '/etc/passwd' INTO TABLE audit", 'statement-kind'],
  ['SHOW GRANTS', 'statement-kind'],
  ['COMMIT', 'statement-kind'],
  ['SELECT 1; DELETE FROM accounts', 'multiple-statements'],
  ['SELECT 1--1, SLEEP(3)', 'lexical'],
  ['/*!50000 DELETE FROM accounts */', 'executable-comment'],
  ['SELECT 1 /*!, SLEEP(3) */', 'executable-comment'],
  ['SELECT 1 /*M!, SLEEP(3) */', 'executable-comment'],
  ['SELECT /*+ SET_VAR(max_statement_time=0) */ 1', 'executable-comment'],
  ['SELECT @@datadir', 'variable'],
  ['SELECT @a := 1', 'variable'],
  ['SELECT * FROM mysql.user', 'system-catalog'],
  ['SELECT * FROM information_schema.PROCESSLIST', 'system-catalog'],
  ['SELECT {fn SLEEP(3)}', 'lexical'],
  // The backslash escapes itself: the string ends there and SLEEP is a call.
  ["SELECT 'a\\\\', SLEEP(3) -- '", 'function'],
];

/** Reads that must pass the guard and run. */
const READS: string[] = [
  'SELECT owner, balance FROM accounts ORDER BY id',
  'SELECT COUNT(*) AS n, SUM(balance) AS total FROM accounts',
  'WITH rich AS (SELECT * FROM accounts WHERE balance > 50) SELECT owner FROM rich ORDER BY owner',
  '(SELECT owner FROM accounts WHERE id = 1) UNION ALL (SELECT owner FROM accounts WHERE id = 2)',
  'SELECT a.owner FROM accounts a WHERE a.id IN (SELECT id FROM accounts WHERE balance > 0)',
  'SELECT owner, RANK() OVER (ORDER BY balance DESC) AS r FROM accounts',
  "SELECT DATE_FORMAT(DATE_ADD('2024-01-31', INTERVAL 1 MONTH), '%Y-%m') AS m, CAST(balance AS CHAR) AS b FROM accounts LIMIT 1",
  "SELECT `owner` FROM `accounts` WHERE owner LIKE 'a%' -- a trailing comment",
  "SELECT 'it''s; fine' AS s, \"a\\\"b\" AS t;",
  // The backslash escapes the quote: one string, no call (the server agrees: it returns at once).
  "SELECT 'a\\', SLEEP(3) -- ' AS s",
];

async function counts(temp: TempMysqlDatabase): Promise<Record<string, number>> {
  const [a] = await temp.query('SELECT COUNT(*) AS n, SUM(balance) AS s FROM accounts');
  const [b] = await temp.query('SELECT COUNT(*) AS n FROM audit');
  return { accounts: Number(a!.n), balance: Number(a!.s), audit: Number(b!.n) };
}

describe('MySQL guard verdicts (no server needed)', () => {
  it.each(HOSTILE)('refuses %s', async (sql, rule) => {
    const verdict = await guardMysqlSql(sql);
    expect(verdict).toMatchObject({ ok: false, rule });
    if (!verdict.ok) expect(verdict.reason).toMatch(/\S/);
  });

  it.each(READS)('accepts %s', async (sql) => {
    expect((await guardMysqlSql(sql)).ok).toBe(true);
  });

  it('runs the statement without its comments, so what runs is what was checked', async () => {
    expect(await guardMysqlSql('SELECT 1 /* x */ AS one; -- done')).toMatchObject({
      ok: true,
      sql: 'SELECT 1   AS one',
    });
  });
});

describe.skipIf(!MYSQL_AVAILABLE)('MySQL hostile statements on a real server', () => {
  let temp: TempMysqlDatabase;
  let db: DatabaseConnector;
  let before: Record<string, number>;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_hostile');
    await temp.exec(FIXTURE);
    db = await openDatabase(temp.url);
    before = await counts(temp);
  });
  afterAll(async () => {
    await db?.close();
    await temp?.drop();
  });

  it.each(HOSTILE)('refuses %s on the SQL path and leaves the data unchanged', async (sql) => {
    const started = Date.now();
    const error = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SqlrecallError);
    expect((error as SqlrecallError).code).toBe('guard_refused');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(await counts(temp)).toEqual(before);
    // No named lock was taken, no sequence advanced.
    const [lock] = await temp.query("SELECT IS_USED_LOCK('sqlrecall') AS l");
    expect(lock!.l).toBeNull();
  });

  it.each(READS)('runs %s', async (sql) => {
    const { result } = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 });
    expect(result.rowCount).toBeGreaterThan(0);
  });

  it('keeps the engine read-only when a write reaches the connector directly', async () => {
    await expect(
      db.execute('UPDATE accounts SET balance = 0', { maxRows: 1, timeoutMs: 5_000 }),
    ).rejects.toMatchObject({
      code: 'db_query',
    });
    expect(await counts(temp)).toEqual(before);
    const [seq] = await temp.query('SELECT NEXTVAL(seq) AS v');
    expect(Number(seq!.v)).toBe(1);
  });
});
