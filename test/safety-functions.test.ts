/**
 * The function policy on privileged connections (issue 10, item 8): every function a statement
 * reaches (directly, through an operator, a view or another function's body) is judged from the
 * target database's catalog. On the server engine (superuser, with dblink and pg_trgm) the raw
 * connector first shows the attack working — a STABLE PL/pgSQL wrapper around dblink_exec deletes a
 * row — then the guarded path refuses it, a VOLATILE and a SECURITY DEFINER function, while an
 * IMMUTABLE SQL helper and pg_trgm's similarity() still run; the database is unchanged afterwards.
 * PGlite runs the same cases minus the extensions it lacks. Unit tests cover the reference scanners.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config/config.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { checkDatabaseRole, roleWarning } from '../src/runtime/doctor.js';
import { Runtime } from '../src/runtime/runtime.js';
import {
  type CatalogQuery,
  FunctionPolicy,
  plpgsqlReferences,
  sqlReferences,
  withFunctionPolicy,
} from '../src/sql/function-policy.js';
import { guardSql, loadGuardParser } from '../src/sql/guard.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { runCliInProcess } from './support/in-process-cli.js';

const RUN = { maxRows: 100, timeoutMs: 10_000 };

describe('reference scanners', () => {
  beforeAll(() => loadGuardParser());

  it('finds functions, operators and relations in SQL at any depth', () => {
    const refs = sqlReferences(
      'WITH x AS (SELECT s.f(a) FROM t WHERE b % c) SELECT g(1), (SELECT h() FROM other.v) FROM x',
    );
    expect(refs.functions).toEqual(
      expect.arrayContaining([{ schema: 's', name: 'f' }, { name: 'g' }, { name: 'h' }]),
    );
    expect(refs.operators).toEqual(expect.arrayContaining([{ name: '%' }]));
    expect(refs.relations).toEqual(expect.arrayContaining([{ name: 't' }, { schema: 'other', name: 'v' }]));
  });

  it('scans PL/pgSQL conservatively: calls anywhere, quoted names, EXECUTE', () => {
    const refs = plpgsqlReferences(
      `BEGIN PERFORM "DbLink_Exec"('x', 'y'); RETURN public.helper(1) + Other(2); END`,
    );
    expect(refs.functions).toEqual(
      expect.arrayContaining([
        { name: 'DbLink_Exec' },
        { schema: 'public', name: 'helper' },
        { name: 'other' },
      ]),
    );
    expect(refs.dynamic).toBe(false);
    expect(plpgsqlReferences(`BEGIN execute 'SELECT 1'; END`).dynamic).toBe(true);
    // Names inside string literals count too: nothing can hide there.
    expect(plpgsqlReferences(`BEGIN RETURN 'dblink_exec(1)'; END`).functions).toEqual(
      expect.arrayContaining([{ name: 'dblink_exec' }]),
    );
  });

  it('refuses when the catalog cannot be read (fail closed)', async () => {
    const failing: CatalogQuery = async () => {
      throw new Error('permission denied for pg_proc');
    };
    const verdict = await new FunctionPolicy(failing).check('SELECT f(1)');
    expect(verdict).toMatchObject({ ok: false, rule: 'function-catalog' });
  });
});

/** Setup shared by both engines (PGlite has plpgsql but neither dblink nor pg_trgm). */
const COMMON_SETUP = `
  CREATE TABLE items (id int PRIMARY KEY, name text NOT NULL);
  INSERT INTO items VALUES (1, 'apple'), (2, 'banana'), (3, 'cherry'), (4, 'damson');
  CREATE FUNCTION bump(i int) RETURNS int LANGUAGE sql VOLATILE AS 'SELECT i + 1';
  CREATE FUNCTION definer_count() RETURNS bigint LANGUAGE sql STABLE SECURITY DEFINER
    AS 'SELECT count(*) FROM items';
  CREATE FUNCTION double_it(i int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT i * 2';
  CREATE FUNCTION sneaky(i int) RETURNS int LANGUAGE plpgsql STABLE AS $$
    BEGIN
      PERFORM dblink_exec('dbname=' || current_database() || ' host=127.0.0.1 user=postgres',
                          'DELETE FROM items WHERE id = ' || i);
      RETURN i;
    END $$;
  CREATE FUNCTION wraps_sneaky(i int) RETURNS int LANGUAGE sql STABLE AS 'SELECT sneaky(i)';
  CREATE FUNCTION dynamic_sql() RETURNS int LANGUAGE plpgsql STABLE AS $$
    BEGIN EXECUTE 'SELECT 1'; RETURN 1; END $$;
  CREATE FUNCTION reads_file() RETURNS text LANGUAGE sql STABLE AS $$ SELECT pg_read_file('/etc/hostname') $$;
  CREATE VIEW sneaky_view AS SELECT sneaky(id) AS s FROM items;
  CREATE FUNCTION plus_bump(a int, b int) RETURNS int LANGUAGE sql VOLATILE AS 'SELECT a + b';
  CREATE OPERATOR #~# (LEFTARG = int, RIGHTARG = int, FUNCTION = plus_bump);
`;

