import { describe, expect, it } from 'vitest';
import type { Column, Schema, Table } from '../core/schema.js';
import { qualifiedName, quoteIdent, renderSchema, renderTable } from './render.js';

function column(name: string, type: string, extra: Partial<Column> = {}): Column {
  return {
    name,
    position: 0,
    type,
    domainBaseType: null,
    enumValues: null,
    nullable: true,
    default: null,
    comment: null,
    ...extra,
  };
}

function relation(name: string, columns: Column[], extra: Partial<Table> = {}): Table {
  return {
    schema: 'public',
    name,
    kind: 'table',
    comment: null,
    estimatedRows: null,
    columns,
    primaryKey: [],
    foreignKeys: [],
    uniqueIndexes: [],
    ...extra,
  };
}

describe('quoteIdent', () => {
  it.each([
    ['orders', 'orders'],
    ['_private', '_private'],
    ['price$usd', 'price$usd'],
    ['order_2024', 'order_2024'],
    ['Order Date', '"Order Date"'],
    ['CustomerNotes', '"CustomerNotes"'],
    ['2024_sales', '"2024_sales"'],
    ['user', '"user"'],
    ['order', '"order"'],
    ['select', '"select"'],
    ['time', '"time"'],
    ['left', '"left"'],
    ['a"b', '"a""b"'],
    ['', '""'],
    ['naïve', '"naïve"'],
    ['semi;colon', '"semi;colon"'],
    ['$cost', '"$cost"'],
  ])('%s → %s', (name, expected) => {
    expect(quoteIdent(name)).toBe(expected);
  });

  it('leaves unreserved keywords alone', () => {
    for (const word of ['name', 'type', 'status', 'date', 'text', 'comment', 'action', 'year']) {
      expect(quoteIdent(word)).toBe(word);
    }
  });
});

describe('qualifiedName', () => {
  it('omits public and quotes both parts otherwise', () => {
    expect(qualifiedName({ schema: 'public', name: 'orders' })).toBe('orders');
    expect(qualifiedName({ schema: 'public', name: 'Order' })).toBe('"Order"');
    expect(qualifiedName({ schema: 'consumer_div', name: 'users' })).toBe('consumer_div.users');
    expect(qualifiedName({ schema: 'Sales Dept', name: 'user' })).toBe('"Sales Dept"."user"');
  });
});

describe('renderTable', () => {
  const orders = relation(
    'orders',
    [
      column('id', 'integer'),
      column('customer_id', 'integer'),
      column('status', 'order_status', { enumValues: ['pending', 'shipped', 'delivered'] }),
      column('total_amount', 'numeric(12,2)'),
      column('Order Date', 'date'),
    ],
    {
      comment: 'Orders placed by customers',
      primaryKey: ['id'],
      foreignKeys: [
        {
          name: 'fk',
          columns: ['customer_id'],
          references: { schema: 'public', table: 'customers', columns: ['id'] },
        },
      ],
      uniqueIndexes: [{ name: 'orders_pkey', columns: ['id'], primary: true }],
    },
  );

  it('renders the documented example', () => {
    expect(renderTable(orders)).toBe(
      "orders(id integer PK, customer_id integer FK→customers.id, status order_status['pending','shipped','delivered'], " +
        'total_amount numeric(12,2), "Order Date" date) -- Orders placed by customers',
    );
  });

  it('drops comments on request', () => {
    expect(renderTable(orders, { includeComments: false })).not.toContain('--');
  });

  it('shows composite keys, unique constraints, domains and kinds', () => {
    const lines = relation(
      'order_lines',
      [
        column('ono', 'bigint'),
        column('rc', 'character(2)'),
        column('sku', 'text'),
        column('email', 'email', {
          domainBaseType: 'text',
          comment: 'contact */ DROP TABLE x; /*\nsecond line',
        }),
      ],
      {
        schema: 'sales',
        kind: 'materialized_view',
        primaryKey: ['ono', 'sku'],
        foreignKeys: [
          {
            name: 'fk',
            columns: ['rc', 'ono'],
            references: { schema: 'sales', table: 'orders', columns: ['region', 'from'] },
          },
        ],
        uniqueIndexes: [
          { name: 'pk', columns: ['ono', 'sku'], primary: true },
          { name: 'u1', columns: ['email'], primary: false },
          { name: 'u2', columns: ['rc', 'sku'], primary: false },
          { name: 'u3', columns: ['lower(sku)'], primary: false },
        ],
        comment: 'multi\nline -- comment',
      },
    );
    expect(renderTable(lines)).toBe(
      'sales.order_lines(ono bigint, rc character(2), sku text, email email:text UNIQUE /* contact * / DROP TABLE x; / * second line */, ' +
        'PK(ono, sku), FK(rc, ono)→sales.orders(region, "from"), UNIQUE(rc, sku), UNIQUE(lower(sku))) [materialized view] -- multi line -- comment',
    );
  });

  it('bounds enum lists and comments', () => {
    const many = Array.from({ length: 60 }, (_, i) => `v${i}`);
    const text = renderTable(
      relation('t', [column('e', 'big_enum', { enumValues: [...many, "it's"] })], {
        comment: 'x'.repeat(500),
      }),
      { maxEnumValues: 3, maxCommentLength: 20 },
    );
    expect(text).toBe(`t(e big_enum['v0','v1','v2',…+58]) -- ${'x'.repeat(19)}…`);
    expect(renderTable(relation('t', [column('e', 'q', { enumValues: ["it's"] })]))).toBe("t(e q['it''s'])");
  });

  it('marks views and references tables outside public with their schema', () => {
    const view = relation('v', [column('id', 'integer')], {
      kind: 'view',
      foreignKeys: [],
    });
    expect(renderTable(view)).toBe('v(id integer) [view]');
    const notes = relation('CustomerNotes', [column('user', 'integer')], {
      foreignKeys: [
        { name: 'f', columns: ['user'], references: { schema: 'Crm', table: 'Users', columns: ['Id'] } },
      ],
    });
    expect(renderTable(notes)).toBe('"CustomerNotes"("user" integer FK→"Crm"."Users"."Id")');
  });
});

describe('renderSchema', () => {
  it('renders one line per relation in schema order', () => {
    const schema: Schema = {
      dialect: 'postgres',
      database: 'shop',
      serverVersion: '15.20',
      schemas: ['public'],
      tables: [relation('a', [column('x', 'integer')]), relation('b', [column('y', 'text')])],
    };
    expect(renderSchema(schema)).toBe('a(x integer)\nb(y text)');
  });
});
