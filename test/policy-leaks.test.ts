/**
 * Data policies, leaks closed: row counts of row-filtered tables (schema estimates, `pg_class`,
 * `pg_stat_*_tables`, size functions), views the user cannot read listed in their schema, row
 * filters that break out of their parentheses, and policies on a database that cannot enforce them
 * (MySQL/MariaDB). In-process CLI on a PGlite shop (analysed, so estimates exist); the MySQL part
 * uses a connector whose dialect is `mysql`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkPolicy } from '../src/app/policy.js';
import { readSchema, schemaText } from '../src/app/schema.js';
import { isSqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector, QueryResult } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { withDataPolicy } from '../src/databases/policed.js';
import { compileRowFilter, parsePolicyText } from '../src/policy/file.js';
import { effectivePolicy } from '../src/policy/resolve.js';
import { unrestrictedPolicy } from '../src/policy/types.js';
import { loadSqlParser } from '../src/sql/parse-tree.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { createTempMysqlDatabase, MYSQL_AVAILABLE, type TempMysqlDatabase } from './support/mysql-db.js';
import { freshPgliteDataDir } from './support/pglite-template.js';
import { tempDir } from './support/temp-dir.js';

/** Six customers, two of them in India; a view over customers, a view over the statistics. */
const SHOP = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, country text NOT NULL);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers(id), status text);
CREATE TABLE notes (id int PRIMARY KEY, body text);
INSERT INTO customers VALUES (1, 'Asha', 'India'), (2, 'Bob', 'United States'), (3, 'Chen', 'China'),
  (4, 'Dev', 'India'), (5, 'Eve', 'France'), (6, 'Finn', 'Ireland');
INSERT INTO orders VALUES (1, 1, 'delivered'), (2, 2, 'pending');
INSERT INTO notes VALUES (1, 'hello');
CREATE VIEW india_customers AS SELECT * FROM customers WHERE country = 'India';
CREATE VIEW note_titles AS SELECT id, left(body, 3) AS title FROM notes;
CREATE VIEW table_sizes AS SELECT relname, reltuples FROM pg_class;
ANALYZE;
`;

/** Sam sees the customers of India only; no allow-list. */
const POLICY = `
users:
  sam: { attributes: { country: India } }
defaults:
  rows:
    public.customers: "country = :country"
