/**
 * One real build per file (a few seconds): first a child process is killed in the middle of a
 * build over a fake older-version demo, then the build under test runs, cleans up after it and
 * replaces the old demo. Queries then check the database itself.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isSqlrecallError } from '../core/errors.js';
import { DEMO_ORDER_BATCHES } from './generate.js';
import {
  type CreateDemoResult,
  createDemoDatabase,
  DEMO_MARKER_FILE,
  DEMO_PROGRESS_STEPS,
  DEMO_SCHEMA_VERSION,
} from './load.js';

let home: string;
let target: string;
let killed: { pid: number; leftovers: string[]; targetAfterKill: string[] };
let result: CreateDemoResult;
let buildMs: number;
const progress: [number, number, string][] = [];
/** Whether the build directory held a cluster yet when the first progress report came. */
let clusterAtFirstReport: boolean | undefined;
let db: PGlite;

/** Starts a build in a child process and SIGKILLs it once it reports having loaded customers. */
async function killMidBuild(dataDir: string): Promise<number> {
  const moduleUrl = pathToFileURL(fileURLToPath(new URL('./load.ts', import.meta.url))).href;
  const code = `const { createDemoDatabase } = await import(${JSON.stringify(moduleUrl)});
await createDemoDatabase(${JSON.stringify(dataDir)}, { onProgress: (d, t, label) => console.log(label) });`;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolvePid, reject) => {
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('customers')) child.kill('SIGKILL');
    });
    child.on('exit', (exitCode, signal) => {
      if (signal === 'SIGKILL') resolvePid(child.pid as number);
      else reject(new Error(`child was not killed mid-build (exit ${exitCode}, output ${out})`));
    });
  });
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'sqlrecall-demo-'));
  target = join(home, 'demo');
  // A fake demo of an older version: must be replaced, and must survive the killed build intact.
  await mkdir(target);
  await writeFile(
    join(target, DEMO_MARKER_FILE),
    JSON.stringify({ version: 0, seed: 1, counts: {}, buildMs: 0 }),
  );
  await writeFile(join(target, 'old-junk.txt'), 'from version 0');

  const pid = await killMidBuild(target);
  killed = { pid, leftovers: await readdir(home), targetAfterKill: (await readdir(target)).sort() };

  const started = performance.now();
  result = await createDemoDatabase(target, {
    onProgress: (d, t, l) => {
      if (progress.length === 0)
        clusterAtFirstReport = readdirSync(home)
          .filter((name) => name.startsWith(`.demo.building-${process.pid}-`))
          .some((name) => existsSync(join(home, name, 'PG_VERSION')));
      progress.push([d, t, l]);
    },
  });
  buildMs = performance.now() - started;
  process.stderr.write(`demo build took ${Math.round(buildMs)} ms: ${JSON.stringify(result.counts)}\n`);
  db = new PGlite(target);
  await db.waitReady;
});

afterAll(async () => {
  await db?.close();
  if (home) await rm(home, { recursive: true, force: true });
});

async function scalar(sql: string): Promise<unknown> {
  const res = await db.query<Record<string, unknown>>(sql);
  return Object.values(res.rows[0] ?? {})[0];
}

