/**
 * Creates the embedded demo shop database (PGlite) on first run. The database is built in a
 * temporary sibling directory and renamed into place when complete, so an interrupted run never
 * leaves a half-made demo behind; a marker file inside the data directory makes later runs a cheap
 * no-op without starting PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../core/errors.js';
import { processAlive } from '../core/process.js';
import { toCopyText } from './copy-text.js';
import { DEMO_CONSTRAINTS_SQL, DEMO_TABLES_SQL } from './ddl.js';
import { DEFAULT_DEMO_SEED, type DemoData, type DemoRange, demoRange, generateDemoData } from './generate.js';

/**
 * Version of the demo's schema and data. Bump it whenever the generator, catalog or DDL changes:
 * an existing demo with another version is rebuilt on the next run.
 */
export const DEMO_SCHEMA_VERSION = 2;

/** Name of the marker file written into a finished demo data directory. */
export const DEMO_MARKER_FILE = 'sqlrecall-demo.json';

/** Number of progress steps reported by {@link createDemoDatabase}. */
export const DEMO_PROGRESS_STEPS = 8;

/** Contents of {@link DEMO_MARKER_FILE}. */
export interface DemoMarker {
  version: number;
  seed: number;
  counts: Record<string, number>;
  /** Wall-clock time the build took, in milliseconds. */
  buildMs: number;
  /** The order dates (the two years up to the day before creation). */
  range?: DemoRange;
}

/** Options of {@link createDemoDatabase}. */
export interface CreateDemoOptions {
  /**
   * Called after each build step with `done` of `total` ({@link DEMO_PROGRESS_STEPS}) steps and a
   * short label of the step just finished (e.g. `'orders'`). Not called when the demo already exists.
   */
  onProgress?: (done: number, total: number, label: string) => void;
  /** The creation day's clock; default `new Date()`. The order dates end the day before it. */
  now?: () => Date;
}

/** Result of {@link createDemoDatabase}. */
export interface CreateDemoResult {
  /** True when this call built the database; false when a current demo was already there. */
  created: boolean;
  /** Row counts per table (`customers`, `products`, `orders`, `order_items`). */
  counts: Record<string, number>;
  /** The order dates of the demo (absent for a demo whose marker predates it). */
  range?: DemoRange;
}

type Column<T> = [name: string, value: (row: T) => string | number];

async function copyRows<T>(
  db: PGlite,
  table: string,
  columns: Column<T>[],
  rows: readonly T[],
): Promise<void> {
  const blob = new Blob([toCopyText(rows.map((row) => columns.map(([, get]) => get(row))))]);
  const names = columns.map(([name]) => name).join(', ');
  await db.query(`COPY ${table} (${names}) FROM '/dev/blob'`, [], { blob });
}

async function readMarker(dataDir: string): Promise<DemoMarker | undefined> {
  try {
    const parsed = JSON.parse(await readFile(join(dataDir, DEMO_MARKER_FILE), 'utf8')) as Partial<DemoMarker>;
    if (typeof parsed.version !== 'number' || typeof parsed.counts !== 'object' || parsed.counts === null) {
      return undefined;
    }
    return parsed as DemoMarker;
  } catch {
    return undefined;
  }
}

/** Entries of `dir`, or undefined when it does not exist. @throws SqlrecallError `config` when it is not a directory. */
async function listDir(dir: string): Promise<string[] | undefined> {
  try {
    return await readdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new SqlrecallError(
      'config',
      `Cannot use ${dir} for the demo database: it is not a readable directory.`,
      {
        cause: error,
        details: { hint: 'Point SQLRECALL_HOME at a writable directory.' },
      },
    );
  }
}

