/**
 * The data policy's second look, on what the server resolved rather than on names: objects an
 * administrator created in the database must not carry a policed user past the policy. A view
 * over the statistics catalog, a SQL function reading a table outside the allow-list, an operator
 * over such a function, a function whose body spells a policed table with Unicode escapes: each
 * is refused, and no hidden value comes back. Views and functions that read nothing the policy
 * stops still run, and a row filter whose attribute the user lacks refuses instead of answering
 * "no rows".
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { policyCatalogCache, withDataPolicy } from '../src/databases/policed.js';
import type { EffectivePolicy } from '../src/policy/types.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { FULL_SQL, leaks, outcomeOf, samPolicy } from './fixtures/policy-hostile.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';

/** Objects a database administrator might have created, each a way around a name-based check. */
const EXTRA_SQL = `
CREATE VIEW column_stats AS
  SELECT tablename::text AS t, attname::text AS a, most_common_vals::text AS mcv FROM pg_stats
   WHERE schemaname = 'public';
CREATE FUNCTION peek(i int) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT note FROM public.orders WHERE id = i $$;
CREATE FUNCTION lookup_note(i int, j int) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT note FROM public.orders WHERE id = i $$;
CREATE OPERATOR ### (FUNCTION = lookup_note, LEFTARG = int, RIGHTARG = int);
CREATE FUNCTION peek_escaped(i int) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT note FROM public.U&"ord\\0065rs" WHERE id = i $$;
ANALYZE;
`;

/** hr may read employees only (an allow-list), nothing else. */
function hrPolicy(): EffectivePolicy {
  return {
    user: 'hana',
    sources: ['team hr'],
    tables: new Set(['public.employees']),
    deniedColumns: new Map(),
    rowFilters: new Map(),
    rowsToModel: true,
    admin: false,
  };
}

/** sam's policy with the region attribute missing (the resolver's unreadable filter). */
function noAttributePolicy(): EffectivePolicy {
  const unreadable = [
    { expression: 'false', params: [], policy: 'team sales (attribute region not set for user noattr)' },
  ];
  return { ...samPolicy(), user: 'noattr', rowFilters: new Map([['public.orders', unreadable]]) };
}

describe.each(ENGINES)('data policy on resolved objects on %s', (engine) => {
  let db: TestDatabase;
  let checked: DatabaseConnector;
  const as = (policy: EffectivePolicy) => withDataPolicy(checked, policy, policyCatalogCache(checked));

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'policy_analysis');
    await db.exec(FULL_SQL);
    await db.exec(EXTRA_SQL);
    checked = withFunctionPolicy(db.connector);
  }, 120_000);

  afterAll(async () => {
    await db?.dispose();
  });

  it.each([
    ['a view over pg_stats', 'SELECT * FROM column_stats', 'policy-view'],
    ['a SQL function reading a policed table', 'SELECT peek(30)', 'policy-function'],
    ['an operator over such a function', 'SELECT 30 ### 0', 'policy-function'],
    ['a function body with an escaped table name', 'SELECT peek_escaped(30)', 'policy-function'],
  ])('sam: %s is refused', async (_label, sql, rule) => {
    const outcome = await outcomeOf(as(samPolicy()), sql);
    expect(leaks(JSON.stringify(outcome)), JSON.stringify(outcome)).toBe(false);
    expect(outcome).toMatchObject({ kind: 'refused', code: 'policy_refused', rule });
  });

  it('the same statements run for a user without a policy (the objects work)', async () => {
    const outcome = await outcomeOf(checked, 'SELECT 30 ### 0 AS note');
    expect(outcome.kind).toBe('rows');
    expect(leaks(JSON.stringify(outcome))).toBe(true);
  });

  it('an allow-list is not bypassed through a function or a view', async () => {
    const hana = as(hrPolicy());
    for (const sql of ['SELECT peek(30)', 'SELECT * FROM column_stats', 'SELECT * FROM order_totals']) {
      const outcome = await outcomeOf(hana, sql);
      expect(leaks(JSON.stringify(outcome)), sql).toBe(false);
      expect(outcome.kind, `${sql}: ${JSON.stringify(outcome)}`).toBe('refused');
    }
    expect((await outcomeOf(hana, 'SELECT count(*) AS n FROM employees')).kind).toBe('rows');
  });

  it('a view reading nothing the policy stops still runs', async () => {
    const outcome = await outcomeOf(as(samPolicy()), 'SELECT count(*) AS n FROM product_list');
    expect(outcome.kind, JSON.stringify(outcome)).toBe('rows');
  });

  it('a table made unreadable by a missing attribute is refused, not empty', async () => {
    const outcome = await outcomeOf(as(noAttributePolicy()), 'SELECT count(*) AS n FROM orders');
    expect(outcome).toMatchObject({ kind: 'refused', code: 'policy_refused', rule: 'policy-attribute' });
    expect(outcome.kind === 'refused' && outcome.message).toMatch(/attribute region/);
  });
});
