/**
 * The shared cache of evaluated defog dumps (scripts/lib/defog-dumps.mjs): a dump is evaluated in
 * PGlite once and then served from `<cache>/<sha256>.json`; a changed dump, an expired, corrupt or
 * other-day entry is evaluated again; a lock of a dead loader is taken over, a live one is waited
 * for; loaders started side by side evaluate each dump exactly once; and a loader fed from the
 * cache writes the same tables and rows as one that evaluates the dump itself.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  DUMPS_CACHE_FORMAT,
  DUMPS_CACHE_TTL_MS,
  dumpCacheKey,
  evaluatedDefogDump,
} from '../scripts/lib/defog-dumps.mjs';
import { ROOT } from './support/cli.js';
import { betterSqliteInstalled } from './support/conformance/sqlite.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';
import { tempDir } from './support/temp-dir.js';

// @ts-expect-error: a plain JavaScript script without type declarations
const { loadDefogIntoSqlite } = (await import('../scripts/load-defog-sqlite.mjs')) as {
  loadDefogIntoSqlite: (options: {
    names: string[];
    dumpsDir: string;
    outDir: string;
    cacheDir?: string | false;
  }) => Promise<{ name: string; file: string; tables: number; rows: number }[]>;
};

/** A small dump with what the real ones hold: computed dates, a composite key, NULLs, quoted names. */
const SHOP = `
CREATE TABLE customers (id integer PRIMARY KEY, name varchar(40) NOT NULL, vip boolean, joined date);
CREATE TABLE "odd ""name""" (a integer, b text, seen timestamp with time zone, amount numeric(10, 2),
  PRIMARY KEY (b, a));
INSERT INTO customers VALUES (1, 'Asha', true, CURRENT_DATE - INTERVAL '5 months'), (2, 'Bob', NULL, NULL);
INSERT INTO "odd ""name""" VALUES (1, 'x', '2024-01-02 03:04:05+02', 12.5), (2, 'it''s', NULL, NULL);
`;
const OTHER = `CREATE TABLE t (id integer PRIMARY KEY, v text); INSERT INTO t VALUES (1, 'one'), (2, 'two');`;
const THIRD = `CREATE TABLE u (id bigint, d date); INSERT INTO u VALUES (7, CURRENT_DATE);`;

function dumps(files: Record<string, string>): string {
  const dir = tempDir('sqlrecall-dumps-');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, `${name}.sql`), text);
  return dir;
}

const cacheFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.json'));
const today = () => new Date().toISOString().slice(0, 10);

/** Runs `node -e code` and resolves with its exit code, stdout and stderr. */
function node(code: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', code], { cwd: ROOT });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', fail);
    child.on('close', (status) => done({ code: status, stdout, stderr }));
  });
}

