import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Table } from '../../core/schema.js';
import { postgresDialect as dialect, TABLESAMPLE_MIN_ROWS } from './dialect.js';

const table = (estimatedRows: number | null, kind: Table['kind'] = 'table'): Table => ({
  schema: 'Shop',
  name: "odd'name",
  kind,
  comment: null,
  estimatedRows,
  columns: [],
  primaryKey: [],
  foreignKeys: [],
  uniqueIndexes: [],
});

describe('postgresDialect on PGlite', () => {
  let db: PGlite;
  beforeAll(async () => {
    db = new PGlite();
    await db.exec(`
      CREATE SCHEMA "Shop";
      CREATE TABLE "Shop"."odd'name" (country text);
      INSERT INTO "Shop"."odd'name" SELECT (ARRAY['India', 'india', 'China', NULL])[1 + i % 4] FROM generate_series(0, 99) i;
      SET TimeZone = 'Pacific/Kiritimati';
      SET search_path = "Shop", public;`);
  });
  afterAll(async () => {
    await db?.close();
  });

  const values = async (sql: string) => (await db.query<{ v: string }>(sql)).rows.map((r) => r.v).sort();

  it('samples a column among the first rows, quoted identifiers, values cut to the length', async () => {
    const sql = dialect.columnSampleSql(table(100), 'country', 10, 3);
    expect(sql).not.toContain('TABLESAMPLE');
    expect(await values(sql)).toEqual(['Chi', 'Ind', 'ind']);
  });

  it('takes a TABLESAMPLE share of a large table only, and the statement runs', async () => {
    const large = dialect.sampledFrom(table(TABLESAMPLE_MIN_ROWS * 10), 2000);
    expect(large).toMatch(/TABLESAMPLE SYSTEM \(0\.8000\)$/);
    expect(dialect.sampledFrom(table(TABLESAMPLE_MIN_ROWS * 10, 'materialized_view'), 2000)).not.toContain(
      'TABLESAMPLE',
    );
    expect(dialect.sampledFrom(table(null), 2000)).not.toContain('TABLESAMPLE');
    const rows = await values(
      dialect.columnSampleSql(table(TABLESAMPLE_MIN_ROWS * 10), 'country', 2000, 200),
    );
    expect(rows.every((v) => ['India', 'india', 'China'].includes(v))).toBe(true);
  });

  it('finds the stored spellings of a value ignoring case; a quote in the value stays a value', async () => {
    expect(await values(dialect.sameSpellingSql(table(100), 'country', 'INDIA', 3))).toEqual([
      'India',
      'india',
    ]);
    expect(await values(dialect.sameSpellingSql(table(100), 'country', "x' OR '1'='1", 3))).toEqual([]);
  });

  it("reads the session's date, time zone and search path", async () => {
    const result = await db.query(dialect.sessionSql, [], { rowMode: 'array' });
    const session = dialect.sessionFromRow(result.rows[0] as unknown[]);
    expect(session?.today).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(session?.timeZone).toBe('Pacific/Kiritimati');
    expect(session?.searchPath).toEqual(['Shop', 'public']);
    expect(dialect.sessionFromRow(['not a date', 'UTC', '[]'])).toBeUndefined();
    expect(dialect.sessionFromRow(['2026-01-02', '', 'not json'])).toEqual({ today: '2026-01-02' });
  });
});

describe('the pipeline writes no PostgreSQL of its own', () => {
  it('src/agent/ neither imports the parser package nor writes TABLESAMPLE or the session read', () => {
    const dir = join(import.meta.dirname, '..', '..', 'agent');
    const offenders = readdirSync(dir)
      .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
      .filter((f) => {
        const text = readFileSync(join(dir, f), 'utf8');
        return /from 'libpg-query'|TABLESAMPLE SYSTEM \(|current_setting\('TimeZone'\)/.test(text);
      });
    expect(offenders).toEqual([]);
  });
});
