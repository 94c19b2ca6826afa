/**
 * Value hints on MySQL/MariaDB: the bounded sampler writes MySQL (backticks, a LIMIT on a
 * subquery) and runs through the connector's READ ONLY path; enum labels come from the catalog.
 * The other statements of the MySQL SQL dialect (a column's sample, a value's stored spellings,
 * the session) run on the server too. Skips when no server answers at TEST_MYSQL_URL.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema, Table } from '../src/core/schema.js';
import { mysqlSql } from '../src/databases/mysql/sql.js';
import { openDatabase } from '../src/databases/open.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';

const RUN = { maxRows: 100, timeoutMs: 5_000 };

describe.skipIf(!MYSQL_AVAILABLE)('value hints on MySQL/MariaDB', () => {
  let temp: TempMysqlDatabase;
  let db: DatabaseConnector;
  let schema: Schema;
  const table = (name: string): Table => schema.tables.find((t) => t.name === name)!;

  beforeAll(async () => {
    temp = await createTempMysqlDatabase('sqlrecall_hints');
    // `Odd``Name` and the quote in a value: identifiers and values that must be quoted right.
    await temp.exec(`
      CREATE TABLE \`Odd\`\`Name\` (
        id INT PRIMARY KEY, status VARCHAR(20), code CHAR(3) CHARACTER SET latin1, person TEXT,
        tier ENUM('free', 'pro'), note MEDIUMTEXT
      );
      CREATE TABLE digits (d INT);
      INSERT INTO digits VALUES (0),(1),(2),(3),(4),(5),(6),(7),(8),(9);
      INSERT INTO \`Odd\`\`Name\`
        SELECT 1 + a.d + 10 * b.d,
          ELT(1 + (a.d MOD 3), 'shipped', 'Shipped', 'it''s late'),
          ELT(1 + (b.d MOD 2), 'EUR', 'USD'),
          CONCAT('person ', 1 + a.d + 10 * b.d),
          'pro',
          IF(a.d = 0, REPEAT('x', 500), NULL)
        FROM digits a, digits b;
      CREATE VIEW odd_view AS SELECT status FROM \`Odd\`\`Name\`;
    `);
    db = await openDatabase(temp.url);
    schema = await db.introspect();
  });
  afterAll(async () => {
    await db?.close();
    await temp?.drop();
  });

  it('samples the distinct values of text columns, exactly (case kept), and lists enum labels', async () => {
    const errors: unknown[] = [];
    const hints = await createValueSampler(db, { onError: (_t, error) => errors.push(error) })(
      table('Odd`Name'),
    );
    expect(errors).toEqual([]);
    const byColumn = Object.fromEntries(hints.map((h) => [h.column, h]));
    expect(byColumn.tier).toMatchObject({ values: ['free', 'pro'], source: 'enum' });
    // A binary comparison: `shipped` and `Shipped` are two values (the default collation folds case).
    expect(byColumn.status).toMatchObject({
      values: ['Shipped', "it's late", 'shipped'],
      source: 'sample',
      sampledRows: 100,
    });
    expect(byColumn.code?.values).toEqual(['EUR', 'USD']);
    // Every row differs (a name, not a category), and the 500-character text is over the length limit.
    expect(byColumn.person).toBeUndefined();
    expect(byColumn.note).toBeUndefined();
  });

  it('samples nothing of a view (its read may be unbounded)', async () => {
    expect(await createValueSampler(db)(table('odd_view'))).toEqual([]);
  });

  it('runs the dialect’s column sample, stored-spelling check and session read', async () => {
    const sample = await db.execute(mysqlSql.columnSampleSql(table('Odd`Name'), 'status', 50, 200), RUN);
    expect(sample.rows.map((r) => r[0]).sort()).toEqual(['Shipped', "it's late", 'shipped']);
    const spelled = await db.execute(
      mysqlSql.sameSpellingSql(table('Odd`Name'), 'status', 'SHIPPED', 5),
      RUN,
    );
    expect(spelled.rows.map((r) => r[0]).sort()).toEqual(['Shipped', 'shipped']);
    // A hostile value is a literal, never SQL.
    const hostile = await db.execute(
      mysqlSql.sameSpellingSql(table('Odd`Name'), 'status', "x\\' OR 1=1 -- ", 5),
      RUN,
    );
    expect(hostile.rows).toEqual([]);
    const session = await db.execute(mysqlSql.sessionSql, RUN);
    expect(mysqlSql.sessionFromRow(session.rows[0]!)).toEqual({
      today: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
      timeZone: '+00:00',
      searchPath: [temp.name],
    });
  });
});