/** Removes build directories left by runs that were killed (their process no longer exists). */
async function removeStaleBuilds(parent: string, prefix: string): Promise<void> {
  for (const name of (await listDir(parent)) ?? []) {
    if (!name.startsWith(prefix)) continue;
    const pid = Number(name.slice(prefix.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && !processAlive(pid)) {
      await rm(join(parent, name), { recursive: true, force: true });
    }
  }
}

/** Builds the whole demo into `dir` (which must not exist yet) and returns the row counts. */
async function buildInto(
  dir: string,
  data: DemoData,
  range: DemoRange,
  progress: (label: string) => void,
): Promise<Record<string, number>> {
  const db = new PGlite(dir);
  try {
    await db.waitReady;
    progress('initdb');
    await db.exec(`BEGIN;${DEMO_TABLES_SQL}`);
    await db.exec(`DO $$ BEGIN EXECUTE format('COMMENT ON DATABASE %I IS %L', current_database(),
      'sqlrecall demo shop (version ${DEMO_SCHEMA_VERSION}): customers, products, orders and order items, ${range.firstDay} to ${range.lastDay}'); END $$;`);
    progress('schema');
    await copyRows(
      db,
      'customers',
      [
        ['id', (c) => c.id],
        ['name', (c) => c.name],
        ['email', (c) => c.email],
        ['city', (c) => c.city],
        ['country', (c) => c.country],
        ['segment', (c) => c.segment],
      ],
      data.customers,
    );
    progress('customers');
    await copyRows(
      db,
      'products',
      [
        ['id', (p) => p.id],
        ['name', (p) => p.name],
        ['category', (p) => p.category],
        ['price', (p) => p.price],
      ],
      data.products,
    );
    progress('products');
    await copyRows(
      db,
      'orders',
      [
        ['id', (o) => o.id],
        ['customer_id', (o) => o.customerId],
        ['order_date', (o) => o.orderDate],
        ['status', (o) => o.status],
        ['payment_method', (o) => o.paymentMethod],
        ['total_amount', (o) => o.totalAmount],
      ],
      data.orders,
    );
    progress('orders');
    await copyRows(
      db,
      'order_items',
      [
        ['order_id', (i) => i.orderId],
        ['product_id', (i) => i.productId],
        ['quantity', (i) => i.quantity],
        ['unit_price', (i) => i.unitPrice],
      ],
      data.orderItems,
    );
    progress('order_items');
    await db.exec(`${DEMO_CONSTRAINTS_SQL}COMMIT;`);
    progress('constraints');
    await db.exec('ANALYZE;');
    progress('analyze');
  } finally {
    await db.close();
  }
  return {
    customers: data.customers.length,
    products: data.products.length,
    orders: data.orders.length,
    order_items: data.orderItems.length,
  };
}

/**
 * Creates the demo shop database in the PGlite data directory `dataDir`, unless a demo of the
 * current {@link DEMO_SCHEMA_VERSION} is already there (then nothing is touched and `created` is
 * false). The build takes a few seconds (generation plus COPY into PGlite). A demo of an older
 * version is replaced. Concurrent calls are safe: the first to finish wins, the others report
 * `created: false`.
 * @param dataDir PGlite data directory, e.g. `~/.sqlrecall/demo`; its parent is created if needed.
 * @throws SqlrecallError `config` when `dataDir` exists, is not empty and is not a demo database
 *   (it is never overwritten); `internal` when the build fails (the partial build is removed).
 */
export async function createDemoDatabase(
  dataDir: string,
  options: CreateDemoOptions = {},
): Promise<CreateDemoResult> {
  const target = resolve(dataDir);
  const existing = await readMarker(target);
  if (existing?.version === DEMO_SCHEMA_VERSION)
    return { created: false, counts: existing.counts, ...(existing.range ? { range: existing.range } : {}) };
  const entries = await listDir(target);
  if (existing === undefined && entries !== undefined && entries.length > 0) {
    throw new SqlrecallError(
      'config',
      `The directory ${target} exists and does not hold the sqlrecall demo database.`,
      {
        details: {
          hint: 'Remove that directory or point SQLRECALL_HOME somewhere else, then run `sqlrecall demo` again.',
        },
      },
    );
  }

  const parent = dirname(target);
  const prefix = `.${basename(target)}.building-`;
  const temp = join(parent, `${prefix}${process.pid}-${randomBytes(4).toString('hex')}`);
  const started = performance.now();
  let step = 0;
  const progress = (label: string): void => {
    step += 1;
    options.onProgress?.(step, DEMO_PROGRESS_STEPS, label);
  };
  try {
    await mkdir(parent, { recursive: true });
    await removeStaleBuilds(parent, prefix);
    const range = demoRange(options.now?.() ?? new Date());
    const data = generateDemoData(DEFAULT_DEMO_SEED, range);
    const counts = await buildInto(temp, data, range, progress);
    const marker: DemoMarker = {
      version: DEMO_SCHEMA_VERSION,
      seed: DEFAULT_DEMO_SEED,
      counts,
      buildMs: Math.round(performance.now() - started),
      range,
    };
    await writeFile(join(temp, DEMO_MARKER_FILE), `${JSON.stringify(marker, null, 2)}\n`);
    if (existing !== undefined) {
      // An older demo version: move it aside, swap the new one in, then delete the old one.
      const old = join(parent, `${prefix}${process.pid}-old-${randomBytes(4).toString('hex')}`);
      await rename(target, old);
      await rename(temp, target);
      await rm(old, { recursive: true, force: true });
      return { created: true, counts, range };
    }
    // An empty target directory (e.g. made by the caller) is replaced; rmdir never removes a non-empty one.
    if (entries !== undefined) await rmdir(target).catch(() => undefined);
    try {
      await rename(temp, target); // fails if another run got there first
    } catch (error) {
      const winner = await readMarker(target);
      if (winner?.version === DEMO_SCHEMA_VERSION)
        return { created: false, counts: winner.counts, ...(winner.range ? { range: winner.range } : {}) };
      throw error;
    }
    return { created: true, counts, range };
  } catch (error) {
    if (error instanceof SqlrecallError) throw error;
    throw new SqlrecallError('internal', `Could not create the demo database in ${target}.`, {
      cause: error,
    });
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
}
