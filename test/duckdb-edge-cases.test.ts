/**
 * DuckDB over data files, the edge cases testers found: decimals in CSV, TSV and JSON keep their
 * exact digits (DECIMAL where every value fits, DOUBLE only where no value changes, else the text
 * as written, or for JSON a clear configuration error), and tables named after files keep
 * Unicode letters and accents while staying identifiers the guard and the engine accept unquoted.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCheckedSql } from '../src/agent/run-sql.js';
import { SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { exactNumberType } from '../src/databases/duckdb/exact-numbers.js';
import { scanDataFiles, tableNameOf } from '../src/databases/duckdb/files.js';
import { openDatabase } from '../src/databases/open.js';
import { tempDir } from './support/temp-dir.js';

const opened: DatabaseConnector[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

/** Opens a folder holding `files` (name → content). */
async function folderOf(files: Record<string, string>): Promise<DatabaseConnector> {
  const dir = tempDir('sqlrecall-duckdb-edge-');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  const db = await openDatabase(dir);
  opened.push(db);
  return db;
}

async function rows(db: DatabaseConnector, sql: string) {
  const { result } = await runCheckedSql({ db, sql, maxRows: 100, timeoutMs: 10_000 });
  return { types: result.columns.map((column) => column.type), rows: result.rows };
}

async function columnTypes(db: DatabaseConnector, table: string): Promise<Record<string, string>> {
  const schema = await db.introspect();
  const found = schema.tables.find((t) => t.name === table);
  expect(found, `table ${table}`).toBeDefined();
  return Object.fromEntries(found!.columns.map((column) => [column.name, column.type]));
}

describe('DuckDB data files: exact decimals', () => {
  it('gives CSV decimals DECIMAL(p,s), so long values and sums keep every digit', async () => {
    const db = await folderOf({
      'ledger.csv': 'id,amount,rate\n1,12345678901234.56789,0.1\n2,-0.2,0.2\n3,7,1.25\n',
    });
    expect(await columnTypes(db, 'ledger')).toMatchObject({ amount: 'DECIMAL(19,5)', rate: 'DECIMAL(3,2)' });
    const read = await rows(db, 'SELECT amount, rate FROM ledger WHERE id = 1');
    expect(read.rows).toEqual([['12345678901234.56789', '0.10']]);
    const sums = await rows(db, 'SELECT sum(amount) AS a, sum(rate) FILTER (WHERE id < 3) AS r FROM ledger');
    expect(sums.rows).toEqual([['12345678901241.36789', '0.30']]);
  });

  it('does the same for TSV', async () => {
    const db = await folderOf({ 'fees.tsv': 'k\tv\n1\t0.1\n2\t0.2\n' });
    expect((await rows(db, 'SELECT sum(v) AS s FROM fees')).rows).toEqual([['0.3']]);
  });

  it('keeps DOUBLE for values a double holds as written, and the text for those it would change', async () => {
    const db = await folderOf({
      'lab.csv': [
        'a,b,c',
        '1e5,1.2345678901234567891e5,1',
        '2.5,2,1234567890123456789012345678901234567890.5',
        '',
      ].join('\n'),
    });
    expect(await columnTypes(db, 'lab')).toMatchObject({ a: 'DOUBLE', b: 'VARCHAR', c: 'VARCHAR' });
    const read = await rows(db, 'SELECT a, b, c FROM lab ORDER BY a');
    expect(read.rows).toEqual([
      [2.5, '2', '1234567890123456789012345678901234567890.5'],
      [100000, '1.2345678901234567891e5', '1'],
    ]);
  });

  it('gives JSON decimals that a double keeps DECIMAL, and keeps a double spelled as one', async () => {
    const db = await folderOf({
      'prices.json': '[{"id": 1, "price": 1234.56, "rate": 0.1}, {"id": 2, "price": 0.2, "rate": 0.2}]',
      'ticks.jsonl': '{"v": 0.1}\n{"v": 0.30000000000000004}\n',
    });
    expect(await columnTypes(db, 'prices')).toMatchObject({ price: 'DECIMAL(6,2)', rate: 'DECIMAL(1,1)' });
    expect((await rows(db, 'SELECT sum(rate) AS s, sum(price) AS p FROM prices')).rows).toEqual([
      ['0.3', '1234.76'],
    ]);
    expect(await columnTypes(db, 'ticks')).toMatchObject({ v: 'DOUBLE' });
  });

  it('refuses a JSON file whose long decimals its reader cannot keep, naming the file and column', async () => {
    const dir = tempDir('sqlrecall-duckdb-edge-');
    writeFileSync(join(dir, 'ok.csv'), 'a\n1\n');
    writeFileSync(
      join(dir, 'bank.json'),
      '[{"id": 1, "balance": 12345678901234.56789}, {"id": 2, "balance": 1}]',
    );
    const db = await openDatabase(dir);
    opened.push(db);
    const error = await db.ping().then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(SqlrecallError);
    const failure = error as SqlrecallError;
    expect(failure.code).toBe('config');
    expect(failure.message).toMatch(
      /bank\.json: the numbers of "balance" have more digits than DuckDB's JSON reader keeps/,
    );
    expect(failure.message).not.toMatch(/\n\s+at /);
    expect(String((failure.details as { hint?: string }).hint)).toMatch(/JSON strings/);
  });

  it('handles column names holding quotes, dots and pattern characters', async () => {
    const db = await folderOf({
      'odd.csv': `"it's ""x""",a.b,"(y|z)*"\n0.1,1.5,2.25\n0.2,2,3\n`,
      'odd.json': '[{"it\'s \\"x\\"": 0.1, "a.b$": 0.2}]',
    });
    expect(await columnTypes(db, 'odd_csv')).toEqual({
      'it\'s "x"': 'DECIMAL(2,1)',
      'a.b': 'DECIMAL(2,1)',
      '(y|z)*': 'DECIMAL(3,2)',
    });
    expect(await columnTypes(db, 'odd_json')).toEqual({
      'it\'s "x"': 'DECIMAL(1,1)',
      'a.b$': 'DECIMAL(1,1)',
    });
  });

  it('decides from the text alone', () => {
    const plain = { notPlain: 0, integerDigits: 14, scale: 5, significant: 19, inexact: 1 };
    expect(exactNumberType(plain, true)).toEqual({ kind: 'decimal', precision: 19, scale: 5 });
    expect(exactNumberType(plain, false)).toEqual({ kind: 'inexact' });
    expect(exactNumberType({ ...plain, significant: 15, inexact: 0 }, false)).toMatchObject({
      kind: 'decimal',
    });
    const wide = { ...plain, integerDigits: 40 };
    expect(exactNumberType(wide, true)).toEqual({ kind: 'varchar' });
    expect(exactNumberType({ ...wide, inexact: 0 }, true)).toEqual({ kind: 'double' });
    expect(
      exactNumberType({ notPlain: 0, integerDigits: 0, scale: 0, significant: 0, inexact: 0 }, true),
    ).toEqual({
      kind: 'decimal',
      precision: 1,
      scale: 0,
    });
  });
});

