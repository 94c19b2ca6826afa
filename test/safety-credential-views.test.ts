/**
 * The SQL-standard views over PostgreSQL's credential catalogs. `information_schema` shows the
 * options of user mappings (a foreign server's user name and password) and of foreign servers
 * (host, port, database) through its own views, so refusing `pg_user_mappings` and
 * `pg_foreign_server` by name is not enough: the same secrets are one view away. On the server
 * engine a postgres_fdw user mapping with a password is created, the raw connection shows the
 * password through each view (the attack works), and every statement is refused through `sql`
 * with the credential rule, also when the view is hidden in a subquery, a CTE or written in capitals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';
import { runCliInProcess } from './support/in-process-cli.js';

const PASSWORD = 'S3cretPw-credential-view';

const VIEWS = [
  'information_schema.user_mapping_options',
  'information_schema._pg_user_mappings',
  'information_schema.foreign_server_options',
  'information_schema._pg_foreign_servers',
];

const STATEMENTS = [
  'SELECT option_name, option_value FROM information_schema.user_mapping_options',
  'SELECT umoptions FROM information_schema._pg_user_mappings',
  'SELECT option_name, option_value FROM information_schema.foreign_server_options',
  'SELECT srvoptions FROM information_schema._pg_foreign_servers',
  'SELECT * FROM (SELECT option_value FROM INFORMATION_SCHEMA.USER_MAPPING_OPTIONS) s',
  'WITH o AS (SELECT * FROM "information_schema"."user_mapping_options") SELECT count(*) FROM o',
  "SELECT 1 WHERE EXISTS (SELECT 1 FROM information_schema.user_mapping_options WHERE option_value LIKE 'S%')",
];

describe('credential views of information_schema', () => {
  beforeAll(() => loadGuardParser());

  it('are refused by the guard whatever their spelling or nesting', async () => {
    for (const sql of STATEMENTS) {
      const verdict = await guardSql(sql);
      expect(verdict, sql).toMatchObject({ ok: false });
      expect((verdict as { rule: string }).rule, sql).toMatch(/catalogs$/);
    }
  });

  it('ordinary information_schema reads still run through the guard', async () => {
    for (const sql of [
      'SELECT table_name FROM information_schema.tables',
      'SELECT column_name FROM information_schema.columns WHERE table_name = $$orders$$',
      'SELECT foreign_server_name FROM information_schema.foreign_servers',
    ]) {
      expect(await guardSql(sql), sql).toMatchObject({ ok: true });
    }
  });
});

describe.skipIf(!process.env.TEST_DATABASE_URL)(
  'credential views on the server, with a postgres_fdw password',
  () => {
    let db: TestDatabase;
    beforeAll(async () => {
      db = await createTestDatabase('server', 'sqlrecall_credviews');
      await db.exec(`CREATE EXTENSION IF NOT EXISTS postgres_fdw;
        CREATE SERVER reporting FOREIGN DATA WRAPPER postgres_fdw OPTIONS (host 'db.internal', dbname 'prod');
        CREATE USER MAPPING FOR CURRENT_USER SERVER reporting OPTIONS (user 'report', password '${PASSWORD}');`);
    }, 60_000);
    afterAll(async () => {
      await db?.dispose();
    });

    it('the raw connection shows the password through each user-mapping view (the attack works)', async () => {
      for (const view of VIEWS.slice(0, 2)) {
        const result = await db.connector.execute(`SELECT * FROM ${view}`, {
          maxRows: 10,
          timeoutMs: 10_000,
        });
        expect(JSON.stringify(result.rows), view).toContain(PASSWORD);
      }
    });

    it('sql refuses every statement with exit 3 and never prints the password', async () => {
      for (const sql of STATEMENTS) {
        const run = await runCliInProcess(['sql', sql, '--db', db.url!]);
        expect(run.code, `${sql}\n${run.stdout}${run.stderr}`).toBe(3);
        expect(run.stdout + run.stderr).not.toContain(PASSWORD);
        expect(run.stderr).toMatch(/passwords|credentials|connection strings/);
      }
    });
  },
);