describe('createDemoDatabase: interrupted and replaced builds', () => {
  it('left the old demo untouched and a build directory behind when killed mid-build', () => {
    expect(killed.targetAfterKill).toEqual(['old-junk.txt', DEMO_MARKER_FILE].sort());
    expect(killed.leftovers).toContain('demo');
    expect(killed.leftovers.some((n) => n.startsWith(`.demo.building-${killed.pid}-`))).toBe(true);
  });

  it('built the demo, removed the stale build and the old version, left no temp directory', async () => {
    expect(result.created).toBe(true);
    expect(result.counts).toEqual({
      customers: 2400,
      products: 200,
      orders: 24000,
      order_items: expect.any(Number),
    });
    expect(await readdir(home)).toEqual(['demo']);
    expect(existsSync(join(target, 'old-junk.txt'))).toBe(false);
    const marker = JSON.parse(await readFile(join(target, DEMO_MARKER_FILE), 'utf8'));
    expect(marker).toMatchObject({ version: DEMO_SCHEMA_VERSION, counts: result.counts });
    expect(buildMs).toBeLessThan(45_000);
  });

  it('dates the orders in the two years up to yesterday, and says so', async () => {
    const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    expect(result.range?.lastDay).toBe(yesterday);
    expect(
      String(await scalar("SELECT to_char(min(order_date), 'YYYY-MM-DD') FROM orders")) >=
        result.range!.firstDay,
    ).toBe(true);
    expect(
      String(await scalar("SELECT to_char(max(order_date), 'YYYY-MM-DD') FROM orders")) <= yesterday,
    ).toBe(true);
    expect(
      Number(
        await scalar(
          "SELECT count(*) FROM orders WHERE order_date >= date_trunc('month', current_date) - interval '1 month' AND order_date < date_trunc('month', current_date)",
        ),
      ),
    ).toBeGreaterThan(0);
    expect(
      await scalar(
        "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = current_database()",
      ),
    ).toContain(`${result.range!.firstDay} to ${yesterday}`);
  });

  it('reported every progress step in order, the first before any slow work', () => {
    expect(progress.map(([done]) => done)).toEqual(
      Array.from({ length: DEMO_PROGRESS_STEPS + 1 }, (_, i) => i),
    );
    expect(new Set(progress.map(([, total]) => total))).toEqual(new Set([DEMO_PROGRESS_STEPS]));
    expect(progress[0]?.[2]).toBe('start');
    expect(clusterAtFirstReport).toBe(false); // reported before the database files were made
    // The orders are loaded (and reported) batch by batch.
    expect(progress.map(([, , label]) => label)).toContain(
      `orders ${DEMO_ORDER_BATCHES}/${DEMO_ORDER_BATCHES}`,
    );
  });

  it('describes the dates of its real rows in the orders comment, not constants', async () => {
    const first = String(await scalar("SELECT to_char(min(order_date), 'YYYY-MM-DD') FROM orders"));
    const last = String(await scalar("SELECT to_char(max(order_date), 'YYYY-MM-DD') FROM orders"));
    const comment = String(await scalar("SELECT obj_description('orders'::regclass, 'pg_class')"));
    expect(comment).toContain(`from ${first} to ${last}`);
    expect(comment).not.toMatch(/2024-01-01|2025-12-31/);
  });
});

