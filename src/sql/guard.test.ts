import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { guardSql } from './guard.js';
import { GUARD_RULES } from './guard-rules.js';

/** [statement, rule id, reason pattern] — each must be refused by exactly that rule. */
const REFUSED: [string, string, RegExp][] = [
  ['WITH d AS (DELETE FROM t RETURNING *) SELECT * FROM d', 'data-modifying', /DELETE/],
  [
    'SELECT * FROM (WITH x AS (SELECT 1) SELECT * FROM (WITH u AS (UPDATE t SET a = 1 RETURNING a) SELECT * FROM u) s) y',
    'data-modifying',
    /UPDATE/,
  ],
  ['WITH i AS (INSERT INTO t VALUES (1) RETURNING *) SELECT 1', 'data-modifying', /INSERT/],
  ['SELECT * INTO new_t FROM t', 'select-into', /SELECT INTO/],
  ['SELECT 1; DROP TABLE t', 'multiple-statements', /2 statements/],
  ['SELECT 1; SELECT 2', 'multiple-statements', /2 statements/],
  ['SELECT * FROM t FOR UPDATE', 'locking-clause', /FOR UPDATE/],
  ['SELECT * FROM (SELECT * FROM t FOR SHARE) s', 'locking-clause', /FOR SHARE/],
  ['SELECT * FROM t FOR NO KEY UPDATE SKIP LOCKED', 'locking-clause', /locks/],
  ["COPY t TO '/tmp/x'", 'copy', /COPY/],
  ['COPY (SELECT 1) TO STDOUT', 'copy', /COPY/],
  ['DROP TABLE t', 'ddl', /DROP is DDL/],
  ['UPDATE t SET a = 1', 'data-modifying', /UPDATE/],
  ['INSERT INTO t VALUES (1)', 'data-modifying', /INSERT/],
  ['DELETE FROM t', 'data-modifying', /DELETE/],
  ['TRUNCATE t', 'data-modifying', /TRUNCATE/],
  ['CREATE TABLE x AS SELECT 1', 'ddl', /CREATE TABLE AS/],
  ['CREATE TABLE x (a int)', 'ddl', /CREATE TABLE/],
  ['BEGIN', 'transaction-control', /BEGIN is not allowed/],
  ['COMMIT', 'transaction-control', /COMMIT/],
  ['SET x = 1', 'session-settings', /SET changes/],
  ['SET TRANSACTION READ WRITE', 'session-settings', /SET/],
  ['DO $$ BEGIN PERFORM 1; END $$', 'procedural', /DO runs procedural/],
  ['CALL p()', 'procedural', /CALL/],
  ['EXPLAIN ANALYZE DELETE FROM t', 'explain-analyze', /EXPLAIN ANALYZE/],
  ['EXPLAIN (ANALYZE) SELECT 1', 'explain-analyze', /EXPLAIN ANALYZE/],
  ['EXPLAIN (FORMAT JSON, ANALYSE true) SELECT 1', 'explain-analyze', /EXPLAIN ANALYZE/],
  ['EXPLAIN DELETE FROM t', 'data-modifying', /DELETE/],
  ['EXPLAIN CREATE TABLE x AS SELECT 1', 'ddl', /CREATE TABLE AS/],
  ['SHOW search_path', 'statement-kind', /SHOW is not a read/],
  ['RESET ALL', 'session-settings', /RESET changes/],
  ['MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE', 'merge', /MERGE/],
  ['LISTEN ch', 'listen-notify', /LISTEN/],
  ['GRANT SELECT ON t TO PUBLIC', 'dcl', /GRANT/],
  ['CREATE ROLE x', 'dcl', /privileges/],
  ['SELECT pg_sleep(10)', 'sleep', /pg_sleep can stall/],
  ['SELECT "PG_CATALOG"."pg_sleep"(1)', 'sleep', /pg_sleep/],
  ["SELECT PG_SLEEP_FOR('1 s')", 'sleep', /pg_sleep_for/],
  ['SELECT * FROM t WHERE a = (SELECT pg_catalog.pg_advisory_lock(1))', 'advisory-lock', /advisory/],
  ["SELECT set_config('work_mem', '1GB', false)", 'settings', /set_config/],
  ["SELECT nextval('s')", 'sequences', /nextval/],
  ['SELECT txid_current()', 'transaction-id', /txid_current/],
  ["SELECT lo_import('/etc/passwd')", 'large-objects', /lo_import/],
  ["SELECT pg_read_file('/etc/passwd')", 'server-files', /pg_read_file/],
  ["SELECT * FROM pg_ls_dir('.')", 'server-files', /pg_ls_dir/],
  ["SELECT dblink_exec('host=x', 'DROP TABLE t')", 'remote', /dblink_exec/],
  ["SELECT pg_notify('c', 'x')", 'signals', /pg_notify/],
  ['SELECT pg_terminate_backend(1)', 'signals', /pg_terminate_backend/],
  ["SELECT query_to_xml('DELETE FROM t RETURNING 1', true, true, '')", 'nested-query', /query_to_xml/],
  ["SELECT pg_create_restore_point('x')", 'administration', /administration/],
  ["SELECT pg_logical_emit_message(true, 'p', 'm')", 'administration', /pg_logical_emit_message/],
  ['SELECT * FROM pg_authid', 'secret-catalogs', /pg_authid/],
  ['SELECT rolpassword FROM pg_catalog.PG_SHADOW', 'secret-catalogs', /password/],
  ['TABLE pg_user_mappings', 'secret-catalogs', /pg_user_mappings/],
  ['Show me all customers from India', 'parse-error', /^not valid PostgreSQL: syntax error/],
  ['SELEC 1', 'parse-error', /^not valid PostgreSQL/],
  ["SELECT 'unterminated", 'parse-error', /^not valid PostgreSQL/],
  ['', 'empty', /no SQL statement/],
  ['   \n ', 'empty', /no SQL statement/],
  ['-- only a comment', 'empty', /only comments/],
  ['/* just this */ ;', 'empty', /only comments/],
  ['SELECT 1\0; DROP TABLE t', 'nul-byte', /NUL/],
];