describe('evaluated defog dumps cache', () => {
  it('evaluates a dump once, then serves the same tables from the file named by its hash', async () => {
    const dumpsDir = dumps({ shop: SHOP });
    const cacheDir = tempDir('sqlrecall-dumps-cache-');
    const cold = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
    expect(cold.cached).toBe(false);
    expect(cacheFiles(cacheDir)).toEqual([`${dumpCacheKey(SHOP)}.json`]);
    expect(readdirSync(cacheDir).filter((f) => !f.endsWith('.json'))).toEqual([]); // no lock, no partial file left
    const warm = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
    expect(warm.cached).toBe(true);
    expect(warm.tables).toEqual(cold.tables);
    expect(warm.day).toBe(today());

    const [customers, odd] = cold.tables;
    expect(customers).toMatchObject({ schema: 'public', name: 'customers', primary: ['id'] });
    expect(customers!.columns.map((c) => c.data_type)).toEqual([
      'integer',
      'character varying',
      'boolean',
      'date',
    ]);
    expect(customers!.columns[1]!.character_maximum_length).toBe(40);
    expect(customers!.rows[1]).toEqual(['2', 'Bob', null, null]);
    // The computed date is today's, evaluated by PostgreSQL.
    const fiveMonthsAgo = new Date(`${today()}T00:00:00Z`);
    fiveMonthsAgo.setUTCMonth(fiveMonthsAgo.getUTCMonth() - 5);
    expect(customers!.rows[0]![3]).toBe(fiveMonthsAgo.toISOString().slice(0, 10));
    expect(odd).toMatchObject({ name: 'odd "name"', primary: ['b', 'a'] });
    expect(odd!.rows).toEqual([
      ['1', 'x', '2024-01-02 01:04:05+00', '12.50'],
      ['2', "it's", null, null],
    ]);
  });

  it('evaluates again when the dump changed, the entry expired, is corrupt or is from another day', async () => {
    const dumpsDir = dumps({ shop: OTHER });
    const cacheDir = tempDir('sqlrecall-dumps-cache-');
    const file = join(cacheDir, `${dumpCacheKey(OTHER)}.json`);
    expect((await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir })).cached).toBe(false);

    // Expired: older than the time to live.
    const old = (Date.now() - DUMPS_CACHE_TTL_MS - 60_000) / 1000;
    utimesSync(file, old, old);
    expect((await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir })).cached).toBe(false);
    expect((await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir })).cached).toBe(true);

    // Corrupt: a half-written file (never produced by the loaders, which rename whole files).
    writeFileSync(file, '{"format":"sqlrecall-defog-dump/1","tables":[{"name":"t","rows":[[');
    const afterCorrupt = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
    expect(afterCorrupt.cached).toBe(false);
    expect(afterCorrupt.tables[0]!.rows).toEqual([
      ['1', 'one'],
      ['2', 'two'],
    ]);

    // A forged entry of another day under today's name, and one of another format: both refused.
    for (const forged of [
      { format: DUMPS_CACHE_FORMAT, day: '2000-01-01', tables: [] },
      { format: 'other/9', day: today(), tables: [] },
    ]) {
      writeFileSync(file, JSON.stringify(forged));
      const again = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
      expect(again.cached).toBe(false);
      expect(again.tables).toHaveLength(1);
    }

    // A changed dump has a new name: the old entry is never served for it.
    writeFileSync(join(dumpsDir, 'shop.sql'), `${OTHER}\nINSERT INTO t VALUES (3, 'three');`);
    const changed = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
    expect(changed.cached).toBe(false);
    expect(changed.tables[0]!.rows).toHaveLength(3);
    expect(cacheFiles(cacheDir)).toHaveLength(2);
  }, 180_000);

  it('takes over the lock of a loader that died, and waits for a live one instead of evaluating', async () => {
    const dumpsDir = dumps({ shop: OTHER });
    const cacheDir = tempDir('sqlrecall-dumps-cache-');
    const key = dumpCacheKey(OTHER);
    const dead = await new Promise<number>((done) => {
      const child = spawn(process.execPath, ['-e', '0']);
      child.on('close', () => done(child.pid!));
    });
    writeFileSync(join(cacheDir, `${key}.lock`), `${dead}\n`);
    const started = Date.now();
    const taken = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir });
    expect(taken.cached).toBe(false);
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(existsSync(join(cacheDir, `${key}.lock`))).toBe(false);

    // A live holder (this process): the loader waits and takes the holder's file when it appears.
    const waitDir = tempDir('sqlrecall-dumps-cache-');
    writeFileSync(join(waitDir, `${key}.lock`), `${process.pid}\n`);
    const marker = [{ ...taken.tables[0]!, rows: [['42', 'written by the holder']] }];
    setTimeout(() => {
      const partial = join(waitDir, 'partial.tmp');
      writeFileSync(partial, JSON.stringify({ format: DUMPS_CACHE_FORMAT, day: today(), tables: marker }));
      renameSync(partial, join(waitDir, `${key}.json`));
    }, 500);
    const waited = await evaluatedDefogDump({ dumpsDir, name: 'shop', cacheDir: waitDir });
    expect(waited.cached).toBe(true);
    expect(waited.tables[0]!.rows).toEqual([['42', 'written by the holder']]);
  });

  it('evaluates each dump exactly once when three loaders start side by side', async () => {
    const dumpsDir = dumps({ a: SHOP, b: OTHER, c: THIRD });
    const cacheDir = tempDir('sqlrecall-dumps-cache-');
    const module = resolve(ROOT, 'scripts', 'lib', 'defog-dumps.mjs');
    const code = `
      import { evaluatedDefogDump } from ${JSON.stringify(module)};
      const out = [];
      for (const name of ['a', 'b', 'c']) {
        const { cached, tables } = await evaluatedDefogDump({ dumpsDir: ${JSON.stringify(dumpsDir)}, name, cacheDir: ${JSON.stringify(cacheDir)} });
        out.push({ name, cached, rows: tables.map((t) => t.rows.length) });
      }
      console.log(JSON.stringify(out));`;
    const runs = await Promise.all([node(code), node(code), node(code)]);
    for (const run of runs) expect(run.code, run.stderr).toBe(0);
    const results = runs.map(
      (run) => JSON.parse(run.stdout) as { name: string; cached: boolean; rows: number[] }[],
    );
    for (const name of ['a', 'b', 'c']) {
      const seen = results.map((r) => r.find((x) => x.name === name)!);
      expect(
        seen.filter((x) => !x.cached),
        name,
      ).toHaveLength(1);
      expect(new Set(seen.map((x) => JSON.stringify(x.rows))).size).toBe(1);
    }
    expect(cacheFiles(cacheDir)).toHaveLength(3);
    expect(readdirSync(cacheDir)).toHaveLength(3); // no lock or partial file left behind
  }, 120_000);

  describe.skipIf(!HAS_BENCHMARKS || !betterSqliteInstalled())('on a real defog dump', () => {
    /** Every table's definition, count and rows (sorted) of a SQLite file. */
    async function contents(file: string): Promise<string> {
      const { default: Database } = await import('better-sqlite3');
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        const tables = db
          .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name")
          .all() as { name: string; sql: string }[];
        return tables
          .map(({ name, sql }) => {
            const rows = db
              .prepare(`SELECT * FROM "${name.replace(/"/g, '""')}"`)
              .raw(true)
              .all();
            return `${sql}\n${rows.length}\n${rows
              .map((r) => JSON.stringify(r))
              .sort()
              .join('\n')}`;
          })
          .join('\n\n');
      } finally {
        db.close();
      }
    }

    it('loads the same tables and rows from the cache as from a fresh evaluation', async () => {
      const dumpsDir = resolve(benchmarkPath('defog', 'dbs'));
      const cacheDir = tempDir('sqlrecall-dumps-cache-');
      // Computed dates in both; the second also stores `now()`, which differs between evaluations.
      const names = ['derm_treatment', 'broker'];
      const load = (cache: string | false) =>
        loadDefogIntoSqlite({ names, dumpsDir, outDir: tempDir('sqlrecall-dumps-out-'), cacheDir: cache });
      const fresh = await load(false);
      const cold = await load(cacheDir);
      const warm = await load(cacheDir);
      expect(cacheFiles(cacheDir)).toHaveLength(2);
      for (const [i, name] of names.entries()) {
        expect(cold[i]!.tables, name).toBeGreaterThan(1);
        expect(cold[i]!.rows, name).toBeGreaterThan(10);
        for (const run of [cold, warm])
          expect({ tables: run[i]!.tables, rows: run[i]!.rows }, name).toEqual({
            tables: fresh[i]!.tables,
            rows: fresh[i]!.rows,
          });
        // Served from the cache, the second load is the first one to the microsecond.
        expect(await contents(warm[i]!.file), name).toBe(await contents(cold[i]!.file));
      }
      // Without `now()` a fresh evaluation gives the very same rows as the cached one.
      expect(await contents(cold[0]!.file)).toBe(await contents(fresh[0]!.file));
    }, 180_000);
  });
});