describe('createDemoDatabase: the database', () => {
  it('holds the reported row counts', async () => {
    for (const [table, count] of Object.entries(result.counts)) {
      expect(Number(await scalar(`SELECT count(*) FROM ${table}`)), table).toBe(count);
    }
    expect(Number(await scalar(`SELECT count(*) FROM customers WHERE country = 'India'`))).toBeGreaterThan(
      500,
    );
    expect(
      await scalar(`SELECT string_agg(DISTINCT segment::text, ',' ORDER BY segment::text) FROM customers`),
    ).toBe('retail,wholesale');
  });

  it('keeps every order total equal to the sum of its items', async () => {
    expect(
      Number(
        await scalar(`SELECT count(*) FROM orders o
          WHERE o.total_amount IS DISTINCT FROM (SELECT sum(i.quantity * i.unit_price) FROM order_items i WHERE i.order_id = o.id)`),
      ),
    ).toBe(0);
    expect(
      Number(
        await scalar(
          'SELECT count(*) FROM orders o WHERE NOT EXISTS (SELECT 1 FROM order_items i WHERE i.order_id = o.id)',
        ),
      ),
    ).toBe(0);
  });

  it('has valid and enforced foreign keys, with indexes on them', async () => {
    expect(
      Number(
        await scalar(
          'SELECT count(*) FROM orders o LEFT JOIN customers c ON c.id = o.customer_id WHERE c.id IS NULL',
        ),
      ),
    ).toBe(0);
    expect(
      Number(
        await scalar(
          'SELECT count(*) FROM order_items i LEFT JOIN products p ON p.id = i.product_id WHERE p.id IS NULL',
        ),
      ),
    ).toBe(0);
    const fks = await db.query<{ conname: string }>(
      `SELECT conname FROM pg_constraint WHERE contype = 'f' ORDER BY 1`,
    );
    expect(fks.rows.map((r) => r.conname)).toEqual([
      'order_items_order_id_fkey',
      'order_items_product_id_fkey',
      'orders_customer_id_fkey',
    ]);
    await expect(db.query('INSERT INTO order_items VALUES (1, 99999, 1, 1.00)')).rejects.toThrow(
      /foreign key/,
    );
    await expect(
      db.query(
        'INSERT INTO orders (customer_id, order_date, status, payment_method, total_amount) VALUES (1, now(), $1, $2, 0)',
        ['lost', 'card'],
      ),
    ).rejects.toThrow(/enum/);
    const indexes = await db.query<{ indexname: string }>(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'public'`,
    );
    const names = indexes.rows.map((r) => r.indexname);
    expect(names).toEqual(
      expect.arrayContaining(['orders_customer_id_idx', 'order_items_product_id_idx', 'order_items_pkey']),
    );
    // Identity sequences continue after the loaded ids.
    expect(Number(await scalar(`SELECT nextval(pg_get_serial_sequence('orders', 'id'))`))).toBe(
      result.counts.orders! + 1,
    );
  });

  it('describes every table and column with a comment, and has planner statistics', async () => {
    const missing = await db.query(`SELECT c.relname, a.attname FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
      JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
      WHERE c.relkind = 'r' AND col_description(c.oid, a.attnum) IS NULL`);
    expect(missing.rows).toEqual([]);
    const tables = await db.query<{ relname: string; comment: string | null; reltuples: number }>(`
      SELECT c.relname, obj_description(c.oid, 'pg_class') AS comment, c.reltuples FROM pg_class c
      JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public' WHERE c.relkind = 'r' ORDER BY 1`);
    expect(tables.rows.map((r) => r.relname)).toEqual(['customers', 'order_items', 'orders', 'products']);
    for (const t of tables.rows) {
      expect(t.comment, t.relname).toBeTruthy();
      expect(Number(t.reltuples), t.relname).toBeGreaterThan(0);
    }
    const enums = await db.query(`SELECT typname FROM pg_type WHERE typtype = 'e' ORDER BY 1`);
    expect(enums.rows).toEqual([{ typname: 'customer_segment' }, { typname: 'order_status' }]);
  });

  it('is skewed like a real shop', async () => {
    const top = Number(
      await scalar(`WITH per AS (SELECT c.id, count(o.id) AS n FROM customers c LEFT JOIN orders o ON o.customer_id = c.id GROUP BY c.id),
        ranked AS (SELECT n, ntile(10) OVER (ORDER BY n DESC) AS decile FROM per)
        SELECT sum(n) FILTER (WHERE decile = 1)::float / sum(n) FROM ranked`),
    );
    expect(top).toBeGreaterThan(0.3);
    const highValue = Number(await scalar('SELECT avg((total_amount > 10000)::int)::float FROM orders'));
    expect(highValue).toBeGreaterThan(0.02);
    expect(highValue).toBeLessThan(0.15);
  });
});

describe('createDemoDatabase: repeated and hostile calls', () => {
  it('does nothing on a second call, quickly and without progress', async () => {
    const calls: string[] = [];
    const started = performance.now();
    const again = await createDemoDatabase(target, { onProgress: (_d, _t, l) => calls.push(l) });
    expect(again).toEqual({ created: false, counts: result.counts, range: result.range });
    expect(performance.now() - started).toBeLessThan(500);
    expect(calls).toEqual([]);
    expect(await readdir(home)).toEqual(['demo']);
  });

  it('refuses a non-empty directory that is not a demo and leaves it alone', async () => {
    const other = join(home, 'not-a-demo');
    await mkdir(other);
    await writeFile(join(other, 'precious.txt'), 'keep me');
    const error = await createDemoDatabase(other).catch((e: unknown) => e);
    expect(isSqlrecallError(error, 'config')).toBe(true);
    expect(await readFile(join(other, 'precious.txt'), 'utf8')).toBe('keep me');
    expect((await readdir(home)).sort()).toEqual(['demo', 'not-a-demo']);
    await rm(other, { recursive: true });
  });

  it('refuses a path that is a file, or a marker that is garbage', async () => {
    const file = join(home, 'a-file');
    await writeFile(file, 'x');
    expect(isSqlrecallError(await createDemoDatabase(file).catch((e: unknown) => e), 'config')).toBe(true);
    expect(await readFile(file, 'utf8')).toBe('x');
    await rm(file);
    const bogus = join(home, 'bogus');
    await mkdir(bogus);
    await writeFile(join(bogus, DEMO_MARKER_FILE), '{"version": "1"');
    expect(isSqlrecallError(await createDemoDatabase(bogus).catch((e: unknown) => e), 'config')).toBe(true);
    await rm(bogus, { recursive: true });
  });
});
