import { beforeAll, describe, expect, it } from 'vitest';
import { loadReferenceParser, referencedTables } from './support/referenced-tables.js';

describe('referencedTables', () => {
  beforeAll(async () => {
    await loadReferenceParser();
  });

  it('lists relations of joins, subqueries and set operations once, without CTE names', () => {
    const sql = `WITH recent AS (SELECT * FROM orders WHERE created > now() - interval '7 days')
      SELECT c.name FROM customers c JOIN recent r ON r.customer_id = c.id
      WHERE c.id IN (SELECT customer_id FROM consumer_div.payments) UNION SELECT name FROM "Odd Table"; SELECT 1 FROM orders`;
    expect(referencedTables(sql)).toEqual([
      { schema: null, name: 'orders' },
      { schema: null, name: 'customers' },
      { schema: 'consumer_div', name: 'payments' },
      { schema: null, name: 'Odd Table' },
    ]);
  });

  it('keeps a schema-qualified relation that shares a CTE name, and rejects text that does not parse', () => {
    expect(referencedTables('WITH t AS (SELECT 1) SELECT * FROM t, public.t')).toEqual([
      { schema: 'public', name: 't' },
    ]);
    expect(() => referencedTables('SELEC nothing')).toThrow();
  });
});
