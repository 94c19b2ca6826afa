/**
 * Right after `sqlrecall demo`, the commands that question a database find the demo shop without
 * `--db` (src/runtime/demo-default.ts), and say so in one line on stderr; a configured database
 * always wins; memory commands never pick the demo silently; with no demo, the how-to error stays.
 * The "demo shop" here is a small embedded database with the demo's marker file (building the real
 * one takes seconds and is tested in src/demo/load.test.ts).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPglite } from '../src/databases/pglite/sharing.js';
import { DEMO_MARKER_FILE } from '../src/demo/marker.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { seedPgliteDataDir } from './support/pglite-template.js';
import type { ScriptedOllama } from './support/scripted/server.js';
import { startShopModel } from './support/shop-model.js';

describe('the demo shop is the default database once it exists', () => {
  let home: string;
  let shop: string;
  let model: ScriptedOllama;
  const notices = (stderr: string) =>
    stderr.split('\n').filter((line) => line.includes('using the demo shop'));

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-demo-default-'));
    shop = join(home, 'demo-shop');
    const db = await openPglite(seedPgliteDataDir(shop), false);
    await db.exec('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1), (2), (3);');
    await db.close();
    writeFileSync(
      join(shop, DEMO_MARKER_FILE),
      JSON.stringify({ version: 3, seed: 1, counts: { orders: 3 } }),
    );
    model = await startShopModel();
  }, 120_000);

  afterAll(async () => {
    await model?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const env = () => ({ SQLRECALL_HOME: home, OLLAMA_HOST: model.url });

  it('sql, ask and schema use it without --db and say so in one line', async () => {
    const sql = await runCliInProcess(['sql', '--json', 'SELECT count(*) AS n FROM orders'], { env: env() });
    expect(sql.code, sql.stderr).toBe(0);
    expect(JSON.parse(sql.stdout).rows).toEqual([['3']]);
    expect(notices(sql.stderr)).toEqual([
      `No database is configured: using the demo shop pglite:${shop} (pass --db or set DATABASE_URL to question your own).`,
    ]);

    const ask = await runCliInProcess(['ask', '--json', '--no-memory', 'how many orders are there?'], {
      env: env(),
    });
    expect(ask.code, ask.stderr).toBe(0);
    expect(JSON.parse(ask.stdout).rows).toEqual([['3']]);
    expect(notices(ask.stderr)).toHaveLength(1);

    const schema = await runCliInProcess(['schema', '--json'], { env: env() });
    expect(schema.code, schema.stderr).toBe(0);
    expect(JSON.parse(schema.stdout).tables.map((t: { name: string }) => t.name)).toEqual(['orders']);
    expect(notices(schema.stderr)).toHaveLength(1);
  }, 120_000);

  it('a configured database wins, and memory commands never pick the demo', async () => {
    const other = join(home, 'other');
    const db = await openPglite(seedPgliteDataDir(other), false);
    await db.exec('CREATE TABLE orders (id int PRIMARY KEY); INSERT INTO orders VALUES (1);');
    await db.close();
    const configured = await runCliInProcess(['sql', '--json', 'SELECT count(*) AS n FROM orders'], {
      env: { ...env(), DATABASE_URL: `pglite:${other}` },
    });
    expect(configured.code, configured.stderr).toBe(0);
    expect(JSON.parse(configured.stdout).rows).toEqual([['1']]);
    expect(notices(configured.stderr)).toEqual([]);

    const memory = await runCliInProcess(['memory', 'list', '--json', '--no-memory'], { env: env() });
    expect(notices(memory.stderr)).toEqual([]);
  }, 120_000);

  it('with no demo shop, the how-to error stays (exit 2)', async () => {
    const empty = mkdtempSync(join(tmpdir(), 'sqlrecall-no-demo-'));
    try {
      const run = await runCliInProcess(['sql', 'SELECT 1'], { env: { SQLRECALL_HOME: empty } });
      expect(run.code).toBe(2);
      expect(run.stderr).toContain('No database is configured');
      expect(run.stderr).toContain('sqlrecall demo');
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  }, 60_000);
});
