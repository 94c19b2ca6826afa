/**
 * One conformance suite over every engine (test/support/conformance/): the same cases on each,
 * through the product's own path (`openDatabase`, `guardForDialect`). Connect; introspect the
 * fixture; decode each value type exactly; the row cap and the byte budget; cancel and the
 * timeout; every hostile statement refused by the guard or failing in the read-only session with
 * the data unchanged; every kind of read accepted and run. An engine that cannot run here is
 * skipped with its reason, or fails the suite when CI_REQUIRE_ALL_ENGINES=1 (CI provides them all).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import type { CellValue, DatabaseDialectName, QueryResult } from '../src/core/ports.js';
import type { Table } from '../src/core/schema.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { guardForDialect } from '../src/sql/dialect-guard.js';
import type { ConformanceDatabase } from './support/conformance/engine.js';
import { CONFORMANCE_ENGINES } from './support/conformance/index.js';

const REQUIRE_ALL = process.env.CI_REQUIRE_ALL_ENGINES === '1';

/** Dialects whose engines keep table comments and have enum types: both must come back exactly. */
const KEEPS_COMMENTS_AND_ENUMS: readonly DatabaseDialectName[] = ['postgres', 'mysql', 'duckdb'];

const RUN = { maxRows: 1_000, timeoutMs: 10_000 };

/** How long a cancelled statement may take to stop, from the abort (ms). */
const CANCEL_WITHIN_MS = 2_000;

const availability = await Promise.all(
  CONFORMANCE_ENGINES.map(async (engine) => ({ engine, reason: await engine.unavailable() })),
);

function rowObject(result: QueryResult, index = 0): Record<string, CellValue> {
  return Object.fromEntries(result.columns.map((column, i) => [column.name, result.rows[index]![i]!]));
}

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    if (!(error instanceof SqlrecallError)) throw error;
    return error;
  }
  throw new Error('expected the call to fail');
}

