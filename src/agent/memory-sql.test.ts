/**
 * A memory is reported as applied only when its predicate is verified in the SQL; a
 * memory without SQL (a definition, or a preference that was never compiled) is recalled, not
 * applied.
 */
import { describe, expect, it } from 'vitest';
import { memoryFixture } from '../../test/support/memory-fixtures.js';
import type { MemoryKind } from '../core/memory.js';
import type { RecalledMemory } from '../memory/recall.js';
import { appliedMemories } from './memory-sql.js';

function recalled(
  id: string,
  kind: MemoryKind,
  text: string,
  sql: string | null,
  tables: string[] = [],
): RecalledMemory {
  return { memory: memoryFixture({ id, kind, text, sql, tables }), owner: 'user', why: 'similar' };
}

const INDIA = recalled(
  'p1',
  'preference',
  'Always show customers from India',
  "customers.country = 'India'",
  ['public.customers'],
);
const BIG = recalled('t1', 'term', 'Big order means total over 500', 'orders.total_amount > 500', [
  'public.orders',
]);
const CHURN = recalled('t2', 'term', 'Churned means no order in 90 days', null);
const PLAIN = recalled('p2', 'preference', 'Keep answers short', null);
const CUSTOMERS_PREF = recalled('p3', 'preference', 'Prefer the customers table', null, ['public.customers']);

describe('appliedMemories', () => {
  it('lists a memory whose predicate is in the statement’s filters', async () => {
    const applied = await appliedMemories(
      [INDIA, BIG],
      "SELECT count(*) FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = 'India' AND o.total_amount > 500",
    );
    expect(applied.map((m) => m.id)).toEqual(['p1', 't1']);
  });

  it('leaves out a memory whose predicate the statement does not apply (other constant, or absent)', async () => {
    const other = await appliedMemories([INDIA, BIG], "SELECT name FROM customers WHERE country = 'Chile'");
    expect(other).toEqual([]);
  });

  it('never lists a memory without SQL, even one on a table the statement reads (recalled, not applied)', async () => {
    const applied = await appliedMemories(
      [CHURN, PLAIN, CUSTOMERS_PREF, INDIA],
      "SELECT name FROM customers WHERE country = 'India'",
    );
    expect(applied.map((m) => m.id)).toEqual(['p1']);
  });

  it('lists nothing without a statement or for one that does not parse', async () => {
    expect(await appliedMemories([INDIA], null)).toEqual([]);
    expect(await appliedMemories([INDIA], 'SELECT FROM WHERE (')).toEqual([]);
  });
});
