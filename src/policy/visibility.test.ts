import { describe, expect, it } from 'vitest';
import { withoutQuotedValues } from '../agent/generate.js';
import type { Schema, Table } from '../core/schema.js';
import { type EffectivePolicy, unrestrictedPolicy } from './types.js';
import { policyKey, rowFilterSql, visibleSchema } from './visibility.js';

const column = (name: string, position: number) => ({
  name,
  position,
  type: 'text',
  domainBaseType: null,
  enumValues: null,
  nullable: true,
  default: null,
  comment: null,
});

const table = (name: string, columns: string[], extra: Partial<Table> = {}): Table => ({
  schema: 'public',
  name,
  kind: 'table',
  comment: null,
  estimatedRows: null,
  columns: columns.map(column),
  primaryKey: ['id'],
  foreignKeys: [],
  uniqueIndexes: [],
  ...extra,
});

const SCHEMA: Schema = {
  dialect: 'postgres',
  database: 'shop',
  serverVersion: '17',
  schemas: ['public'],
  tables: [
    table('customers', ['id', 'name', 'email'], {
      uniqueIndexes: [
        { name: 'customers_pkey', columns: ['id'], primary: true },
        { name: 'customers_email_key', columns: ['lower(email)'], primary: false },
      ],
    }),
    table('orders', ['id', 'customer_id', 'vault_id'], {
      foreignKeys: [
        {
          name: 'o_c',
          columns: ['customer_id'],
          references: { schema: 'public', table: 'customers', columns: ['id'] },
        },
        {
          name: 'o_v',
          columns: ['vault_id'],
          references: { schema: 'public', table: 'vault', columns: ['id'] },
        },
      ],
    }),
    table('vault', ['id', 'code']),
  ],
};

const policy = (over: Partial<EffectivePolicy>): EffectivePolicy => ({
  ...unrestrictedPolicy('sam'),
  ...over,
});

describe('visibleSchema', () => {
  it('is the catalog itself when nothing is restricted', () => {
    expect(visibleSchema(SCHEMA, unrestrictedPolicy('a'))).toBe(SCHEMA);
    expect(visibleSchema(SCHEMA, { ...unrestrictedPolicy('a'), rowsToModel: false })).toBe(SCHEMA);
  });

  it('drops tables off the allow-list, denied columns, and the keys and indexes that would name them', () => {
    const p = policy({
      tables: new Set(['public.customers', 'public.orders']),
      deniedColumns: new Map([['public.customers', new Map([['email', 'team sales']])]]),
    });
    const seen = visibleSchema(SCHEMA, p);
    expect(seen.tables.map((t) => t.name)).toEqual(['customers', 'orders']);
    const customers = seen.tables[0]!;
    expect(customers.columns.map((c) => c.name)).toEqual(['id', 'name']);
    // An expression index over a denied column would quote it.
    expect(customers.uniqueIndexes.map((u) => u.name)).toEqual(['customers_pkey']);
    // A foreign key to a hidden table is gone; the one to a visible table stays.
    expect(seen.tables[1]!.foreignKeys.map((f) => f.name)).toEqual(['o_c']);
    expect(JSON.stringify(seen)).not.toMatch(/email|"(name|table)":"vault"/);
    // One filtering per catalog and policy: the same object for an equal policy of another user.
    expect(visibleSchema(SCHEMA, { ...p, user: 'other' })).toBe(seen);
    expect(policyKey(p)).toBe(policyKey({ ...p, user: 'other' }));
  });

  it('a denied key column drops the primary key and the foreign keys that point at it', () => {
    const p = policy({ deniedColumns: new Map([['public.customers', new Map([['id', 'defaults']])]]) });
    const seen = visibleSchema(SCHEMA, p);
    expect(seen.tables[0]!.primaryKey).toEqual([]);
    expect(seen.tables[1]!.foreignKeys.map((f) => f.name)).toEqual(['o_v']);
  });
});

describe('rowFilterSql', () => {
  const filtered = (expression: string, params: string[]) =>
    policy({ rowFilters: new Map([['public.orders', [{ expression, params, policy: 'team sales' }]]]) });

  it('writes the values in as quoted literals, quotes doubled', () => {
    expect(rowFilterSql(filtered('region = $1 AND owner = $2', ['EMEA', "O'Brien"]), SCHEMA.tables[1]!)).toBe(
      "(region = 'EMEA' AND owner = 'O''Brien')",
    );
  });

  it('leaves a $n inside a string, a quoted name or a comment alone, and reads $10 whole', () => {
    const params = Array.from({ length: 10 }, (_, i) => `v${i + 1}`);
    expect(rowFilterSql(filtered(`note <> '$1' AND "$2" = $10 -- $3`, params), SCHEMA.tables[1]!)).toBe(
      `(note <> '$1' AND "$2" = 'v10' -- $3\n)`.replace('\n', ''),
    );
  });

  it('a value that tries to close the quote stays inside it', () => {
    const sql = rowFilterSql(filtered('region = $1', ["x' OR '1'='1"]), SCHEMA.tables[1]!);
    expect(sql).toBe("(region = 'x'' OR ''1''=''1')");
  });

  it('fails closed on a parameter without a value, and is undefined for a table without filters', () => {
    expect(() => rowFilterSql(filtered('region = $2', ['EMEA']), SCHEMA.tables[1]!)).toThrow(/\$2/);
    expect(rowFilterSql(filtered('region = $1', ['EMEA']), SCHEMA.tables[0]!)).toBeUndefined();
  });
});

describe('withoutQuotedValues', () => {
  it('removes values PostgreSQL quotes, keeps the names it quotes', () => {
    expect(
      withoutQuotedValues('invalid input syntax for type integer: "bob@example.com" (SQLSTATE 22P02)'),
    ).toBe('invalid input syntax for type integer: "…" (SQLSTATE 22P02)');
    expect(withoutQuotedValues('value "99999999999" is out of range for type integer')).toBe(
      'value "…" is out of range for type integer',
    );
    expect(withoutQuotedValues('column "salry" does not exist')).toBe('column "salry" does not exist');
  });
});
