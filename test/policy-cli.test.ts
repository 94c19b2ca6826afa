/**
 * `sqlrecall policy check | explain | export --postgres` in-process, on the small shop (PGlite;
 * the export is also applied to the server PostgreSQL when TEST_DATABASE_URL is set, and checked
 * by reading as each role).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Fixture, pgliteShop, SHOP_SQL } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { createTempDatabase, TEST_DATABASE_URL, type TempDatabase } from './support/server-db.js';
import { tempDir } from './support/temp-dir.js';

const GOOD = `
users:
  sam: { teams: [sales], attributes: { country: India } }
  ana: { teams: [sales] }
teams:
  sales:
    tables: [customers, orders]
    deny_columns: [customers.name]
    rows:
      customers: "country = :country"
defaults:
  tables: [t]
  rows_to_model: false
`;

let shop: Fixture;
let dir: string;
let home: string;

beforeAll(async () => {
  shop = await pgliteShop();
  dir = tempDir('sqlrecall-policy-cli-');
  home = tempDir('sqlrecall-policy-home-');
});
afterAll(async () => {
  await shop.close();
});

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

const env = (extra: Record<string, string> = {}) => ({
  DATABASE_URL: shop.url,
  SQLRECALL_HOME: home,
  SQLRECALL_MEMORY: 'off',
  ...extra,
});

describe('policy check', () => {
  it('passes a good file (exit 0) and says what it could not check', async () => {
    const run = await runCliInProcess(['policy', 'check', '--policy', file('good.yaml', GOOD)], {
      env: env(),
    });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/ok {3}policy file .*good\.yaml: 2 user\(s\), 1 team\(s\)/);
    expect(run.stdout).toMatch(/user names were not checked/);
    // ana is in a team whose filter needs an attribute she lacks.
    expect(run.stdout).toMatch(
      /public\.customers is unreadable for ana: team sales \(attribute country not set/,
    );
  });

  it('reports unknown tables and columns with the closest real names, and filters that do not run (exit 2)', async () => {
    const path = file(
      'typos.yaml',
      `
teams:
  sales:
    tables: [public.ordres, customers]
    deny_columns: [customers.contry, costumers.name]
    rows:
      orders: "statsu = :s"
`,
    );
    const run = await runCliInProcess(['policy', 'check', path, '--json'], { env: env() });
    expect(run.code).toBe(2);
    const doc = JSON.parse(run.stdout) as { ok: boolean; problems: { path: string; message: string }[] };
    expect(doc.ok).toBe(false);
    const messages = doc.problems.map((p) => `${p.path}: ${p.message}`);
    expect(messages).toContain(
      'teams.sales.tables: no table or view public.ordres (did you mean public.orders?)',
    );
    expect(messages).toContain(
      'teams.sales.deny_columns: public.customers has no column contry (did you mean public.customers.country?)',
    );
    expect(messages).toContain(
      'teams.sales.deny_columns: no table or view public.costumers (did you mean public.customers?)',
    );
    expect(messages.find((m) => m.startsWith('teams.sales.rows.public.orders'))).toMatch(
      /the filter does not run on public\.orders: .*statsu/,
    );
  });

  it('reports an invalid file at its place, exit 2', async () => {
    const path = file('bad.yaml', 'users:\n  sam: { teams: [sale] }\nteams:\n  sales: { deny_column: [] }\n');
    const run = await runCliInProcess(['policy', 'check', path], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stdout).toMatch(/FAIL teams\.sales: Unrecognized key: "deny_column"/);
  });

  it('checks the users it names against the registered ones', async () => {
    const userHome = tempDir('sqlrecall-policy-users-');
    const added = await runCliInProcess(['users', 'add', 'sam'], { env: env({ SQLRECALL_HOME: userHome }) });
    expect(added.code).toBe(0);
    const path = file('users.yaml', 'users:\n  sma: {}\n  SAM: {}\n');
    const run = await runCliInProcess(['policy', 'check', path], { env: env({ SQLRECALL_HOME: userHome }) });
    expect(run.stdout).toMatch(/FAIL users\.sma: no registered user sma \(did you mean sam\?\)/);
    expect(run.stdout).not.toMatch(/users\.SAM/);
    expect(run.code).toBe(2);
  });

  it('needs a file', async () => {
    const run = await runCliInProcess(['policy', 'check'], { env: env() });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--policy FILE or set SQLRECALL_POLICY/);
  });
});

describe('policy explain', () => {
  it('says what a user may read and where each rule comes from', async () => {
    const run = await runCliInProcess(['policy', 'explain', '--user', 'sam'], {
      env: env({ SQLRECALL_POLICY: file('explain.yaml', GOOD) }),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('Policy of sam from user sam, team sales, defaults');
    expect(run.stdout).toContain('tables: public.customers, public.orders');
    expect(run.stdout).toContain('public.customers.name (team sales)');
    expect(run.stdout).toContain("public.customers: country = $1  [$1 = 'India'] (team sales)");
    expect(run.stdout).toContain('privacy mode: answers are written without showing the data to the model');
  });

  it('explains one table, and a table outside the allow-list', async () => {
    const policy = file('explain2.yaml', GOOD);
    const one = await runCliInProcess(['policy', 'explain', '--user', 'sam', 'Customers', '--json'], {
      env: env({ SQLRECALL_POLICY: policy }),
    });
    expect(JSON.parse(one.stdout).table).toEqual({
      table: 'public.customers',
      readable: true,
      deniedColumns: [{ column: 'name', policy: 'team sales' }],
      rowFilters: [{ expression: 'country = $1', params: ['India'], policy: 'team sales' }],
    });
    const outside = await runCliInProcess(['policy', 'explain', '--user', 'sam', 't'], {
      env: env({ SQLRECALL_POLICY: policy }),
    });
    expect(outside.stdout).toContain(
      'public.t: not readable (not in the allow-list of user sam, team sales, defaults)',
    );
    // A user with no entry and a registered team of the file (--team) gets that team.
    const team = await runCliInProcess(
      ['policy', 'explain', '--user', 'kim', '--team', 'sales', 'customers'],
      {
        env: env({ SQLRECALL_POLICY: policy }),
      },
    );
    expect(team.stdout).toContain('Policy of kim from team sales');
    expect(team.stdout).toContain(
      'public.customers: not readable (team sales (attribute country not set for user kim))',
    );
  });

  it('refuses to explain with an invalid file (exit 2), and says nothing is restricted without one', async () => {
    const bad = await runCliInProcess(['policy', 'explain', '--user', 'sam'], {
      env: env({ SQLRECALL_POLICY: file('bad2.yaml', 'teams: [') }),
    });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/policy file .* is invalid/);
    const none = await runCliInProcess(['policy', 'explain', '--user', 'sam'], { env: env() });
    expect(none.stdout).toMatch(/No policy file is configured: sam may read every table/);
  });
});

describe('policy export --postgres', () => {
  const POLICY = `
users:
  sqlr_sam: { teams: [sales], attributes: { country: India } }
  sqlr_bob: { teams: [sales], attributes: { country: "United States" } }
teams:
  sales:
    tables: [customers, orders]
    deny_columns: [customers.name]
    rows:
      customers: "country = :country"
`;

  it('prints one transaction: grants without denied columns, row-level security with attributes as literals', async () => {
    const run = await runCliInProcess(['policy', 'export', '--postgres'], {
      env: env({ SQLRECALL_POLICY: file('export.yaml', POLICY) }),
    });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^-- PostgreSQL row-level security/);
    expect(run.stdout).toContain('ALTER TABLE "public"."customers" ENABLE ROW LEVEL SECURITY;');
    expect(run.stdout).toContain('GRANT SELECT ("id", "country") ON "public"."customers" TO "sqlr_sam";');
    expect(run.stdout).toContain(
      `CREATE POLICY "sqlrecall sqlr_sam" ON "public"."customers" FOR SELECT TO "sqlr_sam" USING ((country = 'India'));`,
    );
    expect(run.stdout).not.toMatch(/GRANT SELECT[^;]*"public"\."t" TO "sqlr_sam"/);
    expect(run.stdout).toMatch(/COMMIT;\n$/);
  });

  it('needs --postgres', async () => {
    const run = await runCliInProcess(['policy', 'export'], {
      env: env({ SQLRECALL_POLICY: file('export2.yaml', POLICY) }),
    });
    expect(run.code).toBe(2);
  });

  it.skipIf(!TEST_DATABASE_URL)('the exported statements enforce the same rules on the server', async () => {
    let db: TempDatabase | undefined;
    const admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
    try {
      db = await createTempDatabase('sqlrecall_policy_export');
      const owner = new pg.Client({ connectionString: db.url });
      await owner.connect();
      try {
        await owner.query(SHOP_SQL);
        for (const role of ['sqlr_sam', 'sqlr_bob', 'sqlrecall_default'])
          await admin.query(
            `DO $$ BEGIN CREATE ROLE ${role}; EXCEPTION WHEN duplicate_object THEN NULL; END $$`,
          );
        const run = await runCliInProcess(['policy', 'export', '--postgres'], {
          env: env({ DATABASE_URL: db.url, SQLRECALL_POLICY: file('export3.yaml', POLICY) }),
        });
        expect(run.code).toBe(0);
        await owner.query(run.stdout);
        await owner.query('GRANT USAGE ON SCHEMA public TO sqlr_sam, sqlr_bob, sqlrecall_default');
        const as = async (role: string, sql: string) => {
          await owner.query(`SET ROLE ${role}`);
          try {
            return (await owner.query(sql)).rows;
          } finally {
            await owner.query('RESET ROLE');
          }
        };
        expect(await as('sqlr_sam', 'SELECT id, country FROM customers ORDER BY id')).toEqual([
          { id: 1, country: 'India' },
          { id: 4, country: 'India' },
        ]);
        expect(await as('sqlr_bob', 'SELECT count(*)::int AS n FROM customers')).toEqual([{ n: 1 }]);
        await expect(as('sqlr_sam', 'SELECT name FROM customers')).rejects.toThrow(/permission denied/);
        await expect(as('sqlr_sam', 'SELECT * FROM t')).rejects.toThrow(/permission denied/);
        await expect(as('sqlrecall_default', 'SELECT * FROM orders')).resolves.toHaveLength(4);
      } finally {
        await owner.end();
      }
    } finally {
      await db?.drop();
      await admin.end();
    }
  });
});

describe('policy export on PGlite', () => {
  it('runs on the embedded engine too', async () => {
    const run = await runCliInProcess(['policy', 'export', '--postgres'], {
      env: env({ SQLRECALL_POLICY: file('export4.yaml', GOOD) }),
    });
    expect(run.code).toBe(0);
    const probe = new PGlite(inMemoryPgliteOptions());
    try {
      await probe.exec(SHOP_SQL);
      await probe.exec('CREATE ROLE sam; CREATE ROLE ana; CREATE ROLE sqlrecall_default;');
      await probe.exec(run.stdout);
      await probe.exec('GRANT USAGE ON SCHEMA public TO sam; SET ROLE sam');
      const rows = await probe.query<{ country: string }>('SELECT country FROM customers');
      expect(rows.rows.map((r) => r.country)).toEqual(['India', 'India']);
    } finally {
      await probe.close();
    }
  });
});

describe('the runtime, doctor and health with a policy file', () => {
  const runtimeWith = async (policy: string | undefined, user = 'sam') => {
    const { loadConfig } = await import('../src/config/config.js');
    const { Runtime } = await import('../src/runtime/runtime.js');
    const config = loadConfig({
      env: { SQLRECALL_HOME: home, SQLRECALL_USER: user, ...(policy ? { SQLRECALL_POLICY: policy } : {}) },
      cwd: dir,
    });
    return new Runtime(config);
  };

  it('policyFor: unrestricted without a file, the merged policy with one, refused while never valid', async () => {
    const none = await runtimeWith(undefined);
    expect(await none.policyFor('sam', { admin: true })).toMatchObject({
      sources: [],
      admin: true,
      rowsToModel: true,
    });
    const good = await runtimeWith('good-rt.yaml');
    file('good-rt.yaml', GOOD); // a relative path is the working folder's
    expect((await good.policyFor('sam')).rowFilters.get('public.customers')).toEqual([
      { expression: 'country = $1', params: ['India'], policy: 'team sales' },
    ]);
    await good.close();
    const broken = await runtimeWith(file('broken-rt.yaml', 'defaults: { tables: [a b] }'));
    await expect(broken.policyFor('sam')).rejects.toMatchObject({ code: 'config' });
  });

  it('doctor names the entries that apply to the user, or fails on an invalid file', async () => {
    const { checkPolicyFile } = await import('../src/runtime/doctor.js');
    const path = file('doctor.yaml', GOOD);
    const ok = await checkPolicyFile(await runtimeWith(path));
    expect(ok).toMatchObject({ level: 'ok' });
    expect(ok!.message).toContain(
      '2 user(s), 1 team(s); sam gets user sam, team sales, defaults; privacy mode',
    );
    writeFileSync(path, 'users:\n  sam: { teams: [sale] }\n');
    const failed = await checkPolicyFile(await runtimeWith(path));
    expect(failed).toMatchObject({
      level: 'fail',
      code: 'config',
      fix: expect.stringMatching(/policy check/),
    });
    expect(failed!.message).toContain('users.sam.teams.0: no team sale in this file');
    expect(await checkPolicyFile(await runtimeWith(undefined))).toBeUndefined();
  });

  it('health: ok while valid; not ok (no details) when a change is invalid; a server watch reloads it', async () => {
    const { policyHealth } = await import('../src/server/runtime-deps.js');
    const path = file('health.yaml', GOOD);
    const runtime = await runtimeWith(path);
    const events: string[] = [];
    await runtime.watchPolicy((e) => events.push(e.message));
    expect(await policyHealth(runtime)).toEqual({ ok: true });
    writeFileSync(path, 'users:\n  sam: { teams: [sale] }\n');
    await expect.poll(async () => (await policyHealth(runtime))?.ok, { timeout: 5000 }).toBe(false);
    const health = await policyHealth(runtime);
    expect(health).toMatchObject({ kept: true, message: expect.stringMatching(/stays in force/) });
    expect(health!.message).not.toMatch(/sale/); // the problems are for doctor and policy check
    // The last valid version is still what users get.
    expect((await runtime.policyFor('sam')).sources).toEqual(['user sam', 'team sales', 'defaults']);
    expect(events[0]).toMatch(/loaded: 2 user\(s\), 1 team\(s\)/);
    expect(events.at(-1)).toMatch(/is invalid \(users\.sam\.teams\.0: no team sale.*stays in force/);
    await runtime.close();
  });
});
