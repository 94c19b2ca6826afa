/**
 * The SQLite read-only path on a real file: every hostile statement is refused with a reason, by the
 * guard on the SQL path and by the engine itself when the guard is bypassed (the connector called
 * directly), and the file's SHA-256 is the same after each; reads of each kind are accepted and run.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { guardSqliteSql } from '../src/sql/sqlite/guard.js';
import {
  betterSqliteInstalled,
  fileSha256,
  makeSqliteFile,
  SQLITE_HOSTILE,
  SQLITE_READS,
} from './support/conformance/sqlite.js';

/** Statement → the rule that must refuse it (beyond the shared hostile list). */
const VERDICTS: [string, string][] = [
  ['DELETE FROM orders', 'statement-kind'],
  ['PRAGMA query_only = OFF', 'statement-kind'],
  ["ATTACH 'x.db' AS x", 'statement-kind'],
  ["VACUUM INTO '/tmp/x.db'", 'statement-kind'],
  ['WITH x AS (SELECT 1) DELETE FROM orders', 'statement-kind'],
  [
    "SELECT 1 FROM orders WHERE 0 UNION SELECT 1 FROM (SELECT 1) AS x, (SELECT load_extension('e'))",
    'function',
  ],
  ['SELECT "load_extension"(\'e\')', 'function'],
  ["SELECT [load_extension]('e')", 'function'],
  ["SELECT LOAD_EXTENSION('e')", 'function'],
  ["SELECT fts3_tokenizer('simple')", 'function'],
  ["SELECT edit('x', 'vi')", 'function'],
  ["SELECT sqlar_uncompress(x'00', 1)", 'function'],
  ['SELECT zeroblob(1000000000)', 'function'],
  ['SELECT my_app_function(1)', 'function'],
  ['SELECT * FROM sqlite_schema', 'system-catalog'],
  ['SELECT * FROM "sqlite_master"', 'system-catalog'],
  ['SELECT * FROM main.sqlite_dbpage', 'system-catalog'],
  ['SELECT * FROM pragma_database_list', 'system-catalog'],
  ['SELECT name FROM customers; SELECT 2', 'multiple-statements'],
  ['SELECT 1 /* unterminated', 'lexical'],
  ["SELECT 'unterminated", 'lexical'],
  ['SELECT name FROM customers WHERE id = ?', 'parameter'],
  ['SELECT name FROM customers WHERE id = :id', 'parameter'],
  ['SELECT name FROM customers WHERE id = $id', 'parameter'],
  ['EXPLAIN SELECT 1', 'statement-kind'],
  ['SELECT 1\u0000', 'nul-byte'],
  ['', 'empty'],
  // The quote is doubled, so the string goes on; the call is inside it and nothing else follows.
  ["SELECT 'a'';DELETE FROM orders' AS s; DELETE FROM orders", 'multiple-statements'],
  // A column named like a keyword must be quoted: an unquoted one is refused, not guessed.
  ['SELECT release FROM customers', 'statement-kind'],
];

/** Reads the guard accepts (beyond the shared ones): SQLite's own spellings. */
const GUARD_READS: string[] = [
  'SELECT [name], `email`, "region" FROM customers',
  "SELECT name || ' <' || coalesce(email, '-') || '>' AS who FROM customers WHERE name LIKE 'a%'",
  "SELECT strftime('%Y-%m', placed_at) AS m, count(*) FILTER (WHERE total > 1) FROM orders GROUP BY 1",
  "SELECT julianday('2024-04-02') - julianday(created_on) AS days FROM customers",
  "SELECT 'a'';DELETE FROM orders' AS s",
  'SELECT "release" FROM (SELECT 1 AS "release")',
  'WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3) SELECT i FROM n',
  "SELECT value FROM json_each('[1,2]')",
  'VALUES (1, 2)',
  'SELECT name FROM customers -- a trailing comment\n;',
];

describe('SQLite guard verdicts (no database needed)', () => {
  it.each(SQLITE_HOSTILE.map((h) => h.sql))('refuses %s', async (sql) => {
    const verdict = await guardSqliteSql(sql);
    expect(verdict.ok).toBe(false);
    if (!verdict.ok) expect(verdict.reason).toMatch(/^refused: \S/);
  });

  it.each(VERDICTS)('refuses %s with rule %s', async (sql, rule) => {
    expect(await guardSqliteSql(sql)).toMatchObject({ ok: false, rule });
  });

  it.each([...SQLITE_READS, ...GUARD_READS])('accepts %s', async (sql) => {
    expect(await guardSqliteSql(sql)).toMatchObject({ ok: true });
  });

  it('runs the statement without its comments or final semicolon', async () => {
    expect(await guardSqliteSql('SELECT 1 /* x */ AS one; -- done')).toMatchObject({
      ok: true,
      sql: 'SELECT 1   AS one',
      kind: 'select',
    });
  });
});

describe.skipIf(!betterSqliteInstalled())('SQLite hostile statements on a real file', () => {
  let path: string;
  let db: DatabaseConnector;
  let before: string;

  beforeAll(async () => {
    path = await makeSqliteFile();
    db = await openDatabase(`sqlite:${path}`);
    before = fileSha256(path);
  });
  afterAll(async () => {
    await db?.close();
  });

  it.each(SQLITE_HOSTILE.map((h) => h.sql))(
    'refuses %s on the SQL path and leaves the file unchanged',
    async (sql) => {
      const error = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(SqlrecallError);
      expect((error as SqlrecallError).code).toBe('guard_refused');
      expect(fileSha256(path)).toBe(before);
    },
  );

  it.each(SQLITE_HOSTILE.map((h) => h.sql))(
    'the engine alone (guard bypassed) never runs %s as a write',
    async (sql) => {
      const outcome = await db.execute(sql, { maxRows: 100, timeoutMs: 5_000 }).then(
        (result) => result,
        (e: unknown) => e,
      );
      // Reads of SQLite's own tables may run here (the guard refuses them); nothing may change.
      if (outcome instanceof Error) {
        expect(outcome).toBeInstanceOf(SqlrecallError);
        expect(['guard_refused', 'db_query']).toContain((outcome as SqlrecallError).code);
      } else expect(sql).toMatch(/^SELECT (\*|readfile)|^SELECT 1;/);
      expect(fileSha256(path)).toBe(before);
    },
  );

  it('the engine refuses a write itself, with a reason', async () => {
    await expect(db.execute('DELETE FROM orders', { maxRows: 1, timeoutMs: 5_000 })).rejects.toMatchObject({
      code: 'guard_refused',
      message: 'Refused: SQLite reports that this statement is not read-only',
    });
    await expect(
      db.execute('PRAGMA query_only = OFF', { maxRows: 1, timeoutMs: 5_000 }),
    ).rejects.toMatchObject({
      code: 'guard_refused',
    });
  });

  it.each(SQLITE_READS)('accepts and runs %s', async (sql) => {
    const { result } = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 5_000 });
    expect(result.rowCount).toBeGreaterThan(0);
    expect(fileSha256(path)).toBe(before);
  });
});