`;

let dir: string;
let url: string;
let policyPath: string;

beforeAll(async () => {
  await loadSqlParser();
  const data = freshPgliteDataDir('sqlrecall-leaks-');
  const db = new PGlite(data);
  await db.exec(SHOP);
  await db.close();
  url = `pglite:${data}`;
  dir = tempDir('sqlrecall-leaks-');
  policyPath = join(dir, 'policy.yaml');
  writeFileSync(policyPath, POLICY);
});

const env = () => ({
  DATABASE_URL: url,
  SQLRECALL_HOME: join(dir, 'home'),
  SQLRECALL_MEMORY: 'off',
  SQLRECALL_POLICY: policyPath,
});

async function schemaOf(user: string): Promise<Schema> {
  const run = await runCliInProcess(['schema', '--json', '--user', user], { env: env() });
  expect(run.stderr).toBe('');
  expect(run.code).toBe(0);
  return JSON.parse(run.stdout) as Schema;
}

describe('row counts of a row-filtered table', () => {
  it('the schema shows no estimate of the filtered table (other tables keep theirs)', async () => {
    const schema = await schemaOf('sam');
    const customers = schema.tables.find((t) => t.name === 'customers')!;
    expect(customers.estimatedRows).toBeNull();
    expect(schema.tables.find((t) => t.name === 'orders')!.estimatedRows).toBe(2);
    // Someone else under the same defaults: same rule (a missing attribute makes it unreadable).
    const run = await runCliInProcess(['schema', '--user', 'sam'], { env: env() });
    expect(run.stdout).not.toMatch(/~?6 rows/);
  });

  it.each([
    ["SELECT reltuples FROM pg_class WHERE relname = 'customers'", /pg_catalog\.pg_class counts the rows/],
    ["SELECT c.reltuples FROM pg_catalog.pg_class c WHERE c.relname = 'customers'", /pg_class/],
    ["SELECT n_live_tup FROM pg_stat_user_tables WHERE relname = 'customers'", /pg_stat_user_tables/],
    ["SELECT n_live_tup FROM pg_stat_all_tables WHERE relname = 'customers'", /pg_stat_all_tables/],
    ["SELECT pg_stat_get_live_tuples('customers'::regclass)", /pg_stat_get_live_tuples/],
    ["SELECT pg_relation_size('customers')", /pg_relation_size/],
    ['SELECT * FROM table_sizes', /table_sizes|pg_class/],
    [
      'SELECT tup_fetched, tup_returned FROM pg_stat_database WHERE datname = current_database()',
      /pg_stat_database/,
    ],
    ['SELECT sum(tup_returned) AS n FROM pg_catalog.pg_stat_database', /pg_stat_database/],
  ])('refuses %s (exit 3) and shows no count', async (sql) => {
    const run = await runCliInProcess(['sql', sql, '--user', 'sam', '--json'], { env: env() });
    expect(run.code).toBe(3);
    expect(`${run.stdout}${run.stderr}`).toMatch(/policy/i);
    expect(run.stdout).not.toMatch(/"6"|\b6\b/);
  });

  it('still answers from the rows the filter leaves, and reads pg_class where no row filter applies', async () => {
    const run = await runCliInProcess(
      ['sql', 'SELECT count(*) AS n FROM customers', '--user', 'sam', '--json'],
      {
        env: env(),
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/"2"|\b2\b/);
    const open = await runCliInProcess(
      ['sql', "SELECT reltuples::int AS n FROM pg_class WHERE relname = 'customers'", '--json'],
      { env: { ...env(), SQLRECALL_POLICY: '' } },
    );
    expect(open.code).toBe(0);
    expect(open.stdout).toMatch(/\b6\b/);
  });
});

describe('statement texts of other sessions', () => {
  it.each([
    'SELECT query FROM pg_stat_statements',
    'SELECT calls, rows FROM public.pg_stat_statements',
    'SELECT * FROM pg_stat_statements(true)',
    'SELECT * FROM pg_stat_statements_info',
    'SELECT query FROM pg_stat_activity',
    'SELECT count(*) AS n FROM PG_CATALOG.PG_STAT_ACTIVITY',
    'SELECT * FROM pg_stat_get_activity(NULL)',
    'WITH s AS (SELECT query FROM pg_stat_activity) SELECT * FROM s',
  ])('refuses %s under a data policy (exit 3), naming why', async (sql) => {
    const run = await runCliInProcess(['sql', sql, '--user', 'sam', '--json'], { env: env() });
    expect(run.code, run.stdout).toBe(3);
    expect(run.stdout).toMatch(/statements of other users/);
    expect(run.stdout).toMatch(/policy_refused/);
  });

  it('leaves the data as it was: the filtered count, and the statistics for a user without a policy', async () => {
    const sam = await runCliInProcess(
      ['sql', 'SELECT count(*) AS n FROM customers', '--user', 'sam', '--json'],
      {
        env: env(),
      },
    );
    expect(sam.code, sam.stderr).toBe(0);
    expect(sam.stdout).toMatch(/"2"|\b2\b/);
    const open = await runCliInProcess(
      [
        'sql',
        'SELECT tup_fetched >= 0 AS known FROM pg_stat_database WHERE datname = current_database()',
        '--json',
      ],
      { env: { ...env(), SQLRECALL_POLICY: '' } },
    );
    expect(open.code, open.stderr).toBe(0);
    expect(open.stdout).toMatch(/true/);
  });
});

describe('functions that describe the catalog', () => {
  const sql = (statement: string, extra: Record<string, string> = {}) =>
    runCliInProcess(['sql', statement, '--user', 'sam', '--json'], { env: { ...env(), ...extra } });

  it.each([
    ["SELECT col_description('customers'::regclass, 3) AS c", 'col_description'],
    ["SELECT obj_description('customers'::regclass) AS c", 'obj_description'],
    ["SELECT pg_get_viewdef('india_customers') AS d", 'pg_get_viewdef'],
    ["SELECT pg_get_viewdef('india_customers'::regclass, true) AS d", 'pg_get_viewdef'],
    ["SELECT to_regclass('public.notes') AS r", 'to_regclass'],
    ["SELECT has_table_privilege('notes', 'SELECT') AS p", 'has_table_privilege'],
    ["SELECT * FROM json_populate_record(null::customers, '{}')", 'json_populate_record'],
    ['SELECT (null::customers).country AS c', 'row type of customers'],
  ])('refuses %s for a policed user', async (statement, named) => {
    const run = await sql(statement);
    expect(run.code).toBe(3);
    expect(run.stdout + run.stderr).toContain(named);
  });

  it('keeps casts to built-in types, and the functions for a user without a policy', async () => {
    const cast = await sql("SELECT '7'::int AS n, 'x'::text AS t, now()::date IS NOT NULL AS d");
    expect(cast.code).toBe(0);
    const open = await sql("SELECT pg_get_viewdef('india_customers') AS d", { SQLRECALL_POLICY: '' });
    expect(open.code).toBe(0);
    expect(open.stdout).toContain('India');
  });
});

describe('views the user cannot read', () => {
  it('are not in the schema (JSON or text); views they can read are', async () => {
    const schema = await schemaOf('sam');
    const names = schema.tables.map((t) => t.name);
    expect(names).not.toContain('india_customers');
    expect(names).not.toContain('table_sizes');
    expect(names).toEqual(expect.arrayContaining(['customers', 'orders', 'notes', 'note_titles']));
    const text = await runCliInProcess(['schema', '--user', 'sam'], { env: env() });
    expect(text.stdout).not.toMatch(/india_customers|table_sizes/);
    expect(text.stdout).toMatch(/note_titles/);
  });

  it('are refused when read, and the refusal suggests none of them', async () => {
    const run = await runCliInProcess(['sql', 'SELECT * FROM india_customer', '--user', 'sam'], {
      env: env(),
    });
    expect(run.code).not.toBe(0);
    expect(`${run.stdout}${run.stderr}`).not.toMatch(/india_customers/);
    const direct = await runCliInProcess(['sql', 'SELECT * FROM india_customers', '--user', 'sam'], {
      env: env(),
    });
    expect(direct.code).toBe(3);
  });

  it('readSchema without catalog facts hides every view the policy does not name (fail closed)', async () => {
    const db = new PGlite(url.slice('pglite:'.length));
    try {
      const { createPgliteConnector } = await import('../src/databases/pglite/connector.js');
      const connector = createPgliteConnector({ pglite: db });
      const catalog = await connector.introspect();
      const doc = parsePolicyText(POLICY, 'yaml');
      if (!doc.ok) throw new Error('policy');
      const policy = effectivePolicy(doc.document, 'sam');
      const seen = await readSchema({ catalog: async () => catalog }, { policy });
      expect(seen.tables.map((t) => t.name).sort()).toEqual(['customers', 'notes', 'orders']);
      expect(schemaText(seen)).not.toMatch(/rows/);
    } finally {
      await db.close();
    }
  });
});

describe('row filters that break out of their parentheses', () => {
  it.each([
    ['region = :region) OR (true'],
    ['region = :region)) OR ((true'],
    ['(region = :region'],
    ['region = :region /* c */'],
  ])('refuses %s', (text) => {
    const out = compileRowFilter(text);
    expect('problem' in out && out.problem).toMatch(/one boolean expression|not a SQL expression/);
  });

  it('keeps what is one expression: OR inside parentheses, casts, brackets', () => {
    expect(compileRowFilter('(region = :region) OR (owner = :user)')).toMatchObject({
      expression: '(region = $1) OR (owner = $2)',
    });
    expect(compileRowFilter("tags[1] = :tag AND created::date > '2020-01-01'")).not.toHaveProperty('problem');
  });

  it('makes the file invalid, naming the table', () => {
    const out = parsePolicyText(
      'teams:\n  t:\n    rows:\n      public.orders: "region = :region) OR (true"\n',
      'yaml',
    );
    expect(out.ok).toBe(false);
    expect(!out.ok && out.problems[0]!.path).toBe('teams.t.rows.public.orders');
  });

  it('refuses a filter whose subquery reads a table the file restricts; allows one over an open table', () => {
    const bad = parsePolicyText(
      `teams:
  a:
    rows:
      public.orders: "customer_id IN (SELECT id FROM customers WHERE country = :c)"
  b:
    deny_columns: [public.customers.name]
