import { describe, expect, it } from 'vitest';
import { confirmValueSql, exampleSlots, substituteSlots } from '../agent/example-reuse.js';
import type { Column, Schema, Table } from '../core/schema.js';
import { scanLiterals } from './literal-scan.js';

function column(name: string): Column {
  return {
    name,
    position: 1,
    type: 'varchar',
    domainBaseType: null,
    enumValues: null,
    nullable: true,
    default: null,
    comment: null,
  };
}

function table(schema: string, name: string, columns: string[]): Table {
  return {
    schema,
    name,
    kind: 'table',
    comment: null,
    estimatedRows: 10,
    columns: columns.map(column),
    primaryKey: [],
    foreignKeys: [],
    uniqueIndexes: [],
  };
}

const schema: Schema = {
  dialect: 'sqlite',
  schemas: ['main'],
  tables: [table('main', 'customers', ['id', 'City', 'country']), table('main', 'orders', ['id', 'status'])],
} as unknown as Schema;

describe('scanning literal comparisons per dialect', () => {
  it('reads relations with aliases and the plain text filters', () => {
    const scan = scanLiterals(
      "SELECT c.id FROM customers c JOIN main.orders AS o ON o.id = c.id WHERE c.City = 'Paris' AND o.status IN ('open', 'held') OR country LIKE 'Fr%'",
      'duckdb',
    );
    expect(scan.relations).toEqual([
      { name: 'customers', alias: 'c' },
      { schema: 'main', name: 'orders', alias: 'o' },
    ]);
    expect(scan.filters).toEqual([
      { qualifier: 'c', column: 'City', literals: ['Paris'], operator: '=' },
      { qualifier: 'o', column: 'status', literals: ['open', 'held'], operator: '=' },
      { column: 'country', literals: ['Fr%'], operator: 'like' },
    ]);
  });

  it("reads each engine's quoting: MySQL backticks and backslash escapes, SQLite brackets", () => {
    const mysql = scanLiterals(
      "SELECT `id` FROM `customers` WHERE `City` = 'O\\'Hare' AND country = \"it's\"",
      'mysql',
    );
    expect(mysql.filters.map((f) => [f.column, f.literals])).toEqual([
      ['City', ["O'Hare"]],
      ['country', ["it's"]],
    ]);
    const sqlite = scanLiterals("SELECT [id] FROM [customers] WHERE [City] = 'O''Hare'", 'sqlite');
    expect(sqlite.filters).toEqual([{ column: 'City', literals: ["O'Hare"], operator: '=' }]);
    // In SQLite a backslash is an ordinary character.
    expect(
      scanLiterals("SELECT 1 FROM t WHERE a = 'x\\' AND b = 'y'", 'sqlite').filters.map((f) => f.literals),
    ).toEqual([['x\\'], ['y']]);
  });

  it('finds no filter where the comparison is not a predicate of its own, or sits in a comment or a name', () => {
    const none = [
      "SELECT 1 FROM customers WHERE NOT City = 'Paris'",
      "SELECT 1 FROM customers WHERE upper(City) = 'PARIS'",
      "SELECT 1 FROM customers WHERE City = 'Par' || 'is'",
      "SELECT CASE WHEN City = 'Paris' THEN 1 END FROM customers",
      "SELECT 1 FROM customers WHERE City NOT LIKE 'P%'",
      "SELECT 1 FROM customers -- WHERE City = 'Paris'",
      "SELECT 1 FROM customers /* WHERE City = 'Paris' */",
      'SELECT "City = \'Paris\'" FROM customers',
      "SELECT 1 FROM customers WHERE City = 'Paris' COLLATE NOCASE",
    ];
    for (const sql of none) expect(scanLiterals(sql, 'sqlite').filters, sql).toEqual([]);
    expect(scanLiterals("SELECT 1 FROM t # WHERE a = 'x'\nWHERE b = 'y'", 'mysql').filters).toEqual([
      { column: 'b', literals: ['y'], operator: '=' },
    ]);
  });
});

describe('example reuse per dialect', () => {
  it('finds the slots of a MySQL example in backticks and substitutes at byte offsets', async () => {
    const sql = "SELECT `id` /* Zürich */ FROM `customers` WHERE `City` = 'Paris' LIMIT 5";
    const slots = await exampleSlots(sql, 'top 5 customers in paris', schema, 'mysql');
    expect(slots.map((s) => [s.kind, s.value, s.column?.column])).toEqual([
      ['string', 'Paris', 'City'],
      ['number', '5', undefined],
    ]);
    const changed = substituteSlots(sql, [
      { slot: slots[0]!, newValue: "Val d'Or" },
      { slot: slots[1]!, newValue: '7' },
    ]);
    expect(changed).toBe("SELECT `id` /* Zürich */ FROM `customers` WHERE `City` = 'Val d''Or' LIMIT 7");
  });

  it('resolves an unquoted name that differs in case from the catalog (SQLite, DuckDB) and skips names and comments', async () => {
    const sql = "SELECT [Paris] FROM Customers AS c WHERE c.city = 'Paris' -- 'Paris'";
    for (const dialect of ['sqlite', 'duckdb'] as const) {
      const slots = await exampleSlots(sql, 'customers in paris', schema, dialect);
      expect(slots, dialect).toHaveLength(1);
      expect(slots[0]!.ranges, dialect).toHaveLength(1);
      expect(slots[0]!.column, dialect).toMatchObject({ column: 'City', table: { name: 'customers' } });
    }
  });

  it('does not substitute a MySQL double-quoted string', async () => {
    const slots = await exampleSlots(
      'SELECT id FROM customers WHERE City = "Paris"',
      'customers in paris',
      schema,
      'mysql',
    );
    expect(slots).toEqual([]);
  });

  it('confirms a value in the engine SQL', () => {
    const target = { table: schema.tables[0]!, column: 'City' };
    expect(confirmValueSql(target, "O'Hare", 'mysql')).toContain("LOWER('O''Hare')");
    expect(confirmValueSql(target, "O'Hare", 'mysql')).toContain('`main`.`customers`');
    expect(confirmValueSql(target, 'x', 'sqlite')).toContain('CAST("City" AS TEXT)');
    expect(confirmValueSql(target, 'x', 'duckdb')).toContain('CAST("City" AS VARCHAR)');
    expect(confirmValueSql(target, 'x')).toContain('"City"::text');
  });
});
