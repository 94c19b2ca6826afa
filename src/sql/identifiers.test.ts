import { describe, expect, it } from 'vitest';
import type { Column, Schema, Table } from '../core/schema.js';
import { checkIdentifiers, closest } from './identifiers.js';

const column = (name: string, position: number): Column => ({
  name,
  position,
  type: 'text',
  domainBaseType: null,
  enumValues: null,
  nullable: true,
  default: null,
  comment: null,
});
const table = (schema: string, name: string, columns: string[]): Table => ({
  schema,
  name,
  kind: 'table',
  comment: null,
  estimatedRows: null,
  columns: columns.map(column),
  primaryKey: [],
  foreignKeys: [],
  uniqueIndexes: [],
});

const SCHEMA: Schema = {
  dialect: 'postgres',
  database: 'shop',
  serverVersion: '18.0',
  schemas: ['public', 'sales'],
  tables: [
    table('public', 'customers', ['id', 'name', 'country']),
    table('public', 'orders', ['id', 'customer_id', 'total_amount', 'status']),
    table('sales', 'Deals', ['id', 'Amount', 'customer_id']),
    table('sales', 'customers', ['id', 'vip']),
  ],
};

const unknown = async (sql: string) => (await checkIdentifiers(sql, SCHEMA)).unknown.map((u) => u.message);

describe('checkIdentifiers flags names that certainly do not exist', () => {
  it.each([
    [
      'SELECT contry FROM customers',
      'column contry does not exist in customers; did you mean customers.country?',
    ],
    [
      'SELECT c.contry FROM customers c',
      'column c.contry does not exist in customers; did you mean c.country?',
    ],
    ['SELECT x.name FROM customers c', 'table or alias x is not in the FROM clause; did you mean c?'],
    ['SELECT * FROM custmers', 'table custmers does not exist; did you mean customers or sales.customers?'],
    ['SELECT * FROM public.ordrs', 'table public.ordrs does not exist; did you mean orders?'],
    [
      'SELECT vip FROM customers',
      'column vip does not exist in customers; did you mean sales.customers.vip?',
    ],
    [
      'SELECT amount FROM sales."Deals"',
      'column amount does not exist in sales."Deals"; did you mean "Deals"."Amount"?',
    ],
    ['SELECT * FROM deals', 'table deals does not exist; did you mean sales."Deals"?'],
    [
      'WITH t(a, b) AS (SELECT id, name FROM customers) SELECT c FROM t',
      'column c does not exist; did you mean t.a or t.b?',
    ],
    [
      'SELECT s.n FROM (SELECT name AS nm FROM customers) s',
      'column s.n does not exist in s; did you mean s.nm?',
    ],
    [
      'SELECT id FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer = c.id)',
      'column o.customer does not exist in orders; did you mean o.customer_id?',
    ],
    [
      'SELECT id FROM customers UNION SELECT idd FROM orders',
      'column idd does not exist in orders; did you mean orders.id?',
    ],
    [
      'EXPLAIN SELECT totla_amount FROM orders',
      'column totla_amount does not exist in orders; did you mean orders.total_amount?',
    ],
    ['SELECT zzz_qqq FROM customers', 'column zzz_qqq does not exist in customers'],
  ])('%s', async (sql, message) => {
    expect(await unknown(sql)).toEqual([message]);
  });

  it('reports each unknown name once', async () => {
    expect(await unknown('SELECT contry FROM customers WHERE contry = 1 GROUP BY contry')).toHaveLength(1);
  });
});

describe('checkIdentifiers resolves what PostgreSQL resolves (no false alarms)', () => {
  it.each([
    'SELECT c.name, o.total_amount FROM customers c JOIN orders o ON o.customer_id = c.id',
    'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders WHERE orders.status = customers.name)',
    'WITH big AS (SELECT customer_id, sum(total_amount) AS s FROM orders GROUP BY 1) SELECT s, customer_id FROM big',
    'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT n FROM r',
    'SELECT country AS land, count(*) AS k FROM customers GROUP BY land ORDER BY k',
    'SELECT id FROM customers UNION SELECT id FROM orders ORDER BY id',
    'SELECT c FROM customers c',
    'SELECT c.* FROM customers c',
    'SELECT x.n FROM customers c, LATERAL (SELECT c.id AS n) x',
    'SELECT g FROM generate_series(1, 3) g',
    'SELECT g.n FROM generate_series(1, 3) AS g(n)',
    'SELECT anything FROM json_to_record($${}$$) AS r(anything int)',
    'SELECT whatever FROM customers, unnest(ARRAY[1]) WITH ORDINALITY',
    'SELECT relname, oid FROM pg_class',
    'SELECT table_name FROM information_schema.tables',
    'SELECT last_value FROM orders_id_seq',
    'SELECT * FROM elsewhere.things',
    'SELECT "Amount", vip FROM sales."Deals" d JOIN sales.customers sc ON sc.id = d.customer_id',
    'SELECT v.column1 FROM (VALUES (1)) v',
    'SELECT x, y FROM (VALUES (1, 2)) AS v(x, y)',
    'SELECT (o).id FROM (SELECT o FROM orders o) s',
    'SELECT j.id FROM (customers JOIN orders USING (id)) AS j',
    'SELECT count(*) FILTER (WHERE status = $$x$$) FROM orders',
    'SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY total_amount) FROM orders',
    'SELECT id, rank() OVER w FROM orders WINDOW w AS (PARTITION BY status ORDER BY total_amount)',
    'SELECT DISTINCT ON (customer_id) customer_id AS cid FROM orders ORDER BY customer_id',
    'SELECT 1 FROM customers WHERE customers.country = $$x$$',
    'SELECT public.customers.name FROM public.customers',
    'SELECT 1',
    'not sql at all',
    'SELECT 1; SELECT 2',
  ])('%s', async (sql) => {
    expect(await checkIdentifiers(sql, SCHEMA)).toEqual({ ok: true, unknown: [] });
  });
});

describe('closest', () => {
  it('ranks by edit distance and containment, within a bound', () => {
    const pool = ['country', 'county', 'customer_id', 'id'].map((key) => ({ key, text: key }));
    expect(closest('contry', pool)).toEqual(['country', 'county']);
    expect(closest('customer', pool)).toEqual(['customer_id']);
    expect(closest('zzzzzz', pool)).toEqual([]);
    // A swapped pair of letters is one edit, within the bound of 1 for four letters.
    expect(closest('nmae', [{ key: 'name', text: 'name' }])).toEqual(['name']);
  });
});
