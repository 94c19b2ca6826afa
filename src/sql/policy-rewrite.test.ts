import { beforeAll, describe, expect, it } from 'vitest';
import { type EffectivePolicy, unrestrictedPolicy } from '../policy/types.js';
import { loadSqlParser } from './parse-tree.js';
import { type PolicyCatalog, rewriteForPolicy } from './policy-rewrite.js';

function catalogOf(tables: Record<string, string[]>, searchPath = ['public']): PolicyCatalog {
  return {
    relations: new Map(
      Object.entries(tables).map(([key, columns]) => {
        const [schema, name] = key.split('.') as [string, string];
        return [key, { schema, name, kind: 'r', columns }];
      }),
    ),
    searchPath,
    definitions: new Map(),
    functions: [],
    parents: new Map(),
  };
}

const CATALOG = catalogOf({
  'public.orders': ['id', 'region', 'note'],
  'public.customers': ['id', 'name', 'email', 'region'],
  'pg_catalog.pg_class': ['oid', 'relname'],
});

function policy(overrides: Partial<EffectivePolicy> = {}): EffectivePolicy {
  return {
    ...unrestrictedPolicy('sam'),
    sources: ['team sales'],
    deniedColumns: new Map([['public.customers', new Map([['email', 'team sales']])]]),
    rowFilters: new Map([
      ['public.orders', [{ expression: 'region = $1', params: ['EMEA'], policy: 'team sales' }]],
    ]),
    ...overrides,
  };
}

beforeAll(() => loadSqlParser());