/** [statement, expected sql, kind] — tricky reads that must pass unchanged. */
const ACCEPTED: [string, string, string][] = [
  ["SELECT 'DROP TABLE t; DELETE'", "SELECT 'DROP TABLE t; DELETE'", 'select'],
  ["SELECT E'\\'' AS q, 'it''s' AS r", "SELECT E'\\'' AS q, 'it''s' AS r", 'select'],
  ['SELECT $$ DELETE FROM t; $$ AS d, $x$;$x$', 'SELECT $$ DELETE FROM t; $$ AS d, $x$;$x$', 'select'],
  ['SELECT 1 /* ; DROP TABLE t */ AS one', 'SELECT 1 /* ; DROP TABLE t */ AS one', 'select'],
  [
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n) FROM r',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 10) SELECT sum(n) FROM r',
    'with',
  ],
  [
    'SELECT a, rank() OVER (PARTITION BY b ORDER BY c DESC) FROM t',
    'SELECT a, rank() OVER (PARTITION BY b ORDER BY c DESC) FROM t',
    'select',
  ],
  ["VALUES (1, 'a'), (2, 'b')", "VALUES (1, 'a'), (2, 'b')", 'values'],
  ['TABLE t', 'TABLE t', 'table'],
  ['SELECT 1 UNION SELECT 2 EXCEPT SELECT 3', 'SELECT 1 UNION SELECT 2 EXCEPT SELECT 3', 'select'],
  ['(SELECT 1) UNION ALL (SELECT 2)', '(SELECT 1) UNION ALL (SELECT 2)', 'select'],
  ['EXPLAIN SELECT * FROM t', 'EXPLAIN SELECT * FROM t', 'explain'],
  ['EXPLAIN (COSTS OFF, FORMAT JSON) SELECT 1', 'EXPLAIN (COSTS OFF, FORMAT JSON) SELECT 1', 'explain'],
  ['SELECT 1;', 'SELECT 1', 'select'],
  ['SELECT 1 ;  -- done\n', 'SELECT 1', 'select'],
  ['-- leading comment\n/* and another */\n  SELECT 1', 'SELECT 1', 'select'],
  ['SELECT \'é\' AS "naïve" -- ünïcode ; trailing', 'SELECT \'é\' AS "naïve"', 'select'],
  ["-- é before\nSELECT 'ü';", "SELECT 'ü'", 'select'],
  [
    'SELECT lower(name), pg_catalog.now(), pg_size_pretty(1024) FROM t',
    'SELECT lower(name), pg_catalog.now(), pg_size_pretty(1024) FROM t',
    'select',
  ],
  ['SELECT * FROM pg_roles', 'SELECT * FROM pg_roles', 'select'],
  ['SELECT sleep FROM pg_sleepers', 'SELECT sleep FROM pg_sleepers', 'select'],
];

