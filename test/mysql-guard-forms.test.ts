/**
 * Forms of MySQL/MariaDB reads the guard's grammar reads differently from the server: NATURAL
 * joins and quantified comparisons (`= ANY/SOME/ALL (SELECT …)`) are accepted, checked like any
 * other read (allowlist, functions inside), and run on a real server with the server's answer;
 * a quantifier in any other shape is refused (rule `quantifier`), and so is a text nested too deep
 * for the grammar (rule `too-deep`), never a stack overflow or a parser's message.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { guardMysqlSql, MAX_MYSQL_NESTING } from '../src/sql/mysql/guard.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

const FIXTURE = `
CREATE TABLE shops (shop_id INT PRIMARY KEY, city VARCHAR(20));
CREATE TABLE sales (id INT PRIMARY KEY, shop_id INT, amount INT);
CREATE TABLE secret (shop_id INT, pin VARCHAR(10));
INSERT INTO shops VALUES (1, 'Lyon'), (2, 'Nantes'), (3, 'Brest');
INSERT INTO sales VALUES (10, 1, 5), (11, 1, 7), (12, 2, 40);
INSERT INTO secret VALUES (1, '0000');
`;

const ALLOWED = { allowTables: ['shops', 'sales'] };

/** Reads that pass, with the rows the server returns for them. */
const READS: [string, unknown[][]][] = [
  [
    'SELECT city, amount FROM shops NATURAL JOIN sales ORDER BY id',
    [
      ['Lyon', 5],
      ['Lyon', 7],
      ['Nantes', 40],
    ],
  ],
  ['SELECT city, amount FROM shops natural left outer join sales WHERE amount IS NULL', [['Brest', null]]],
  ['SELECT city FROM sales NATURAL RIGHT JOIN shops WHERE id IS NULL', [['Brest']]],
  ['SELECT city, amount FROM shops NATURAL INNER JOIN sales WHERE amount = 40', [['Nantes', 40]]],
  [
    'SELECT city FROM shops WHERE shop_id = ANY (SELECT shop_id FROM sales) ORDER BY city',
    [['Lyon'], ['Nantes']],
  ],
  [
    'SELECT city FROM shops WHERE shop_id = SOME (SELECT shop_id FROM sales WHERE amount > 6) ORDER BY city',
    [['Lyon'], ['Nantes']],
  ],
  ['SELECT id FROM sales WHERE amount > ALL (SELECT amount FROM sales WHERE shop_id = 1)', [[12]]],
  ['SELECT city FROM shops WHERE shop_id <> ALL (SELECT shop_id FROM sales)', [['Brest']]],
  ['SELECT `natural join`.city FROM shops AS `natural join` WHERE shop_id = 3', [['Brest']]],
];

/** Statement → the rule that refuses it. */
const REFUSED: [string, string][] = [
  // The join and the subquery read a table outside the allowlist.
  ['SELECT * FROM shops NATURAL JOIN secret', 'allowlist'],
  ['SELECT city FROM shops WHERE shop_id = ANY (SELECT shop_id FROM secret)', 'allowlist'],
  ['SELECT * FROM sales NATURAL LEFT JOIN mysql.user', 'system-catalog'],
  // What runs inside the subquery is still checked.
  ['SELECT city FROM shops WHERE shop_id = ANY (SELECT SLEEP(3) FROM sales)', 'function'],
  ['SELECT city FROM shops WHERE shop_id = `any` (SELECT shop_id FROM sales)', 'function'],
  // ANY/SOME/ALL anywhere but after a comparison, around one subquery.
  ['SELECT ANY(1) FROM shops', 'quantifier'],
  ['SELECT city FROM shops WHERE shop_id = ANY (1)', 'quantifier'],
  ['SELECT city FROM shops WHERE city LIKE ANY (SELECT city FROM shops)', 'quantifier'],
  ['SELECT city FROM shops WHERE shop_id = ALL (SELECT shop_id FROM sales, SELECT 1)', 'quantifier'],
  [`SELECT ${'('.repeat(MAX_MYSQL_NESTING + 1)}1${')'.repeat(MAX_MYSQL_NESTING + 1)}`, 'too-deep'],
  [`SELECT ${'('.repeat(20_000)}1${')'.repeat(20_000)}`, 'too-deep'],
  [
    `SELECT city FROM shops WHERE shop_id IN ${'(SELECT shop_id FROM shops WHERE shop_id IN '.repeat(120)}(1)${')'.repeat(120)}`,
    'too-deep',
  ],
];

describe('MySQL guard: NATURAL joins and quantified subqueries (no server needed)', () => {
  it.each(READS)('accepts %s', async (sql) => {
    const verdict = await guardMysqlSql(sql, ALLOWED);
    expect(verdict).toMatchObject({ ok: true, sql });
  });

  it.each(REFUSED)('refuses %s', async (sql, rule) => {
    const verdict = await guardMysqlSql(sql, ALLOWED);
    expect(verdict).toMatchObject({ ok: false, rule });
    if (!verdict.ok) {
      expect(verdict.reason).toMatch(/^(refused|not valid MySQL): /);
      expect(verdict.reason).not.toMatch(/call stack|at .*\.js:\d+/);
    }
  });

  it('says what it accepts in the quantifier and nesting refusals', async () => {
    const quantifier = await guardMysqlSql('SELECT ANY(1) FROM shops');
    expect(!quantifier.ok && quantifier.reason).toMatch(
      /ANY is accepted only as a comparison with one subquery/,
    );
    const deep = await guardMysqlSql(`SELECT ${'('.repeat(500)}1${')'.repeat(500)}`);
    expect(!deep.ok && deep.reason).toMatch(/more than 100 levels deep/);
  });

  it('accepts nesting up to the limit', async () => {
    const n = MAX_MYSQL_NESTING - 1;
    expect((await guardMysqlSql(`SELECT ${'('.repeat(n)}1${')'.repeat(n)} AS x`)).ok).toBe(true);
  });
});

describe.skipIf(!MYSQL_AVAILABLE)('MySQL guard forms on a real server', () => {
  let temp: TempMysqlDatabase;
  let db: DatabaseConnector;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_forms');
    await temp.exec(FIXTURE);
    db = await openDatabase(temp.url);
  });
  afterAll(async () => {
    await db?.close();
    await temp?.drop();
  });

  it.each(READS)('runs %s with the server answer', async (sql, rows) => {
    const { result } = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 });
    expect(
      result.rows.map((row) => row.map((cell) => (typeof cell === 'bigint' ? Number(cell) : cell))),
    ).toEqual(rows);
  });
});
