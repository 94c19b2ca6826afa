/**
 * The parser and the server read the same statement: on a database whose
 * `standard_conforming_strings` is off, a backslash would end no string for the guard's parser but
 * escape the quote for the server, so `'\' AS a, ' AS b, pg_read_file(…) AS c, ' AS d -- '` is two
 * literals and a comment to the guard and a file read to the server. The execution session forces
 * the parsing settings first, so the server reads two literals too (PGlite with the session setting
 * off; the server PostgreSQL with the database setting off, as the superuser and as a plain role).
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { guardSql } from '../src/sql/guard.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';

const PAYLOAD = String.raw`SELECT '\' AS a, ' AS b, pg_read_file($p$/etc/hostname$p$) AS c, ' AS d -- '`;
const RUN = { maxRows: 10, timeoutMs: 10_000 };

async function expectTwoLiterals(connector: Parameters<typeof withFunctionPolicy>[0]): Promise<void> {
  const verdict = await guardSql(PAYLOAD);
  expect(verdict).toMatchObject({ ok: true });
  const sql = (verdict as { sql: string }).sql;
  // The guard's text (up to the last token) and the payload as sent, comment included.
  const runs = [
    [connector, sql],
    [withFunctionPolicy(connector), sql],
    [connector, PAYLOAD],
  ] as const;
  for (const [target, text] of runs) {
    const result = await target.execute(text, RUN);
    expect(result.columns.map((column) => column.name)).toEqual(['a', 'd']);
    expect(result.rows).toEqual([['\\', ' AS b, pg_read_file($p$/etc/hostname$p$) AS c, ']]);
  }
}

describe('standard_conforming_strings = off on PGlite (session setting)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('pglite', 'guard_scs');
    await db.exec('SET standard_conforming_strings = off');
  }, 60_000);
  afterAll(async () => {
    await db?.dispose();
  });

  it('the server reads the payload as the guard does: two literals, no call', async () => {
    await expectTwoLiterals(db.connector);
  });
});

describe.skipIf(!TEST_DATABASE_URL)(
  'standard_conforming_strings = off on the server (database setting)',
  () => {
    let temp: TempDatabase;
    const role = `guard_scs_${Math.random().toString(16).slice(2, 10)}`;
    beforeAll(async () => {
      temp = await createTempDatabase('guard_scs');
      const admin = new pg.Client({ connectionString: temp.url });
      await admin.connect();
      await admin.query(`ALTER DATABASE "${temp.name}" SET standard_conforming_strings = off`);
      await admin.query(`CREATE ROLE ${role} LOGIN; GRANT CONNECT ON DATABASE "${temp.name}" TO ${role}`);
      await admin.end();
    });
    afterAll(async () => {
      await temp?.drop();
      const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await admin.connect();
      await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
      await admin.end();
    });

    it('the database really reads it differently without the forced setting', async () => {
      const client = new pg.Client({ connectionString: temp.url });
      await client.connect();
      try {
        const result = await client.query(`SELECT current_setting('standard_conforming_strings') AS s`);
        expect(result.rows[0].s).toBe('off');
      } finally {
        await client.end();
      }
    });

    it.each(['superuser', 'plain role'])('as %s, the server reads two literals', async (who) => {
      const url = new URL(temp.url);
      if (who === 'plain role') {
        url.username = role;
        url.password = '';
      }
      const connector = createPostgresConnector({ url: url.toString() });
      try {
        await expectTwoLiterals(connector);
      } finally {
        await connector.close();
      }
    });
  },
);