for (const { engine, reason } of availability) {
  if (reason !== undefined) {
    if (REQUIRE_ALL) {
      describe(`conformance ${engine.name}`, () => {
        it('is available (CI_REQUIRE_ALL_ENGINES=1)', () => {
          expect.fail(`${engine.name} is unavailable: ${reason}`);
        });
      });
    } else {
      console.log(`conformance ${engine.name}: skipped (${reason})`);
      describe.skip(`conformance ${engine.name} (unavailable: ${reason})`, () => {
        it('runs', () => {});
      });
    }
    continue;
  }

  describe(`conformance ${engine.name}`, () => {
    let db: ConformanceDatabase;
    let passed = 0;
    const skipped: string[] = [];
    const pass = (cases = 1) => {
      passed += cases;
    };

    beforeAll(async () => {
      db = await engine.setUp();
    });
    afterAll(async () => {
      await db?.dispose();
      const note = skipped.length > 0 ? ` (${skipped.length} skipped: ${skipped.join('; ')})` : '';
      console.log(`conformance ${engine.name}: ${passed} cases passed${note}`);
    });

    it('connects, pings and names its dialect', async () => {
      expect(db.connector.dialect).toBe(engine.dialect);
      await db.connector.ping();
      pass();
    });

    it('introspects both tables, the view, columns and types, keys, the comment and the enum', async () => {
      const schema = await db.connector.introspect();
      expect(schema.dialect).toBe(engine.dialect);
      const byName = (name: string): Table => {
        const found = schema.tables.filter((t) => t.name === name);
        expect(
          found.map((t) => t.name),
          `exactly one relation ${name}`,
        ).toEqual([name]);
        return found[0]!;
      };
      const customers = byName('customers');
      const orders = byName('orders');
      const view = byName('big_orders');
      expect(customers.kind).toBe('table');
      expect(orders.kind).toBe('table');
      expect(view.kind).toBe('view');

      expect(customers.columns.map((c) => c.name)).toEqual(['id', 'name', 'email', 'region', 'created_on']);
      expect(orders.columns.map((c) => c.name)).toEqual(['id', 'customer_id', 'total', 'placed_at']);
      expect(view.columns.map((c) => c.name)).toEqual(['id', 'customer_id', 'total']);
      const type = (table: Table, column: string) =>
        table.columns.find((c) => c.name === column)!.type.toLowerCase();
      expect(type(customers, 'id')).toMatch(/int/);
      expect(type(customers, 'name')).toMatch(/text|char/);
      expect(type(customers, 'created_on')).toMatch(/^date/);
      expect(type(orders, 'total')).toMatch(/^(numeric|decimal)\(12, ?2\)/);
      expect(type(orders, 'placed_at')).toMatch(/^(timestamp|datetime)/);
      const nullable = (table: Table, column: string) =>
        table.columns.find((c) => c.name === column)!.nullable;
      expect(nullable(customers, 'id')).toBe(false);
      expect(nullable(customers, 'name')).toBe(false);
      expect(nullable(customers, 'email')).toBe(true);

      expect(customers.primaryKey).toEqual(['id']);
      expect(orders.primaryKey).toEqual(['id']);
      expect(orders.foreignKeys).toHaveLength(1);
      expect(orders.foreignKeys[0]).toMatchObject({
        columns: ['customer_id'],
        references: { schema: customers.schema, table: 'customers', columns: ['id'] },
      });
      expect(customers.foreignKeys).toEqual([]);

      const region = customers.columns.find((c) => c.name === 'region')!;
      if (KEEPS_COMMENTS_AND_ENUMS.includes(engine.dialect)) {
        expect(customers.comment).toBe('People who bought something');
        expect(region.enumValues).toEqual(['EMEA', 'AMER', 'APAC']);
      } else {
        // An engine without comments or enums reports none; one that has them reports them exactly.
        expect([null, 'People who bought something']).toContain(customers.comment);
        if (region.enumValues !== null) expect(region.enumValues).toEqual(['EMEA', 'AMER', 'APAC']);
      }
      pass();
    });

    it('decodes every value type exactly (big integers and decimals as strings, ISO dates, JSON text, binary summarised)', async () => {
      const result = await db.connector.execute(db.sql.values.sql, RUN);
      expect(result.rowCount).toBe(1);
      expect(rowObject(result)).toEqual(db.sql.values.expected);
      pass();
    });

    it('reads the fixture alike on every engine; an empty result keeps its columns; an unknown column is db_query', async () => {
      const rows = await db.connector.execute(
        'SELECT id, name, email, created_on FROM customers ORDER BY id',
        RUN,
      );
      expect(rows.columns.map((c) => c.name)).toEqual(['id', 'name', 'email', 'created_on']);
      expect(rows.rows).toEqual([
        [1, 'Ada', 'ada@example.com', '2024-01-05'],
        [2, 'Grace', null, '2024-02-10'],
        [3, 'Linus', 'linus@example.com', '2024-03-15'],
      ]);
      const empty = await db.connector.execute('SELECT id, name FROM customers WHERE id < 0', RUN);
      expect(empty).toMatchObject({ rowCount: 0, rows: [], truncated: false });
      expect(empty.columns.map((c) => c.name)).toEqual(['id', 'name']);
      const error = await failure(db.connector.execute('SELECT no_such_column FROM customers', RUN));
      expect(error.code).toBe('db_query');
      expect(error.message).toMatch(/no_such_column/);
      await db.connector.ping();
      pass();
    });

    it('caps rows: more rows than maxRows are cut with max_rows; exactly maxRows are not', async () => {
      const cut = await db.connector.execute(db.sql.rows(12), { ...RUN, maxRows: 5 });
      expect(cut).toMatchObject({ rowCount: 5, truncated: true, truncatedReason: 'max_rows' });
      expect(cut.rows).toHaveLength(5);
      const whole = await db.connector.execute(db.sql.rows(5), { ...RUN, maxRows: 5 });
      expect(whole.rowCount).toBe(5);
      expect(whole.truncated).toBe(false);
      expect(whole.truncatedReason).toBeUndefined();
      pass();
    });

    it('keeps the byte budget: rows past it are cut with max_bytes; a first row over it is result_too_large', async () => {
      // Each row holds a 100-character pad: 50 rows are over 5,000 bytes.
      const cut = await db.connector.execute(db.sql.rows(50), { ...RUN, maxBytes: 1_000 });
      expect(cut).toMatchObject({ truncated: true, truncatedReason: 'max_bytes' });
      expect(cut.rowCount).toBeGreaterThan(0);
      expect(cut.rowCount).toBeLessThan(50);
      const tooLarge = await failure(db.connector.execute(db.sql.rows(3), { ...RUN, maxBytes: 10 }));
      expect(tooLarge.code).toBe('result_too_large');
      pass();
    });

    it('cancels a running statement when the signal aborts, within 2 s, and keeps working', async (ctx) => {
      if (db.uninterruptible) {
        skipped.push(`cancel: ${db.uninterruptible}`);
        ctx.skip();
      }
      const controller = new AbortController();
      const running = failure(
        db.connector.execute(db.sql.slow, { ...RUN, timeoutMs: 60_000, signal: controller.signal }),
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      const abortedAt = performance.now();
      controller.abort();
      const error = await running;
      expect(performance.now() - abortedAt).toBeLessThan(CANCEL_WITHIN_MS);
      expect(error.code).toBe('db_query');
      expect((error.details as { cancelled?: boolean }).cancelled).toBe(true);
      await db.connector.ping();
      pass();
    });

    it('stops a statement past its timeout with db_timeout', async (ctx) => {
      if (db.uninterruptible) {
        skipped.push(`timeout: ${db.uninterruptible}`);
        ctx.skip();
      }
      const started = performance.now();
      const error = await failure(db.connector.execute(db.sql.slow, { ...RUN, timeoutMs: 700 }));
      expect(error.code).toBe('db_timeout');
      expect(performance.now() - started).toBeLessThan(700 + CANCEL_WITHIN_MS);
      await db.connector.ping();
      pass();
    });

    it('never changes the data: each hostile statement is refused by the guard or fails read-only', async () => {
      expect(db.sql.hostile.length).toBeGreaterThan(0);
      const before = await db.fingerprint();
      expect(before).toMatch(/\S/);
      expect(before).not.toMatch(/^(undefined|null)$/);
      const problems: string[] = [];
      for (const { sql, why } of db.sql.hostile) {
        const verdict = await guardForDialect(engine.dialect, sql);
        if (verdict.ok) {
          const ran = await db.connector.execute(verdict.sql, RUN).then(
            () => true,
            () => false,
          );
          if (ran) problems.push(`accepted and ran (${why}): ${sql}`);
        }
        const after = await db.fingerprint();
        if (after !== before) problems.push(`changed the data (${why}): ${sql}`);
        if (problems.length === 0) pass();
      }
      expect(problems).toEqual([]);
    });

    it('keeps the table allowlist: a table outside it is refused (rule allowlist), a CTE named like an allowed table cannot hide one; inside it, reads run', async () => {
      const schema = await db.connector.introspect();
      const outside = await guardForDialect(
        engine.dialect,
        'SELECT name FROM customers WHERE id IN (SELECT customer_id FROM orders)',
        { allowTables: ['customers'], schema },
      );
      expect(outside).toMatchObject({ ok: false, rule: 'allowlist' });
      for (const hostile of [
        // The CTE shadows the name only inside its own query: the outer reference is the table.
        'SELECT * FROM (WITH orders AS (SELECT 1 AS id) SELECT id FROM orders) AS x, orders',
        'WITH customers AS (SELECT id FROM orders) SELECT id FROM customers',
        'SELECT name FROM CUSTOMERS c JOIN ORDERS o ON o.customer_id = c.id',
      ])
        expect(
          await guardForDialect(engine.dialect, hostile, { allowTables: ['customers'], schema }),
          hostile,
        ).toMatchObject({ ok: false, rule: 'allowlist' });
      const inside = await guardForDialect(
        engine.dialect,
        'SELECT c.name, o.total FROM customers c JOIN orders o ON o.customer_id = c.id',
        {
          allowTables: ['customers', 'orders'],
          schema,
        },
      );
      expect(inside).toMatchObject({ ok: true });
      if (inside.ok) expect((await db.connector.execute(inside.sql, RUN)).rowCount).toBe(4);
      pass();
    });

    it('samples value hints on every engine: enum labels, and the values of a small text column', async () => {
      const schema = await db.connector.introspect();
      const customers = schema.tables.find((t) => t.name === 'customers')!;
      const errors: unknown[] = [];
      const hints = await createValueSampler(db.connector, { onError: (_t, error) => errors.push(error) })(
        customers,
      );
      expect(errors).toEqual([]);
      const byColumn = Object.fromEntries(hints.map((h) => [h.column, h]));
      expect(byColumn.name).toMatchObject({
        values: ['Ada', 'Grace', 'Linus'],
        source: 'sample',
        sampledRows: 3,
      });
      expect(byColumn.email).toMatchObject({
        values: ['ada@example.com', 'linus@example.com'],
        sampledRows: 2,
      });
      if (customers.columns.find((c) => c.name === 'region')!.enumValues)
        expect(byColumn.region).toMatchObject({ values: ['EMEA', 'AMER', 'APAC'], source: 'enum' });
      else expect(byColumn.region).toMatchObject({ values: ['AMER', 'EMEA'], source: 'sample' });
      pass();
    });

    it('accepts and runs every kind of read (join, CTE, window, GROUP BY, subquery, the view, EXISTS)', async () => {
      expect(db.sql.reads.length).toBeGreaterThanOrEqual(6);
      for (const sql of db.sql.reads) {
        const verdict = await guardForDialect(engine.dialect, sql);
        expect(verdict, sql).toMatchObject({ ok: true });
        if (!verdict.ok) continue;
        const result = await db.connector.execute(verdict.sql, RUN);
        expect(result.rowCount, sql).toBeGreaterThan(0);
        pass();
      }
    });
  });
}
