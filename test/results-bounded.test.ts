/**
 * Issue 14, bounded results: the byte budget is enforced while rows stream from the cursor
 * (truncated with `max_bytes`, or `result_too_large` when not even one row fits), on both engines
 * and through `sql --json`; a busy pool is `db_busy`, distinct from an unreachable database.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqlrecallError } from '../src/core/errors.js';
import { createPostgresConnector, PoolSlots } from '../src/databases/postgres/connector.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

/** 600 rows of 1000 bytes each (plus the id). */
const WIDE = "SELECT g AS id, repeat('x', 1000) AS wide FROM generate_series(1, 600) g";

async function failure(promise: Promise<unknown>): Promise<SqlrecallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SqlrecallError);
    return error as SqlrecallError;
  }
  throw new Error('expected the call to fail');
}

describe.each(ENGINES)('byte budget on %s', (engine) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(engine, 'sqlrecall_bounded');
  });
  afterAll(async () => {
    await db?.dispose();
  });

  it('stops at the budget while fetching and says why', async () => {
    const result = await db.connector.execute(WIDE, { maxRows: 1000, timeoutMs: 10_000, maxBytes: 50_000 });
    expect(result.truncated).toBe(true);
    expect(result.truncatedReason).toBe('max_bytes');
    // ids 1..9 are 1 byte, 10..49 two: 9 × 1001 + 40 × 1002 = 49 089 ≤ 50 000; one more row passes it
    expect(result.rowCount).toBe(49);
    expect(result.rows.at(-1)?.[0]).toBe(49);
    expect(result.rows.every((row) => row[1] === 'x'.repeat(1000))).toBe(true);
  });

  it('the row cap still says max_rows; a result under both limits is whole', async () => {
    const capped = await db.connector.execute(WIDE, { maxRows: 10, timeoutMs: 10_000, maxBytes: 50_000 });
    expect(capped).toMatchObject({ rowCount: 10, truncated: true, truncatedReason: 'max_rows' });
    const whole = await db.connector.execute(WIDE, { maxRows: 600, timeoutMs: 10_000, maxBytes: 700_000 });
    expect(whole.rowCount).toBe(600);
    expect(whole.truncated).toBe(false);
    expect(whole).not.toHaveProperty('truncatedReason');
  });

  it('refuses with result_too_large when the first row alone is over the budget', async () => {
    const error = await failure(
      db.connector.execute("SELECT repeat('y', 5000) AS big", {
        maxRows: 10,
        timeoutMs: 10_000,
        maxBytes: 4096,
      }),
    );
    expect(error.code).toBe('result_too_large');
    expect(error.exitCode).toBe(4);
    expect(error.message).toContain('4 KiB');
  });
});

describe('sql --json under a byte budget', () => {
  let home: string;
  beforeAll(() => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-bounded-'));
    // An existing empty folder starts a new embedded database (a missing one is refused).
    mkdirSync(join(home, 'db'));
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('prints the truncated rows with truncatedReason max_bytes (exit 0)', async () => {
    const run = await runCliInProcess(['sql', '--json', '--max-result-bytes', '50000', WIDE], {
      env: { SQLRECALL_HOME: home, DATABASE_URL: `pglite:${join(home, 'db')}` },
    });
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc).toMatchObject({ rowCount: 49, truncated: true, truncatedReason: 'max_bytes' });
    expect(doc.rows).toHaveLength(49);
  }, 60_000);

  it('a first row over the budget is result_too_large, exit 4, never an internal error', async () => {
    const run = await runCliInProcess(['sql', '--json', "SELECT repeat('y', 5000)"], {
      env: {
        SQLRECALL_HOME: home,
        DATABASE_URL: `pglite:${join(home, 'db')}`,
        SQLRECALL_MAX_RESULT_BYTES: '4096',
      },
    });
    expect(run.code).toBe(4);
    expect(JSON.parse(run.stdout).error.code).toBe('result_too_large');
  }, 60_000);
});

describe('a busy pool is db_busy', () => {
  it('queues up to the bound, then refuses with "busy: N queries running"', async () => {
    const slots = new PoolSlots(2, 1);
    await slots.acquire(1000);
    await slots.acquire(1000);
    const queued = slots.acquire(1000);
    const refused = await failure(slots.acquire(1000));
    expect(refused.code).toBe('db_busy');
    expect(refused.message).toContain('busy: 2 queries running, 1 waiting');
    expect(refused.exitCode).toBe(4);
    expect(refused.httpStatus).toBe(503);
    slots.release();
    await queued; // the waiter got the freed slot
    expect(slots.busy).toBe(2);
    const timedOut = await failure(slots.acquire(50));
    expect(timedOut.code).toBe('db_busy');
  });

  it.skipIf(!TEST_DATABASE_URL)(
    'on a server, four concurrent long queries: one waits, none "cannot connect"',
    async () => {
      const connector = createPostgresConnector({ url: TEST_DATABASE_URL! });
      try {
        const started = Date.now();
        const results = await Promise.all(
          Array.from({ length: 4 }, () =>
            connector.execute('SELECT true AS slept FROM pg_sleep(0.5)', { maxRows: 1, timeoutMs: 10_000 }),
          ),
        );
        expect(results.map((r) => r.rows)).toEqual(Array(4).fill([[true]]));
        expect(Date.now() - started).toBeGreaterThanOrEqual(1000); // the fourth waited for a slot
      } finally {
        await connector.close();
      }
    },
    30_000,
  );
});