`,
      'yaml',
    );
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
      'teams.a.rows.public.orders: reads public.customers, which a rule of this file restricts; a row filter may read only tables no rule restricts',
    ]);
    const good = parsePolicyText(
      'teams:\n  a:\n    rows:\n      public.orders: "customer_id IN (SELECT id FROM public.customers WHERE country = :c)"\n',
      'yaml',
    );
    expect(good.ok).toBe(true);
  });

  it('policy check warns of a filter whose subquery reads a table outside the allow-list', async () => {
    const path = join(dir, 'outside.yaml');
    writeFileSync(
      path,
      `users:
  sam: { teams: [a, b] }
teams:
  a:
    tables: [public.orders, public.customers]
    rows:
      public.orders: "customer_id IN (SELECT id FROM customers WHERE country = :user)"
  b:
    tables: [public.orders]
  c:
    tables: [public.orders]
    rows:
      public.orders: "id IN (SELECT id FROM public.notes)"
`,
    );
    const doc = await checkPolicy(path);
    expect(doc.problems).toEqual([]);
    const outside = doc.warnings.filter((w) => /outside the allow-list/.test(w.message));
    expect(outside.map((w) => `${w.path}: ${w.message}`)).toEqual([
      'teams.c.rows.public.orders: the row filter reads public.notes, which is outside the allow-list of team c: it reads that table for users who may not read it themselves',
      // Team a may read customers, but sam's teams together leave only public.orders.
      expect.stringMatching(
        /^users\.sam\.rows\.public\.orders: the row filter reads customers, which is outside the allow-list of user sam/,
      ),
    ]);
    // A filter over an allowed table is no finding.
    writeFileSync(
      path,
      'teams:\n  a:\n    tables: [public.orders, public.customers]\n    rows:\n      public.orders: "customer_id IN (SELECT id FROM customers)"\n',
    );
    expect(
      (await checkPolicy(path)).warnings.filter((w) => /outside the allow-list/.test(w.message)),
    ).toEqual([]);
  });

  it('policy check exits 2 naming the table', async () => {
    const path = join(dir, 'breakout.yaml');
    writeFileSync(path, 'defaults:\n  rows:\n    public.customers: "country = :country) OR (true"\n');
    const run = await runCliInProcess(['policy', 'check', path], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/defaults\.rows\.public\.customers: must be one boolean expression/);
  });
});

describe('a policy on a database that cannot enforce it (MySQL/MariaDB)', () => {
  const policy = () => {
    const doc = parsePolicyText(POLICY, 'yaml');
    if (!doc.ok) throw new Error('policy');
    return effectivePolicy(doc.document, 'sam');
  };

  it('refuses every statement of a policed user before it reaches the database', async () => {
    const ran: string[] = [];
    const fake: DatabaseConnector = {
      dialect: 'mysql',
      displayName: 'mysql://fake',
      ping: async () => {},
      close: async () => {},
      introspect: async () => ({
        dialect: 'mysql',
        database: 'd',
        serverVersion: '10.11',
        schemas: ['d'],
        tables: [],
      }),
      execute: async (sql) => {
        ran.push(sql);
        return { columns: [], rows: [], rowCount: 0, truncated: false } as unknown as QueryResult;
      },
    };
    const error = await withDataPolicy(fake, policy())
      .execute('SELECT 1', { maxRows: 10, timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(isSqlrecallError(error, 'policy_refused')).toBe(true);
    expect((error as Error).message).toMatch(
      /data policies need a PostgreSQL database \(or PGlite\); this is MySQL\/MariaDB/,
    );
    expect(ran).toEqual([]);
    // A user whose policy restricts nothing passes through.
    await withDataPolicy(fake, unrestrictedPolicy('ana')).execute('SELECT 1', {
      maxRows: 10,
      timeoutMs: 1000,
    });
    expect(ran).toEqual(['SELECT 1']);
  });

  it('policy check fails on a catalog of another engine, naming it', async () => {
    const doc = await checkPolicy(policyPath, {
      catalog: { dialect: 'mysql', database: 'd', serverVersion: '10.11', schemas: ['d'], tables: [] },
    });
    expect(doc.ok).toBe(false);
    expect(doc.problems.map((p) => p.message).join('\n')).toMatch(/this is MySQL\/MariaDB/);
  });

  describe.skipIf(!MYSQL_AVAILABLE)('on a real MariaDB (TEST_MYSQL_URL)', () => {
    let mysqlDb: TempMysqlDatabase;
    beforeAll(async () => {
      mysqlDb = await createTempMysqlDatabase('sqlrecall_pleaks');
      await mysqlDb.exec(
        "CREATE TABLE customers (id int PRIMARY KEY, country text); INSERT INTO customers VALUES (1, 'India'), (2, 'France');",
      );
    });
    afterAll(async () => {
      await mysqlDb?.drop();
    });
    const mysqlEnv = () => ({ ...env(), DATABASE_URL: mysqlDb.url });

    it('sql as a policed user: exit 3 with the reason, no row; policy check exit 2; doctor fails', async () => {
      const run = await runCliInProcess(['sql', 'SELECT * FROM customers', '--user', 'sam'], {
        env: mysqlEnv(),
      });
      expect(run.code).toBe(3);
      expect(run.stdout + run.stderr).toMatch(/data policies need a PostgreSQL database/);
      expect(run.stdout + run.stderr).not.toMatch(/France|SQLSTATE|syntax/);
      const check = await runCliInProcess(['policy', 'check', policyPath], { env: mysqlEnv() });
      expect(check.code).toBe(2);
      expect(check.stdout).toMatch(/this is MySQL\/MariaDB/);
      const { loadConfig } = await import('../src/config/config.js');
      const { Runtime } = await import('../src/runtime/runtime.js');
      const { checkPolicyFile } = await import('../src/runtime/doctor.js');
      const runtime = new Runtime(loadConfig({ env: { ...mysqlEnv(), SQLRECALL_USER: 'sam' }, cwd: dir }));
      try {
        expect(await checkPolicyFile(runtime)).toMatchObject({
          level: 'fail',
          message: expect.stringMatching(/restricts what sam reads, but data policies need a PostgreSQL/),
        });
      } finally {
        await runtime.close();
      }
    });
  });
});
