/**
 * Issue 4, "No false refusals": the tricky reads of `test/corpus/reads/reads.jsonl` are accepted by
 * the guard, pass the identifier check and run on a real database; every defog gold query (every
 * `{…}` expansion) passes the identifier check against the introspected schema of its own database
 * (the guard half of both benchmark sets is in `guard-benchmarks.test.ts`). Allowlist mode
 * (`--allow-tables`) is checked here too, through the guard and through `sqlrecall sql`.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import { guardSql } from '../src/sql/guard.js';
import { checkIdentifiers } from '../src/sql/identifiers.js';
import { DEFOG_DATABASES, defogDump } from './support/defog.js';
import { SHOP_SQL } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { inMemoryPgliteOptions, seedPgliteDataDir } from './support/pglite-template.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';
import { tempDir } from './support/temp-dir.js';

const READS = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), 'corpus', 'reads', 'reads.jsonl'),
  'utf8',
)
  .split('\n')
  .filter((line) => line.trim() !== '')
  .map((line) => JSON.parse(line) as { id: string; sql: string });

const SALES_SQL = `CREATE SCHEMA sales;
CREATE TABLE sales.deals (id int PRIMARY KEY, amount numeric, "Region" text);
CREATE TABLE sales.customers (id int PRIMARY KEY, vip boolean);
INSERT INTO sales.deals VALUES (1, 10.5, 'North');`;

describe('tricky reads', () => {
  let pglite: PGlite;
  let db: DatabaseConnector;
  let schema: Schema;

  beforeAll(async () => {
    pglite = new PGlite(inMemoryPgliteOptions());
    await pglite.exec(SHOP_SQL + SALES_SQL);
    db = createPgliteConnector({ pglite });
    schema = await db.introspect();
  });
  afterAll(async () => {
    await db?.close();
    await pglite?.close();
  });

  it('has at least 40 of them', () => {
    expect(READS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(READS.map((r) => r.id)).size).toBe(READS.length);
  });

  it.each(READS.map((r) => [r.id, r.sql] as const))('%s: accepted, names known, runs', async (_id, sql) => {
    const verdict = await guardSql(sql);
    expect(verdict).toMatchObject({ ok: true });
    if (!verdict.ok) return;
    expect(sql).toContain(verdict.sql);
    expect(await checkIdentifiers(verdict.sql, schema)).toEqual({ ok: true, unknown: [] });
    const result = await db.execute(verdict.sql, { maxRows: 100, timeoutMs: 5000 });
    expect(result.columns.length).toBeGreaterThan(0);
  });

  describe('allowlist mode', () => {
    const allowed = async (sql: string, allowTables: string[]) => guardSql(sql, { allowTables, schema });

    it('accepts only the named tables, resolving unqualified names through the search path', async () => {
      const only = ['public.customers', 'sales.*'];
      expect(await allowed('SELECT * FROM customers', only)).toMatchObject({ ok: true });
      expect(
        await allowed('SELECT * FROM public.customers c JOIN sales.deals d ON d.id = c.id', only),
      ).toMatchObject({
        ok: true,
      });
      expect(await allowed('SELECT * FROM sales.customers', only)).toMatchObject({ ok: true });
      expect(await allowed('SELECT * FROM orders', only)).toMatchObject({
        ok: false,
        rule: 'allowlist',
        reason: 'refused: public.orders is not one of the allowed tables (public.customers, sales.*)',
      });
      // public comes first in the search path: unqualified customers is public.customers
      expect(await allowed('SELECT * FROM customers', ['sales.customers'])).toMatchObject({ ok: false });
    });

    it('does not treat CTE names as tables, but checks what they read', async () => {
      const only = ['public.customers'];
      expect(
        await allowed('WITH orders AS (SELECT id FROM customers) SELECT * FROM orders', only),
      ).toMatchObject({
        ok: true,
      });
      expect(await allowed('WITH c AS (SELECT * FROM orders) SELECT * FROM c', only)).toMatchObject({
        ok: false,
      });
      expect(
        await allowed(
          'WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 3) SELECT * FROM r',
          only,
        ),
      ).toMatchObject({ ok: true });
    });

    it('finds relations in subqueries, LATERAL, set operations, views and catalogs', async () => {
      const only = ['public.customers'];
      for (const sql of [
        'SELECT (SELECT count(*) FROM orders) FROM customers',
        'SELECT * FROM customers c, LATERAL (SELECT * FROM t WHERE t.id = c.id) x',
        'SELECT id FROM customers UNION SELECT id FROM t',
        'SELECT * FROM india_customers',
        'SELECT * FROM pg_class',
        'SELECT * FROM information_schema.tables',
        'SELECT 1 WHERE EXISTS (SELECT 1 FROM "Customers")',
      ]) {
        expect(await allowed(sql, only), sql).toMatchObject({ ok: false, rule: 'allowlist' });
      }
      expect(await allowed('SELECT * FROM pg_class', ['pg_catalog.pg_class'])).toMatchObject({ ok: true });
      expect(await allowed('SELECT 1', only)).toMatchObject({ ok: true });
      expect(await allowed('SELECT * FROM generate_series(1, 3)', only)).toMatchObject({ ok: true });
    });

    it('matches quoted names case-sensitively and bare names in any schema', async () => {
      expect(await allowed('SELECT "Region" FROM sales.deals', ['"sales"."deals"'])).toMatchObject({
        ok: true,
      });
      expect(await allowed('SELECT * FROM sales.deals', ['SALES.DEALS'])).toMatchObject({ ok: true });
      expect(await allowed('SELECT * FROM sales.deals', ['"SALES".deals'])).toMatchObject({ ok: false });
      expect(await allowed('SELECT * FROM sales.customers', ['customers'])).toMatchObject({ ok: true });
    });
  });
});

describe('allowlist through `sqlrecall sql`', () => {
  it('refuses a table outside --allow-tables with exit 3 and runs an allowed one', async () => {
    const dir = seedPgliteDataDir(tempDir('sqlrecall-allow-'));
    const seed = new PGlite(dir);
    await seed.exec(SHOP_SQL);
    await seed.close();
    const env = { SQLRECALL_HOME: dir };
    const refused = await runCliInProcess(
      [
        'sql',
        '--db',
        `pglite:${dir}`,
        '--allow-tables',
        'public.customers',
        '--json',
        'SELECT * FROM orders',
      ],
      { env },
    );
    expect(refused.code).toBe(3);
    expect(JSON.parse(refused.stdout).error.message).toBe(
      'Refused: public.orders is not one of the allowed tables (public.customers)',
    );
    const ok = await runCliInProcess(
      ['sql', '--db', `pglite:${dir}`, '--json', 'SELECT count(*) AS n FROM customers'],
      { env: { ...env, SQLRECALL_ALLOW_TABLES: 'public.customers' } },
    );
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout).rows).toEqual([['4']]);
    const bad = await runCliInProcess(
      ['sql', '--db', `pglite:${dir}`, '--allow-tables', 'a.b.c', 'SELECT 1'],
      { env },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--allow-tables is invalid/);
  }, 60_000);
});

describe.skipIf(!HAS_BENCHMARKS)('defog gold queries pass the identifier check on their own database', () => {
  it('every expansion of every gold query: no unknown table or column', async () => {
    // One embedded instance, one schema per database (its `public`), so start-up is paid once.
    const schemas = new Map<string, Schema>();
    const pglite = new PGlite(inMemoryPgliteOptions());
    try {
      const connector = createPgliteConnector({ pglite });
      for (const name of DEFOG_DATABASES) {
        const dump = defogDump(name);
        const own = [...dump.matchAll(/CREATE SCHEMA (?:IF NOT EXISTS )?(\w+)/g)].map((m) => m[1]!);
        await pglite.exec(
          `CREATE SCHEMA ${name}; SET search_path = ${name};\n${dump.replaceAll('public.', `${name}.`)}`,
        );
        schemas.set(name, await connector.introspect({ schemas: [name, ...own] }));
      }
    } finally {
      await pglite.close();
    }
    let checked = 0;
    const flagged: string[] = [];
    for (const file of [
      'questions_gen_postgres.csv',
      'instruct_basic_postgres.csv',
      'instruct_advanced_postgres.csv',
    ]) {
      for (const question of await readDefogCsv(benchmarkPath('defog', file))) {
        const schema = schemas.get(question.dbName);
        expect(schema, question.dbName).toBeDefined();
        for (const gold of splitGoldQueries(question.query)) {
          for (const sql of expandGoldQuery(gold, 'all')) {
            checked += 1;
            const check = await checkIdentifiers(sql, schema!);
            if (!check.ok)
              flagged.push(`${question.dbName}: ${check.unknown.map((u) => u.message).join('; ')}: ${sql}`);
          }
        }
      }
    }
    console.log(`identifier check: ${checked} defog gold queries, ${checked - flagged.length} clean`);
    expect(flagged).toEqual([]);
    expect(checked).toBeGreaterThan(400);
  }, 120_000);
});
