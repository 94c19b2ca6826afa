/**
 * The per-dialect SQL writers (`src/databases/sql-writer.ts`): one for every engine, each quoting
 * hostile names and values its own way, and each statement run on the engine itself (the
 * conformance fixture of `support/conformance/engine.ts` on every available engine): a column's
 * sampled values, the stored spellings of a value, whether a literal filter matches, with
 * literals that try to break out of their quotes matching nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseDialectName } from '../src/core/ports.js';
import type { Table } from '../src/core/schema.js';
import { literalMatchesSql, SQL_WRITERS, sqlWriter } from '../src/databases/sql-writer.js';
import { DIALECTS } from '../src/sql/dialects.js';
import type { ConformanceDatabase } from './support/conformance/engine.js';
import { CONFORMANCE_ENGINES } from './support/conformance/index.js';

const RUN = { maxRows: 100, timeoutMs: 10_000 };

function table(schema: string, name: string): Table {
  return {
    schema,
    name,
    kind: 'table',
    comment: null,
    estimatedRows: 3,
    columns: [],
    primaryKey: [],
    foreignKeys: [],
    uniqueIndexes: [],
  };
}

describe('the SQL writers', () => {
  it('has one writer for every dialect profile', () => {
    expect(Object.keys(SQL_WRITERS).sort()).toEqual(Object.keys(DIALECTS).sort());
    expect(sqlWriter(undefined)).toBe(SQL_WRITERS.postgres);
  });

  it('quotes hostile identifiers and literals the way each engine reads them', () => {
    const t = table('s"`]', 'or"ders`]; DROP TABLE x');
    const expected: Record<DatabaseDialectName, { relation: string; literal: string }> = {
      postgres: { relation: '"s""`]"."or""ders`]; DROP TABLE x"', literal: "'it''s \\'" },
      // MySQL reads a backslash as an escape: it is doubled.
      mysql: { relation: '`s"``]`.`or"ders``]; DROP TABLE x`', literal: "'it''s \\\\'" },
      sqlite: { relation: '"s""`]"."or""ders`]; DROP TABLE x"', literal: "'it''s \\'" },
      duckdb: { relation: '"s""`]"."or""ders`]; DROP TABLE x"', literal: "'it''s \\'" },
    };
    for (const [dialect, want] of Object.entries(expected) as [
      DatabaseDialectName,
      (typeof expected)['mysql'],
    ][]) {
      const writer = sqlWriter(dialect);
      expect(writer.relation(t), dialect).toBe(want.relation);
      expect(writer.literal("it's \\"), dialect).toBe(want.literal);
      expect(writer.limit(2.7), dialect).toBe(' LIMIT 2');
      const sql = literalMatchesSql(writer, t, 'c', 'like', "x' OR '1'='1");
      expect(sql, dialect).toContain(`${writer.quote('c')} LIKE ${writer.literal("x' OR '1'='1")}`);
      expect(sql, dialect).toMatch(/ LIMIT 1$/);
    }
  });

  it('puts a data policy row filter only where the engine takes PostgreSQL filters', () => {
    const t = table('public', 'orders');
    expect(literalMatchesSql(sqlWriter('postgres'), t, 'c', '=', 'x', '"region" = \'EMEA\'')).toContain(
      `AND ("region" = 'EMEA')`,
    );
    for (const dialect of ['mysql', 'sqlite', 'duckdb'] as const)
      expect(() => literalMatchesSql(sqlWriter(dialect), t, 'c', '=', 'x', '1 = 1')).toThrow(/row filter/);
  });
});

const available = await Promise.all(
  CONFORMANCE_ENGINES.map(async (engine) => ({ engine, reason: await engine.unavailable() })),
);

for (const { engine, reason } of available) {
  describe.skipIf(reason !== undefined)(`the ${engine.name} writer on the engine`, () => {
    let db: ConformanceDatabase;
    let customers: Table;
    const writer = sqlWriter(engine.dialect);
    const values = async (sql: string) =>
      (await db.connector.execute(sql, RUN)).rows.map((r) => String(r[0])).sort();

    beforeAll(async () => {
      db = await engine.setUp();
      customers = (await db.connector.introspect()).tables.find((t) => t.name === 'customers')!;
    }, 60_000);
    afterAll(async () => {
      await db?.dispose();
    });

    it('samples the distinct values of a column, and the stored spellings of a value', async () => {
      expect(await values(writer.columnSampleSql(customers, 'name', 2000, 3))).toEqual(['Ada', 'Gra', 'Lin']);
      expect(await values(writer.columnSampleSql(customers, 'email', 2000, 200))).toEqual([
        'ada@example.com',
        'linus@example.com',
      ]);
      expect(await values(writer.sameSpellingSql(customers, 'name', 'gRACE', 3))).toEqual(['Grace']);
      expect(await values(writer.sameSpellingSql(customers, 'name', 'Graces', 3))).toEqual([]);
    });

    it("tells whether a literal filter matches, compared the engine's own way", async () => {
      const matches = async (operator: '=' | 'like', value: string) =>
        (await db.connector.execute(literalMatchesSql(writer, customers, 'name', operator, value), RUN))
          .rowCount;
      expect(await matches('=', 'Ada')).toBe(1);
      expect(await matches('like', 'Gr%')).toBe(1);
      expect(await matches('=', 'Atlantis')).toBe(0);
      // MySQL's default collation ignores case; the others compare text exactly.
      expect(await matches('=', 'ada')).toBe(engine.dialect === 'mysql' ? 1 : 0);
    });

    it('matches nothing with literals that try to end their quotes', async () => {
      for (const hostile of ["x' OR '1'='1", "x\\' OR 1=1 -- ", '\\', "'; DROP TABLE customers; --"]) {
        const sql = literalMatchesSql(writer, customers, 'name', '=', hostile);
        expect((await db.connector.execute(sql, RUN)).rowCount, hostile).toBe(0);
        expect(await values(writer.sameSpellingSql(customers, 'name', hostile, 3)), hostile).toEqual([]);
      }
      expect((await db.connector.introspect()).tables.some((t) => t.name === 'customers')).toBe(true);
    });
  });
}