describe('DuckDB data files: Unicode table names', () => {
  it('keeps letters and accents (NFKC, lower case) and still makes identifiers', () => {
    expect(tableNameOf('Ventes_été')).toBe('ventes_été');
    expect(tableNameOf('ＳＡＬＥＳ２０２４')).toBe('sales2024');
    expect(tableNameOf('Straße')).toBe('straße');
    expect(tableNameOf('データ')).toBe('データ');
    expect(tableNameOf('ﬁle')).toBe('file');
    // Nothing that would need quoting survives: quotes, spaces, dots, invisible characters.
    expect(tableNameOf('x"; DROP TABLE y; --')).toBe('x_drop_table_y');
    expect(tableNameOf('a\u200bb\u202ec')).toBe('a_b_c');
    expect(tableNameOf('\u0301abc')).toBe('abc');
    expect(tableNameOf('2024 été')).toBe('t_2024_été');
  });

  it('tells apart files only the case or the composition of an accent distinguishes, by refusing', () => {
    const dir = tempDir('sqlrecall-duckdb-edge-');
    writeFileSync(join(dir, 'Café.csv'), 'a\n1\n');
    writeFileSync(join(dir, 'cafe\u0301.csv'), 'a\n2\n');
    expect(() => scanDataFiles(dir)).toThrow(/would both be the table café/);
  });

  it('answers a question over a file named in French through the guard, unquoted', async () => {
    const db = await folderOf({ 'Ventes_été.csv': 'région,montant\nNord,10.5\nSud,2.25\n' });
    expect((await db.introspect()).tables.map((t) => t.name)).toEqual(['ventes_été']);
    const read = await rows(db, 'SELECT région, montant FROM ventes_été ORDER BY montant');
    expect(read.rows).toEqual([
      ['Sud', '2.25'],
      ['Nord', '10.50'],
    ]);
  });
});
