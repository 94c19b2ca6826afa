/**
 * Property: any allowed query over the policed shop returns, for the user sam, exactly the rows
 * and columns the same query returns on a database where the denied data was removed (other
 * regions' rows deleted, denied columns dropped). Queries are drawn at random from a small
 * grammar over the permitted columns: projections (`*` included), joins, filters whose literals
 * include hidden rows' values, aggregates with GROUP BY, and wrappings in a subquery, a CTE,
 * EXISTS, UNION and LATERAL.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { policyCatalogCache, withDataPolicy } from '../src/databases/policed.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { FULL_SQL, leaks, outcomeOf, REDUCED_SQL, samPolicy } from './fixtures/policy-hostile.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';

/** Permitted columns of each table, with literals to compare them with (hidden rows' included). */
const TABLES: Record<string, Record<string, string[]>> = {
  orders: {
    id: ['10', '20', '21'],
    customer_id: ['1', '3'],
    region: [`'EMEA'`, `'APAC'`],
    amount: ['50', '100', '9000'],
    note: [`'emea first'`, `'zz-apac secret one'`],
  },
  customers: { id: ['1', '3'], name: [`'Anna'`, `'zz-Chen'`], region: [`'EMEA'`, `'APAC'`] },
  employees: { id: ['1', '3'], name: [`'Eva'`, `'zz-Gus'`], region: [`'APAC'`], manager_id: ['1', '3'] },
  products: { id: ['1', '2'], name: [`'chair'`], price: ['100'] },
};

const table = fc.constantFrom(...Object.keys(TABLES));

/** `SELECT … FROM t [WHERE …] [GROUP BY …]` over one table, aliased `t`. */
const simple = table.chain((name) => {
  const columns = Object.keys(TABLES[name]!);
  const condition = fc
    .constantFrom(...columns)
    .chain((column) =>
      fc
        .tuple(fc.constantFrom('=', '<>', '<', '>='), fc.constantFrom(...TABLES[name]![column]!))
        .map(([op, literal]) => `t.${column} ${op} ${literal}`),
    );
  const projection = fc.oneof(
    fc.constant('*'),
    fc.constant('t.*'),
    fc.subarray(columns, { minLength: 1 }).map((cols) => cols.map((c) => `t.${c}`).join(', ')),
    fc.constant('count(*) AS n'),
  );
  return fc
    .record({
      projection,
      where: fc.option(fc.array(condition, { minLength: 1, maxLength: 2 }), { nil: undefined }),
      or: fc.boolean(),
      group: fc.option(fc.constantFrom(...columns), { nil: undefined }),
    })
    .map(({ projection, where, or, group }) => {
      const filter = where ? ` WHERE ${where.join(or ? ' OR ' : ' AND ')}` : '';
      if (group) return `SELECT t.${group}, count(*) AS n FROM ${name} t${filter} GROUP BY t.${group}`;
      return `SELECT ${projection} FROM ${name} t${filter}`;
    });
});

/** A simple query, or one wrapped in a construct that reads it differently. */
const query = fc.oneof(
  simple,
  simple.map((q) => `SELECT count(*) AS n FROM (${q}) s`),
  simple.map((q) => `WITH s AS (${q}) SELECT * FROM s`),
  simple.map((q) => `SELECT EXISTS (${q}) AS e`),
  fc.tuple(table, table).map(([a, b]) => `SELECT id FROM ${a} UNION SELECT id FROM ${b}`),
  fc.constant('SELECT o.id, c.name FROM orders o JOIN customers c ON c.id = o.customer_id'),
  fc.constant(
    'SELECT c.name, x.n FROM customers c, LATERAL (SELECT count(*) AS n FROM orders o WHERE o.customer_id = c.id) x',
  ),
  fc.constant('SELECT e.name, m.name FROM employees e LEFT JOIN employees m ON m.id = e.manager_id'),
);

describe('data policy property (PGlite)', () => {
  let full: TestDatabase;
  let reduced: TestDatabase;
  let policed: DatabaseConnector;

  beforeAll(async () => {
    [full, reduced] = await Promise.all([
      createTestDatabase('pglite', 'policy_prop_full'),
      createTestDatabase('pglite', 'policy_prop_reduced'),
    ]);
    await full.exec(FULL_SQL);
    await reduced.exec(REDUCED_SQL);
    const checked = withFunctionPolicy(full.connector);
    policed = withDataPolicy(checked, samPolicy(), policyCatalogCache(checked));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([full?.dispose(), reduced?.dispose()]);
  });

  it('returns exactly what the database without the denied data returns', async () => {
    await fc.assert(
      fc.asyncProperty(query, async (sql) => {
        const got = await outcomeOf(policed, sql);
        const want = await outcomeOf(reduced.connector, sql);
        expect(leaks(JSON.stringify(got)), `${sql}\n${JSON.stringify(got)}`).toBe(false);
        expect(want.kind, `${sql}\nreduced: ${JSON.stringify(want)}`).toBe('rows');
        expect(got.kind, `${sql}\n${JSON.stringify(got)}`).toBe('rows');
        if (got.kind !== 'rows' || want.kind !== 'rows') return;
        expect(got.columns, sql).toEqual(want.columns);
        const sort = (rows: unknown[][]) => rows.map((r) => JSON.stringify(r)).sort();
        expect(sort(got.rows), sql).toEqual(sort(want.rows));
      }),
      { numRuns: 80, seed: 20261202 },
    );
  }, 240_000);
});