describe('guardSql refuses', () => {
  it.each(REFUSED)('%j', async (sql, rule, reason) => {
    const verdict = await guardSql(sql);
    expect(verdict.ok).toBe(false);
    if (verdict.ok) return;
    expect(verdict.rule).toBe(rule);
    expect(verdict.reason).toMatch(reason);
  });
});

describe('guardSql accepts tricky reads', () => {
  it.each(ACCEPTED)('%j', async (sql, expected, kind) => {
    expect(await guardSql(sql)).toEqual({ ok: true, sql: expected, kind });
  });
});

describe('guardSql robustness', () => {
  it('never throws, whatever the input', async () => {
    const inputs = [
      '\u0000',
      ')))',
      "'",
      '"',
      '$$',
      '/*',
      ';;;;',
      'SELECT ((((((((((1',
      '\uFFFF',
      'SELECT 1'.repeat(1000),
    ];
    for (const sql of inputs) {
      const verdict = await guardSql(sql);
      expect(typeof verdict.ok).toBe('boolean');
    }
    // biome-ignore lint/suspicious/noExplicitAny: deliberately wrong input type
    expect((await guardSql(undefined as any)).ok).toBe(false);
  });

  it('survives a very deep expression tree', async () => {
    const arrays = await guardSql(`SELECT ${'ARRAY['.repeat(3000)}1${']'.repeat(3000)}`);
    expect(typeof arrays.ok).toBe('boolean');
    const subqueries = `${'SELECT * FROM ('.repeat(200)}SELECT 1${') s'.repeat(200)}`;
    expect((await guardSql(subqueries)).ok).toBe(true);
  });

  it('finds a data-modifying CTE buried 100 subqueries deep', async () => {
    const inner = 'WITH d AS (DELETE FROM t RETURNING 1) SELECT * FROM d';
    const buried = `${'SELECT * FROM ('.repeat(100)}${inner}${') s'.repeat(100)}`;
    expect(await guardSql(buried)).toMatchObject({ ok: false, rule: 'data-modifying' });
  });

  it('every rule has an id, a reason a user can read, and a matcher', () => {
    const ids = GUARD_RULES.map((rule) => rule.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const rule of GUARD_RULES) expect(rule.reason).toMatch(/^refused: .{10,}/);
  });
});

describe('guardSql: properties', () => {
  it('never throws, and an accepted statement is always a piece of the input', async () => {
    const pieces = fc.constantFrom(
      'SELECT ',
      'a',
      ' FROM t',
      ';',
      "'",
      '"',
      '$$',
      '--',
      '\n',
      '(',
      ')',
      'DELETE ',
      'WITH ',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(pieces, fc.string()), { maxLength: 10 }), async (parts) => {
        const sql = parts.join('');
        const verdict = await guardSql(sql);
        if (verdict.ok) expect(sql).toContain(verdict.sql);
        else expect(verdict.reason).not.toBe('');
      }),
      { numRuns: 300 },
    );
  });
});