describe('rewriteForPolicy', () => {
  it('leaves a statement alone when the policy restricts nothing', () => {
    const sql = 'SELECT * FROM orders';
    expect(rewriteForPolicy(sql, unrestrictedPolicy('sam'), CATALOG)).toEqual({
      ok: true,
      sql,
      params: [],
      applied: [],
    });
  });

  it('binds one parameter per filter, however often its table is read, numbered in order', () => {
    const twoFilters = policy({
      rowFilters: new Map([
        [
          'public.orders',
          [{ expression: 'region = $1 AND note <> $2', params: ['EMEA', 'x'], policy: 'team sales' }],
        ],
        ['public.customers', [{ expression: 'region = $1', params: ['APAC'], policy: 'user sam' }]],
      ]),
    });
    const out = rewriteForPolicy(
      'SELECT a.id FROM orders a JOIN orders b ON a.id = b.id JOIN customers c ON c.id = a.id',
      twoFilters,
      CATALOG,
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.params).toEqual(['EMEA', 'x', 'APAC']);
    expect(out.sql.match(/region = \$1 AND note <> \$2/g)).toHaveLength(2);
    expect(out.sql).toContain('region = $3');
    expect(out.sql).not.toContain('"email"');
    expect(out.applied).toEqual([
      'rows of public.orders (team sales)',
      'columns of public.customers (team sales)',
      'rows of public.customers (user sam)',
    ]);
  });

  it('names the first offence by the order of its checks, then by the order of its walk', () => {
    const refusal = (sql: string): unknown => {
      const out = rewriteForPolicy(sql, policy(), CATALOG);
      return out.ok ? out : { rule: out.rule, reason: out.reason };
    };
    // Several offences at once: parameters before catalog descriptions before row counts before
    // denied columns and whole-row values, wherever each is written.
    expect(
      refusal("SELECT c.email, obj_description(1), pg_relation_size('orders'), $1 FROM customers c"),
    ).toMatchObject({ rule: 'policy-params' });
    expect(
      refusal("SELECT c.email, pg_relation_size('orders'), obj_description(1) FROM customers c, orders o"),
    ).toMatchObject({ rule: 'policy-catalog', reason: expect.stringContaining('obj_description') });
    expect(
      refusal("SELECT row_to_json(c), c.email, pg_relation_size('orders') FROM customers c, orders o"),
    ).toMatchObject({ rule: 'policy-statistics', reason: expect.stringContaining('pg_relation_size') });
    // Within one check, the node its walk meets first (the walk takes a list's last item first).
    expect(refusal('SELECT row_to_json(c), c.email FROM customers c')).toMatchObject({
      rule: 'policy-column',
    });
    expect(refusal('SELECT c.email, row_to_json(c) FROM customers c')).toMatchObject({
      rule: 'policy-whole-row',
    });
    expect(refusal('SELECT c.email FROM customers c WHERE c IS NOT NULL')).toMatchObject({
      rule: 'policy-whole-row',
    });
    expect(refusal('SELECT obj_description(1), NULL::customers FROM orders')).toMatchObject({
      rule: 'policy-catalog',
      reason: expect.stringContaining('row type of customers'),
    });
    expect(refusal('SELECT NULL::customers, obj_description(1) FROM orders')).toMatchObject({
      rule: 'policy-catalog',
      reason: expect.stringContaining('obj_description'),
    });
    // A column of a plain relation of the same name is not the denied one; a star at the top is
    // allowed, a star inside a call is a whole row.
    expect(rewriteForPolicy('SELECT o.note, c.* FROM orders o, customers c', policy(), CATALOG).ok).toBe(
      true,
    );
    expect(refusal('SELECT count(c.*) FROM customers c')).toMatchObject({ rule: 'policy-whole-row' });
  });

  it('projects the permitted columns without a filter fence when only columns are denied', () => {
    const out = rewriteForPolicy('SELECT * FROM customers', policy(), CATALOG);
    expect(out).toMatchObject({
      ok: true,
      sql: 'SELECT * FROM (SELECT "id", "name", "region" FROM "public"."customers") AS "customers"',
    });
  });

  it.each([
    ['true) OR (true', 'parentheses that escape'],
    ['region = $1 --', 'a comment'],
    ['region = $1; SELECT 1', 'a second statement'],
    ['region = $2', 'a parameter without a value'],
    ['region = (', 'text that does not parse'],
  ])('refuses a row filter with %s (%s)', (expression) => {
    const bad = policy({
      rowFilters: new Map([['public.orders', [{ expression, params: ['EMEA'], policy: 'team sales' }]]]),
    });
    expect(rewriteForPolicy('SELECT id FROM orders', bad, CATALOG)).toMatchObject({
      ok: false,
      rule: 'policy-filter',
      policy: 'team sales',
    });
  });

  it('refuses relations outside the allow-list, system catalogs included', () => {
    const listed = policy({ tables: new Set(['public.orders']) });
    expect(rewriteForPolicy('SELECT id FROM orders', listed, CATALOG).ok).toBe(true);
    for (const sql of ['SELECT * FROM customers', 'SELECT relname FROM pg_class'])
      expect(rewriteForPolicy(sql, listed, CATALOG)).toMatchObject({ ok: false, rule: 'policy-table' });
  });

  it('refuses an unqualified name that could mean a restricted table in another schema', () => {
    const two = catalogOf({ 'hr.orders': ['id'], 'public.orders': ['id', 'region', 'note'] }, [
      'hr',
      'public',
    ]);
    expect(rewriteForPolicy('SELECT id FROM orders', policy(), two)).toMatchObject({
      ok: false,
      rule: 'policy-ambiguous',
    });
    expect(rewriteForPolicy('SELECT id FROM hr.orders', policy(), two).ok).toBe(true);
  });

  it('rewrites a CTE body but not the CTE name that shadows the table', () => {
    const out = rewriteForPolicy(
      'WITH orders AS (SELECT id FROM public.orders) SELECT id FROM orders',
      policy(),
      CATALOG,
    );
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    expect(out.sql.match(/"public"\."orders"/g)).toHaveLength(1);
    expect(out.sql.endsWith('SELECT id FROM orders')).toBe(true);
  });

  it('refuses a view, child table or function that reads a restricted table', () => {
    const catalog: PolicyCatalog = {
      ...CATALOG,
      relations: new Map([
        ...CATALOG.relations,
        ['public.v', { schema: 'public', name: 'v', kind: 'v', columns: ['n'] }],
        ['public.kid', { schema: 'public', name: 'kid', kind: 'r', columns: ['id'] }],
      ]),
      definitions: new Map([['public.v', ' SELECT count(*) AS n FROM "ORDERS"']]),
      parents: new Map([['public.kid', ['public.orders']]]),
      functions: [{ schema: 'public', name: 'notes', body: 'select note from orders' }],
    };
    for (const [sql, rule] of [
      ['SELECT n FROM v', 'policy-view'],
      ['SELECT id FROM kid', 'policy-view'],
      ['SELECT notes()', 'policy-function'],
      ['SELECT x.notes FROM (VALUES (1)) x(a)', 'policy-function'],
    ])
      expect(rewriteForPolicy(sql!, policy(), catalog), sql).toMatchObject({ ok: false, rule });
  });
});