describe.each(ENGINES)('function policy (%s)', (engine) => {
  let db: TestDatabase;
  let guarded: DatabaseConnector;
  let hasExtensions = false;

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'sqlrecall_fnpolicy');
    if (engine === 'server') {
      await db.exec('CREATE EXTENSION dblink; CREATE EXTENSION pg_trgm;');
      hasExtensions = true;
    }
    await db.exec(COMMON_SETUP);
    guarded = withFunctionPolicy(db.connector);
  }, 60_000);

  afterAll(async () => {
    await db?.dispose();
  });

  async function count(): Promise<number> {
    const result = await db.connector.execute('SELECT count(*) AS n FROM items', RUN);
    return Number(result.rows[0]?.[0]);
  }

  /** The production path: the guard, then the policy-wrapped connector. */
  async function run(sql: string) {
    const verdict = await guardSql(sql);
    if (!verdict.ok) return { refused: verdict.rule, reason: verdict.reason };
    try {
      const result = await guarded.execute(verdict.sql, RUN);
      return { rows: result.rows };
    } catch (error) {
      const e = error as { code?: string; details?: { rule?: string }; message: string };
      if (e.code !== 'guard_refused') throw error;
      return { refused: e.details?.rule, reason: e.message };
    }
  }

  it('the raw connector is exploitable: a STABLE wrapper around dblink_exec deletes a row', async () => {
    if (!hasExtensions) return;
    expect(await count()).toBe(4);
    await db.connector.execute('SELECT sneaky(4)', RUN);
    expect(await count()).toBe(3); // the read-only transaction did not stop it
  });

  it('refuses VOLATILE, SECURITY DEFINER, dblink wrappers (direct, nested, in a view), dynamic SQL', async () => {
    const before = await count();
    const cases: [string, string][] = [
      ['SELECT bump(1)', 'function-volatile'],
      ['SELECT definer_count()', 'function-security-definer'],
      ['SELECT sneaky(1)', 'remote'],
      ['SELECT name FROM items WHERE id = public.sneaky(2)', 'remote'],
      ['SELECT wraps_sneaky(3)', 'remote'],
      ['SELECT * FROM sneaky_view', 'remote'],
      ['SELECT dynamic_sql()', 'function-dynamic-sql'],
      ['SELECT reads_file()', 'server-files'],
      ['SELECT 1 #~# 2', 'function-volatile'],
      ['SELECT (SELECT max(bump(id)) FROM items)', 'function-volatile'],
    ];
    for (const [sql, rule] of cases) {
      const outcome = await run(sql);
      expect(outcome, sql).toMatchObject({ refused: rule });
      expect(outcome.reason, sql).not.toMatch(/\n\s+at /);
    }
    expect(await count()).toBe(before); // the database is unchanged
  });

  it('refuses functions of a remote-access extension even when called directly by schema', async () => {
    if (!hasExtensions) return;
    const outcome = await run('SELECT public.dblink_get_connections()');
    expect(outcome).toMatchObject({ refused: 'remote' });
  });

  it('accepts an IMMUTABLE SQL helper, built-ins and pg_trgm similarity()', async () => {
    expect(await run('SELECT double_it(21) AS v')).toEqual({ rows: [[42]] });
    expect(await run('SELECT upper(name), count(*) FROM items GROUP BY 1 ORDER BY 1 LIMIT 1')).toMatchObject({
      rows: [['APPLE', expect.anything()]],
    });
    if (!hasExtensions) return;
    const outcome = await run("SELECT similarity('apple', 'apples') > 0.5 AS close");
    expect(outcome).toEqual({ rows: [[true]] });
    expect(await run("SELECT name FROM items WHERE name % 'aple' ORDER BY name")).toMatchObject({
      rows: [['apple']],
    });
  });

  it('--allow-functions lets a named function through', async () => {
    const allowing = withFunctionPolicy(db.connector, { allowFunctions: ['public.bump'] });
    const result = await allowing.execute('SELECT bump(1) AS v', RUN);
    expect(result.rows).toEqual([[2]]);
    await expect(allowing.execute('SELECT definer_count()', RUN)).rejects.toMatchObject({
      code: 'guard_refused',
    });
  });

  it('`sqlrecall sql` on a superuser connection refuses the dblink wrapper (exit 3, nothing deleted)', async () => {
    if (!db.url) return; // the CLI path on PGlite needs a data directory; the policy cases above cover it
    const before = await count();
    const run = await runCliInProcess(['sql', 'SELECT sneaky(1)', '--db', db.url]);
    expect(run.code, run.stderr).toBe(3);
    expect(run.stderr).toMatch(/dblink_exec/);
    expect(await count()).toBe(before);
    const allowed = await runCliInProcess([
      'sql',
      'SELECT bump(41) AS v',
      '--db',
      db.url,
      '--allow-functions',
      'bump',
    ]);
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(allowed.stdout).toMatch(/42/);
  });

  it('doctor and serve warn prominently on a superuser connection', async () => {
    if (!db.url) return; // PGlite has no roles worth checking
    const runtime = new Runtime(loadConfig({ env: {}, cwd: '/nonexistent', flags: { databaseUrl: db.url } }));
    try {
      const check = await checkDatabaseRole(runtime);
      expect(check?.level).toBe('warn');
      expect(check?.message).toMatch(
        /^The role postgres can write \(it is a superuser.*SUPERUSER CONNECTION: /,
      );
      expect(roleWarning(check)).toMatch(/SUPERUSER CONNECTION.*sqlrecall doctor/s);
    } finally {
      await runtime.close();
    }
    expect(
      roleWarning({ name: 'database role', ok: true, level: 'ok', message: 'role r cannot write' }),
    ).toBe(undefined);
  });

  it('refuses the catalogs that hold credentials', async () => {
    for (const sql of [
      'SELECT subname, subconninfo FROM pg_subscription',
      'SELECT * FROM pg_catalog.pg_user_mappings',
      'SELECT srvoptions FROM pg_foreign_server',
      'SELECT * FROM pg_file_settings',
      'SELECT * FROM pg_hba_file_rules',
      "SELECT setting FROM pg_settings WHERE name = 'primary_conninfo'",
      'SELECT rolpassword FROM pg_authid',
    ]) {
      const verdict = await guardSql(sql);
      expect(verdict, sql).toMatchObject({ ok: false });
      expect((verdict as { rule: string }).rule, sql).toMatch(/catalogs$/);
    }
  });
});
