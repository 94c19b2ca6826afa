/**
 * Creates the embedded demo shop database (PGlite) on first run. The database is built in a
 * temporary sibling directory and renamed into place when complete, so an interrupted run never
 * leaves a half-made demo behind; a marker file inside the data directory makes later runs a cheap
 * no-op without starting PostgreSQL.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import { SqlrecallError } from '../core/errors.js';
import { processAlive } from '../core/process.js';
import { openPglite } from '../databases/pglite/sharing.js';
import { toCopyText } from './copy-text.js';
import { DEMO_CONSTRAINTS_SQL, DEMO_TABLES_SQL, describeDemoDatesSql } from './ddl.js';
import {
  DEFAULT_DEMO_SEED,
  DEMO_ORDER_BATCHES,
  type DemoRange,
  type DemoShop,
  demoRange,
  generateDemoShop,
} from './generate.js';
import { DEMO_MARKER_FILE } from './marker.js';

/**
 * Version of the demo's schema and data. Bump it whenever the generator, catalog or DDL changes:
 * an existing demo with another version is rebuilt on the next run.
 */
export const DEMO_SCHEMA_VERSION = 3;

export { DEMO_MARKER_FILE };

/**
 * Number of progress steps reported by {@link createDemoDatabase} after its first report (step 0,
 * `start`, before any slow work): the cluster, the schema, customers, products, each order batch,
 * constraints, statistics.
 */
export const DEMO_PROGRESS_STEPS = 6 + DEMO_ORDER_BATCHES;

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
   * Called once as the build starts (`done` 0, label `start`, before any slow work) and after each
   * build step with `done` of `total` ({@link DEMO_PROGRESS_STEPS}) steps and a short label of the
   * step just finished (e.g. `'orders 3/12'`). Not called when the demo already exists.
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

/** Loads `rows` into `table` with one COPY (the rows of one batch at most). */
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

/**
 * Builds the whole demo into `dir` (which must not exist yet) and returns the row counts. The
 * database starts from the installation's initialized cluster (no initdb, `template.ts`) and is
 * loaded one order batch at a time, so memory holds one batch, not the whole shop.
 */
async function buildInto(
  dir: string,
  shop: DemoShop,
  progress: (label: string) => void,
): Promise<Record<string, number>> {
  const db = await openPglite(dir, false);
  const counts = {
    customers: shop.customers.length,
    products: shop.products.length,
    orders: 0,
    order_items: 0,
  };
  try {
    progress('cluster');
    await db.exec(`BEGIN;${DEMO_TABLES_SQL}`);
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
      shop.customers,
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
      shop.products,
    );
    progress('products');
    let batchNumber = 0;
    for (const batch of shop.orderBatches) {
      batchNumber += 1;
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
        batch.orders,
      );
      await copyRows(
        db,
        'order_items',
        [
          ['order_id', (i) => i.orderId],
          ['product_id', (i) => i.productId],
          ['quantity', (i) => i.quantity],
          ['unit_price', (i) => i.unitPrice],
        ],
        batch.orderItems,
      );
      counts.orders += batch.orders.length;
      counts.order_items += batch.orderItems.length;
      progress(`orders ${batchNumber}/${DEMO_ORDER_BATCHES}`);
    }
    // What the model reads about the dates comes from the rows just loaded, never a constant.
    await db.exec(`${DEMO_CONSTRAINTS_SQL}${describeDemoDatesSql(DEMO_SCHEMA_VERSION)}COMMIT;`);
    progress('constraints');
    await db.exec('ANALYZE;');
    progress('analyze');
  } finally {
    await db.close();
  }
  return counts;
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
  options.onProgress?.(0, DEMO_PROGRESS_STEPS, 'start');
  try {
    await mkdir(parent, { recursive: true });
    await removeStaleBuilds(parent, prefix);
    const range = demoRange(options.now?.() ?? new Date());
    const counts = await buildInto(temp, generateDemoShop(DEFAULT_DEMO_SEED, range), progress);
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
