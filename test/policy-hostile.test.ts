/**
 * The hostile corpus of the data policy (`test/fixtures/policy-hostile.jsonl`): statements that
 * try to reach a denied column or a filtered row through subqueries, CTEs (recursive ones too),
 * UNION, LATERAL, window functions, whole-row values, casts, JSON functions, aggregates with
 * FILTER, EXISTS probes, ORDER BY / GROUP BY, views, child tables, functions, statistics catalogs,
 * quoted and case-varied names and search-path tricks. Each runs on the one SQL path
 * (`runCheckedSql`) through the production chain (policy decorator over the function policy) as
 * the user sam, and must be refused (`expect: refused`), or return exactly what the same
 * statement returns on a database where the denied data was removed (`expect: rows`), or either
 * of those or a database error (`expect: safe`). No outcome may hold a hidden value.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { policyCatalogCache, withDataPolicy } from '../src/databases/policed.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { CORPUS, FULL_SQL, leaks, outcomeOf, REDUCED_SQL, samPolicy } from './fixtures/policy-hostile.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';

/** Rows in a canonical order (statements without ORDER BY may return any order). */
function sorted(rows: unknown[][]): string[] {
  return rows.map((row) => JSON.stringify(row)).sort();
}

describe.each(ENGINES)('data policy hostile corpus on %s', (engine) => {
  let full: TestDatabase;
  let reduced: TestDatabase;
  let policed: DatabaseConnector;

  beforeAll(async () => {
    [full, reduced] = await Promise.all([
      createTestDatabase(engine, 'policy_full'),
      createTestDatabase(engine, 'policy_reduced'),
    ]);
    await full.exec(FULL_SQL);
    await reduced.exec(REDUCED_SQL);
    const checked = withFunctionPolicy(full.connector);
    policed = withDataPolicy(checked, samPolicy(), policyCatalogCache(checked));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([full?.dispose(), reduced?.dispose()]);
  });

  it('holds at least 60 hostile statements', () => {
    expect(CORPUS.length).toBeGreaterThanOrEqual(60);
    expect(new Set(CORPUS.map((e) => e.id)).size).toBe(CORPUS.length);
  });

  it.each(CORPUS)('$id: $expect', async (entry) => {
    const outcome = await outcomeOf(policed, entry.sql);
    const label = `${entry.id}: ${entry.sql}\n${JSON.stringify(outcome)}`;
    expect(leaks(JSON.stringify(outcome)), label).toBe(false);
    if (entry.expect === 'refused') {
      expect(outcome.kind, label).toBe('refused');
      return;
    }
    if (entry.expect === 'rows') expect(outcome.kind, label).toBe('rows');
    if (outcome.kind !== 'rows') return;
    const expected = await outcomeOf(reduced.connector, entry.sql);
    expect(expected.kind, `${label}\nreduced: ${JSON.stringify(expected)}`).toBe('rows');
    if (expected.kind !== 'rows') return;
    expect(outcome.columns, label).toEqual(expected.columns);
    expect(sorted(outcome.rows), label).toEqual(sorted(expected.rows));
  });

  it('names the policy in a refusal, as policy_refused', async () => {
    const outcome = await outcomeOf(policed, 'SELECT salary FROM employees');
    expect(outcome).toMatchObject({ kind: 'refused', code: 'policy_refused', rule: 'policy-column' });
    expect(outcome.kind === 'refused' && outcome.message).toMatch(/team sales/);
  });

  it('shows the user only the permitted schema', async () => {
    const schema = await policed.introspect();
    const names = schema.tables.map((t) => `${t.schema}.${t.name}`);
    expect(names).toContain('public.orders');
    expect(names).not.toContain('public.order_totals');
    expect(names).not.toContain('public.pay_stats');
    const employees = schema.tables.find((t) => t.name === 'employees')!;
    expect(employees.columns.map((c) => c.name)).toEqual(['id', 'name', 'region', 'manager_id']);
    expect(schema.tables.find((t) => t.name === 'orders')!.estimatedRows).toBeNull();
  });
});
