/**
 * One server analysis per policed statement: the data policy analyses the statement it will run
 * (a temporary view in a rolled-back transaction) and the function policy below it judges the
 * same text; the function policy takes the data policy's analysis instead of asking the server
 * again. Counted on the connector stack the runtime builds (data policy over function policy
 * over the database), on PGlite and on the server. The hand-over is taken once, for exactly the
 * same statement, and not after a few seconds: any other statement is analysed on its own.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { policyCatalogCache, withDataPolicy } from '../src/databases/policed.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { PROBE_VIEW } from '../src/sql/server-analysis.js';
import { FULL_SQL, leaks, outcomeOf, samPolicy } from './fixtures/policy-hostile.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';

/** Counts the probes reaching the database: analyses (a temporary view) apart from the rest. */
function counting(db: DatabaseConnector): { db: DatabaseConnector; analyses: string[]; executes: number } {
  const seen = { analyses: [] as string[], executes: 0 };
  const wrapped: DatabaseConnector = {
    dialect: db.dialect,
    get displayName() {
      return db.displayName;
    },
    ping: () => db.ping(),
    close: () => db.close(),
    introspect: (options) => db.introspect(options),
    execute: (sql, options) => {
      seen.executes += 1;
      return db.execute(sql, options);
    },
    probe: (statements, options) => {
      if (statements.some((s) => s.includes(`CREATE TEMP VIEW ${PROBE_VIEW}`)))
        seen.analyses.push(statements[0]!);
      return db.probe!(statements, options);
    },
  };
  return {
    db: wrapped,
    get analyses() {
      return seen.analyses;
    },
    get executes() {
      return seen.executes;
    },
  };
}

describe.each(ENGINES)('one server analysis per policed statement on %s', (engine) => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'policy_probes');
    await db.exec(FULL_SQL);
  }, 120_000);

  afterAll(async () => {
    await db?.dispose();
  });

  it('a policed statement is analysed once, and still runs filtered', async () => {
    const counter = counting(db.connector);
    const checked = withFunctionPolicy(counter.db);
    const sam = withDataPolicy(checked, samPolicy(), policyCatalogCache(checked));
    // The first statement reads the catalog (policy catalog, function rows); the second is the
    // steady state of a session.
    await outcomeOf(sam, 'SELECT count(*) AS n FROM products');
    const before = counter.analyses.length;
    const outcome = await outcomeOf(sam, 'SELECT id, amount FROM orders ORDER BY id');
    expect(outcome.kind, JSON.stringify(outcome)).toBe('rows');
    expect(leaks(JSON.stringify(outcome))).toBe(false);
    expect(outcome.kind === 'rows' && outcome.rows.map((row) => Number(row[0]))).toEqual([10, 11, 12]);
    const analyses = counter.analyses.slice(before);
    // The analysed text is the rewritten statement (with the row filter), analysed once.
    expect(analyses.filter((text) => text.includes('"public"."orders"'))).toHaveLength(1);
    expect(analyses, analyses.join('\n---\n')).toHaveLength(1);
  });

  it('a refusal of the data policy runs nothing and is analysed at most once', async () => {
    const counter = counting(db.connector);
    const checked = withFunctionPolicy(counter.db);
    const sam = withDataPolicy(checked, samPolicy(), policyCatalogCache(checked));
    await outcomeOf(sam, 'SELECT count(*) AS n FROM products');
    const before = counter.analyses.length;
    const outcome = await outcomeOf(sam, 'SELECT top_pay() AS top');
    expect(outcome).toMatchObject({ kind: 'refused' });
    expect(leaks(JSON.stringify(outcome))).toBe(false);
    expect(counter.analyses.length - before).toBeLessThanOrEqual(1);
  });

  it('the function policy still analyses every statement it is given on its own', async () => {
    const counter = counting(db.connector);
    const checked = withFunctionPolicy(counter.db);
    const sql = 'SELECT name FROM products WHERE id = 1';
    await checked.execute(sql, { maxRows: 10, timeoutMs: 10_000 });
    await checked.execute(sql, { maxRows: 10, timeoutMs: 10_000 });
    expect(counter.analyses).toHaveLength(2);
  });

  it('an analysis handed over is for that statement only, taken once, and goes stale', async () => {
    let now = 1_000_000;
    const counter = counting(db.connector);
    const checked = withFunctionPolicy(counter.db, { now: () => now });
    const { probeStatements } = await import('../src/sql/server-analysis.js');
    const run = { maxRows: 10, timeoutMs: 10_000 };
    // Hostile: an analysis of a harmless statement must not stand for another one.
    await checked.probe!(probeStatements('SELECT 1 AS one'), { timeoutMs: 10_000 });
    const refused = await checked.execute('SELECT pg_sleep(0)', run).catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'guard_refused' });
    expect(counter.analyses).toHaveLength(2);
    // The same statement: taken once (the next run analyses again).
    await checked.probe!(probeStatements('SELECT 1 AS one'), { timeoutMs: 10_000 });
    await checked.execute('SELECT 1 AS one', run);
    expect(counter.analyses).toHaveLength(3);
    await checked.execute('SELECT 1 AS one', run);
    expect(counter.analyses).toHaveLength(4);
    // Stale after a few seconds: analysed again.
    await checked.probe!(probeStatements('SELECT 2 AS two'), { timeoutMs: 10_000 });
    now += 60_000;
    await checked.execute('SELECT 2 AS two', run);
    expect(counter.analyses).toHaveLength(6);
  });
});
