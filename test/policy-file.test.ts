/**
 * The policy file: parsing (YAML and JSON), validation that fails closed, canonical names,
 * compiled row filters, merging one user's policy, the published JSON schema, and the source that
 * reloads the file and keeps the last valid version.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  canonicalColumn,
  canonicalTable,
  compileRowFilter,
  type PolicyDocument,
  parsePolicyText,
  policyJsonSchema,
} from '../src/policy/file.js';
import { effectivePolicy, UNREADABLE_FILTER, unreadableTables } from '../src/policy/resolve.js';
import { type PolicyEvent, PolicySource } from '../src/policy/source.js';
import { loadSqlParser } from '../src/sql/parse-tree.js';

const ISSUE_EXAMPLE = `
users:
  sam: { teams: [sales], attributes: { region: EMEA } }
teams:
  sales:
    tables: [public.orders, public.customers, public.employees]   # optional allow-list
    deny_columns: [public.employees.salary, public.customers.email]
    rows:
      public.orders: "region = :region"
defaults:
  rows_to_model: true
`;

beforeAll(async () => {
  await loadSqlParser();
});

function parse(text: string, format: 'yaml' | 'json' = 'yaml'): PolicyDocument {
  const out = parsePolicyText(text, format);
  if (!out.ok) throw new Error(JSON.stringify(out.problems));
  return out.document;
}

function problems(text: string, format: 'yaml' | 'json' = 'yaml'): string[] {
  const out = parsePolicyText(text, format);
  expect(out.ok).toBe(false);
  return out.ok ? [] : out.problems.map((p) => `${p.path}: ${p.message}`);
}

describe('parsing and validation', () => {
  it('reads the example of the issue into canonical names and compiled filters', () => {
    const doc = parse(ISSUE_EXAMPLE);
    const sales = doc.teams.get('sales')!;
    expect(sales.tables).toEqual(['public.orders', 'public.customers', 'public.employees']);
    expect(Object.fromEntries(sales.denyColumns)).toEqual({
      'public.employees': ['salary'],
      'public.customers': ['email'],
    });
    expect(sales.rows.get('public.orders')).toEqual({
      expression: 'region = $1',
      attributes: ['region'],
      written: 'region = :region',
    });
    expect(doc.users.get('sam')).toMatchObject({ teams: ['sales'], attributes: { region: 'EMEA' } });
    expect(doc.defaults.rowsToModel).toBe(true);
  });

  it('reads the same policy from JSON', () => {
    const json = JSON.stringify({
      users: { sam: { teams: ['sales'], attributes: { region: 'EMEA' } } },
      teams: { sales: { rows: { 'public.orders': 'region = :region' } } },
    });
    expect(parse(json, 'json').teams.get('sales')!.rows.get('public.orders')!.expression).toBe('region = $1');
  });

  it('folds bare names, keeps quoted ones and qualifies with public', () => {
    expect(canonicalTable('Orders')).toBe('public.orders');
    expect(canonicalTable('Sales.Orders')).toBe('sales.orders');
    expect(canonicalTable('public."Orders"')).toBe('public.Orders');
    expect(canonicalTable('"my.schema"."Odd ""x"""')).toBe('my.schema.Odd "x"');
    expect(canonicalColumn('Employees.Salary')).toEqual({ table: 'public.employees', column: 'salary' });
    expect(canonicalColumn('hr."Staff"."Salary"')).toEqual({ table: 'hr.Staff', column: 'Salary' });
  });

  it('refuses unknown keys (a typo must not silently drop a rule)', () => {
    expect(problems('teams:\n  sales:\n    deny_column: [public.employees.salary]\n').join()).toMatch(
      /teams\.sales.*deny_column/,
    );
    expect(problems('defaults:\n  rows_to_modle: false\n').join()).toMatch(/rows_to_modle/);
    expect(problems('user:\n  sam: {}\n').join()).toMatch(/user/);
  });

  it('refuses a team that does not exist, with the closest name', () => {
    expect(problems('users:\n  sam: { teams: [sale] }\nteams:\n  sales: {}\n')).toEqual([
      'users.sam.teams.0: no team sale in this file (did you mean sales?)',
    ]);
  });

  it('refuses two entries for one user and a key written twice', () => {
    expect(problems('users:\n  sam: {}\n  Sam: {}\n').join()).toMatch(/users\.Sam: the same user as sam/);
    expect(problems('users:\n  sam: {}\n  sam: {}\n').join()).toMatch(/YAML/);
  });

  it('refuses bad names, bad values and bad YAML or JSON with a place', () => {
    expect(problems('teams:\n  t: { deny_columns: [salary] }\n').join()).toMatch(
      /teams\.t\.deny_columns\.0: expected schema\.table\.column/,
    );
    expect(problems('teams:\n  t: { tables: ["a b"] }\n').join()).toMatch(/teams\.t\.tables\.0/);
    expect(problems('defaults: { rows_to_model: "no" }\n').join()).toMatch(/defaults\.rows_to_model/);
    expect(problems('teams: [\n').join()).toMatch(/not valid YAML/);
    expect(problems('{"teams": ', 'json').join()).toMatch(/not valid JSON/);
    expect(problems('users:\n  sam: { attributes: { user: bob } }\n').join()).toMatch(
      /attributes\.user: the attribute user is always the user name/,
    );
  });

  it('takes an empty file as a policy that restricts nothing', () => {
    const doc = parse('');
    expect(doc.users.size + doc.teams.size).toBe(0);
    expect(effectivePolicy(doc, 'sam').sources).toEqual(['defaults']);
  });
});

describe('row filters', () => {
  it('numbers each attribute once, in order of first appearance', () => {
    const out = compileRowFilter("(region = :region OR owner = :user) AND :region <> ''");
    expect(out).toEqual({
      expression: "(region = $1 OR owner = $2) AND $1 <> ''",
      attributes: ['region', 'user'],
      written: "(region = :region OR owner = :user) AND :region <> ''",
    });
  });

  it('leaves casts, string literals, quoted names and non-ASCII text alone', () => {
    const out = compileRowFilter(`"ré:gion" = 'a:b' AND created::date > :since AND city = 'München'`);
    expect(out).toMatchObject({
      expression: `"ré:gion" = 'a:b' AND created::date > $1 AND city = 'München'`,
      attributes: ['since'],
    });
  });

  it.each([
    ['true) UNION SELECT salary FROM employees WHERE (true', /one boolean expression/],
    ['true); DROP TABLE orders; SELECT (1', /one boolean expression|not a SQL expression/],
    ['true) ORDER BY (1', /one boolean expression/],
    ['true) GROUP BY (1', /one boolean expression/],
    ['region = :region -- and the rest', /not a SQL expression/],
    ['region = $1', /write the user's attributes as :name, not \$1/],
    ['region = ', /not a SQL expression/],
  ])('refuses %s', (text, why) => {
    const out = compileRowFilter(text);
    expect('problem' in out && out.problem).toMatch(why);
  });

  it('accepts a subquery inside the expression', () => {
    expect(
      compileRowFilter('region IN (SELECT r.region FROM public.regions r WHERE r.owner = :user)'),
    ).toMatchObject({ attributes: ['user'] });
  });

  it('reports a bad filter at its place in the file', () => {
    expect(
      problems('teams:\n  t:\n    rows:\n      orders: "true) UNION SELECT 1 WHERE (true"\n')[0],
    ).toMatch(/^teams\.t\.rows\.orders: must be one boolean expression/);
  });
});

describe('effective policy of one user', () => {
  const doc = () =>
    parse(`
users:
  sam: { teams: [sales], attributes: { region: EMEA } }
  ana: { teams: [sales, hr], attributes: { region: APAC, level: 3 }, deny_columns: [public.orders.margin] }
  lee: { attributes: { region: EMEA } }
  pia: { teams: [sales] }
  zoe: { teams: [open], rows_to_model: true }
teams:
  sales:
    tables: [public.orders, public.customers, public.employees]
    deny_columns: [public.employees.salary, public.customers.email]
    rows: { public.orders: "region = :region" }
  hr:
    tables: [public.employees, public.orders]
    deny_columns: [public.employees.ssn]
    rows: { public.orders: "level <= :level" }
    rows_to_model: false
  open: { rows_to_model: false }
defaults:
  tables: [public.products]
  rows_to_model: false
`);

  it("gives a listed user their teams' rules with attributes bound", () => {
    const sam = effectivePolicy(doc(), 'sam');
    expect(sam.sources).toEqual(['user sam', 'team sales', 'defaults']);
    expect([...sam.tables!]).toEqual(['public.orders', 'public.customers', 'public.employees']);
    expect(sam.deniedColumns.get('public.employees')?.get('salary')).toBe('team sales');
    expect(sam.rowFilters.get('public.orders')).toEqual([
      { expression: 'region = $1', params: ['EMEA'], policy: 'team sales' },
    ]);
    // Neither the user nor the team says: the defaults' rows_to_model applies.
    expect(sam.rowsToModel).toBe(false);
    expect(sam.admin).toBe(false);
  });

  it('merges several teams failing closed: allow-lists intersect, denials add up, filters AND', () => {
    const ana = effectivePolicy(doc(), 'ana', { admin: true });
    expect(ana.sources).toEqual(['user ana', 'team sales', 'team hr']);
    expect([...ana.tables!].sort()).toEqual(['public.employees', 'public.orders']);
    expect(Object.fromEntries([...ana.deniedColumns].map(([t, m]) => [t, Object.fromEntries(m)]))).toEqual({
      'public.orders': { margin: 'user ana' },
      'public.employees': { salary: 'team sales', ssn: 'team hr' },
      'public.customers': { email: 'team sales' },
    });
    expect(ana.rowFilters.get('public.orders')).toEqual([
      { expression: 'region = $1', params: ['APAC'], policy: 'team sales' },
      { expression: 'level <= $1', params: ['3'], policy: 'team hr' },
    ]);
    expect(ana.rowsToModel).toBe(false); // one team says false
    expect(ana.admin).toBe(true);
  });

  it("a user's own rows_to_model wins over their teams'", () => {
    expect(effectivePolicy(doc(), 'zoe').rowsToModel).toBe(true);
  });

  it('an entry without teams still gets the defaults (an entry never loosens)', () => {
    const lee = effectivePolicy(doc(), 'lee');
    expect(lee.sources).toEqual(['user lee', 'defaults']);
    expect([...lee.tables!]).toEqual(['public.products']);
  });

  it('a user without an entry gets their registered team when the file has it, else the defaults', () => {
    expect(effectivePolicy(doc(), 'max', { team: 'hr' }).sources).toEqual(['team hr']);
    expect(effectivePolicy(doc(), 'max', { team: 'hr' }).rowFilters.get('public.orders')).toEqual([
      // max has no attributes: the table is unreadable, not unfiltered.
      { expression: UNREADABLE_FILTER, params: [], policy: 'team hr (attribute level not set for user max)' },
    ]);
    const other = effectivePolicy(doc(), 'max', { team: 'marketing' });
    expect(other.sources).toEqual(['defaults']);
    expect([...other.tables!]).toEqual(['public.products']);
    expect(other.rowsToModel).toBe(false);
  });

  it('the file wins over the registered team for a listed user', () => {
    expect(effectivePolicy(doc(), 'sam', { team: 'hr' }).sources).toEqual([
      'user sam',
      'team sales',
      'defaults',
    ]);
  });

  it('finds a listed user whatever the case of the name', () => {
    expect(effectivePolicy(doc(), 'SAM').sources[0]).toBe('user sam');
  });

  it('makes a table unreadable when the user lacks a filter attribute (fail closed)', () => {
    const pia = effectivePolicy(doc(), 'pia');
    expect(pia.rowFilters.get('public.orders')).toEqual([
      { expression: 'false', params: [], policy: 'team sales (attribute region not set for user pia)' },
    ]);
    expect(unreadableTables(pia)).toEqual(
      new Map([['public.orders', 'team sales (attribute region not set for user pia)']]),
    );
    expect(unreadableTables(effectivePolicy(doc(), 'sam')).size).toBe(0);
  });

  it('binds :user to the user name', () => {
    const d = parse('defaults:\n  rows: { public.orders: "owner = :user" }\n');
    expect(effectivePolicy(d, "o'brien").rowFilters.get('public.orders')).toEqual([
      { expression: 'owner = $1', params: ["o'brien"], policy: 'defaults' },
    ]);
  });
});

describe('published JSON schema', () => {
  it('docs/policy.schema.json is what npm run docs:policy-schema writes', () => {
    const published = readFileSync(new URL('../docs/policy.schema.json', import.meta.url), 'utf8');
    expect(JSON.parse(published)).toEqual(policyJsonSchema());
  });

  it('describes unknown keys as not allowed', () => {
    const schema = policyJsonSchema() as { additionalProperties?: unknown };
    expect(schema.additionalProperties).toBe(false);
  });
});

describe('policy source', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-policy-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses everyone while the file has never been valid, and recovers once it is fixed', async () => {
    const path = join(dir, 'never.yaml');
    const source = new PolicySource(path);
    await expect(source.current()).rejects.toMatchObject({ code: 'config', message: /no such file/ });
    expect(source.status()).toMatchObject({ state: 'invalid' });
    writeFileSync(path, 'teams: { sales: { deny_column: [] } }\n');
    await expect(source.current()).rejects.toMatchObject({ code: 'config', message: /deny_column/ });
    writeFileSync(path, ISSUE_EXAMPLE);
    expect((await source.current()).teams.has('sales')).toBe(true);
    expect(source.status()).toMatchObject({ state: 'valid', users: 1, teams: 1, problems: [] });
  });

  it('keeps the last valid version when a change is invalid, and reports it', async () => {
    const path = join(dir, 'kept.yaml');
    writeFileSync(path, ISSUE_EXAMPLE);
    const events: PolicyEvent[] = [];
    const source = new PolicySource(path, (e) => events.push(e));
    const first = await source.current();
    writeFileSync(path, 'users:\n  sam: { teams: [sale] }\nteams: { sales: {} }\n');
    await source.reload();
    expect(await source.current()).toBe(first);
    expect(source.status()).toMatchObject({
      state: 'invalid-kept',
      problems: [{ path: 'users.sam.teams.0', message: 'no team sale in this file (did you mean sales?)' }],
    });
    expect(events.map((e) => e.kind)).toEqual(['loaded', 'invalid']);
    expect(events[1]!.message).toMatch(/stays in force/);
    // Unwatched, a use after the file changed reads it again.
    writeFileSync(path, 'users:\n  ana: { teams: [sales] }\nteams: { sales: {} }\n');
    expect([...(await source.current()).users.keys()]).toEqual(['ana']);
    expect(source.status().state).toBe('valid');
  });

  it('reloads by itself when the file is replaced on disk', async () => {
    const path = join(dir, 'watched.json');
    writeFileSync(path, JSON.stringify({ teams: { a: {} } }));
    const events: PolicyEvent[] = [];
    const source = new PolicySource(path, (e) => events.push(e));
    await source.current();
    source.watch();
    try {
      // Written beside it and renamed over it, as editors and git do.
      writeFileSync(`${path}.tmp`, JSON.stringify({ teams: { a: {}, b: {} } }));
      const { renameSync } = await import('node:fs');
      renameSync(`${path}.tmp`, path);
      await expect.poll(() => source.status().teams, { timeout: 5000 }).toBe(2);
      expect(events.at(-1)).toMatchObject({
        kind: 'reloaded',
        message: /reloaded: 0 user\(s\), 2 team\(s\)/,
      });
    } finally {
      source.close();
    }
  });
});

describe('export --postgres, pure', () => {
  it('writes a hostile attribute value as one quoted literal, and a hostile user name as one quoted role', async () => {
    const { exportPostgres } = await import('../src/app/policy.js');
    const { parseStatements } = await import('../src/sql/parse-tree.js');
    const doc = parse(`
users:
  'eve"; DROP ROLE x; --': { teams: [t], attributes: { region: "x'); DROP TABLE orders; --" } }
teams:
  t: { rows: { orders: "region = :region" } }
`);
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
    const sql = exportPostgres(
      doc,
      {
        dialect: 'postgres',
        database: 'shop',
        serverVersion: '18',
        schemas: ['public'],
        tables: [
          {
            schema: 'public',
            name: 'orders',
            kind: 'table',
            comment: null,
            estimatedRows: null,
            columns: [column('id', 1), column('region', 2)],
            primaryKey: [],
            foreignKeys: [],
            uniqueIndexes: [],
          },
        ],
      },
      'policy.yaml',
    );
    expect(sql).toContain(`USING ((region = 'x''); DROP TABLE orders; --'))`);
    const kinds = new Set(parseStatements(sql).map((s) => Object.keys(s)[0]));
    // Only the statements the export means to write: no DROP TABLE or DROP ROLE got through.
    expect([...kinds].sort()).toEqual([
      'AlterTableStmt',
      'CreatePolicyStmt',
      'DropStmt',
      'GrantStmt',
      'TransactionStmt',
    ]);
    const drops = parseStatements(sql).filter((s) => 'DropStmt' in s);
    expect(drops.every((s) => JSON.stringify(s).includes('OBJECT_POLICY'))).toBe(true);
  });
});
