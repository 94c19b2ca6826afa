/**
 * Issue 19 through the CLI on the demo shop: an example saved with `memory add --kind example`
 * answers the same question for another country once the model server is stopped; `--no-model`
 * answers "how many … are there" and "top 5 … by …" by rules; a complex question exits 5 with the
 * hint to start Ollama. `--json` says which path produced the answer.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDemoDatabase } from '../src/demo/load.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

describe('answers without the model through the CLI (demo shop)', () => {
  let env: Record<string, string>;
  let server: ScriptedOllama | undefined;
  let demoDir: string;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-i19-'));
    demoDir = join(dir, 'demo-shop');
    await createDemoDatabase(demoDir);
    server = await startScriptedOllama({ chat: () => 'no SQL here' });
    env = { SQLRECALL_HOME: join(dir, 'home'), OLLAMA_HOST: server.url, DATABASE_URL: `pglite:${demoDir}` };
    const added = await runCliInProcess(
      [
        'memory',
        'add',
        '--user',
        'priya',
        '--kind',
        'example',
        '--sql',
        "SELECT name, city FROM customers WHERE country = 'India' ORDER BY name, id",
        'customers from India',
      ],
      { env },
    );
    expect(added.code, added.stderr).toBe(0);
    // meera's standing preference on customers (issue 19: answers without the model must not skip it)
    const preference = await runCliInProcess(
      [
        'memory',
        'add',
        '--user',
        'meera',
        '--kind',
        'preference',
        '--sql',
        "customers.country = 'India'",
        'always show customers from India',
      ],
      { env },
    );
    expect(preference.code, preference.stderr).toBe(0);
    await server.close(); // the model server is down from here on
    server = undefined;
  }, 180_000);
  afterAll(async () => {
    await server?.close();
  });

  /** Expected rows, read straight from the demo database. */
  async function rows(sql: string): Promise<unknown[][]> {
    const { PGlite } = await import('@electric-sql/pglite');
    const db = new PGlite(demoDir);
    try {
      const r = await db.query<unknown[]>(sql, [], { rowMode: 'array' });
      return r.rows.map((row) => row.map((v) => (v === null ? null : String(v))));
    } finally {
      await db.close();
    }
  }

  it('reuses the saved example for another country with the model down', async () => {
    const run = await runCliInProcess(['ask', '--json', '--user', 'priya', 'customers from Germany'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.path).toBe('example');
    expect(doc.sql).toBe("SELECT name, city FROM customers WHERE country = 'Germany' ORDER BY name, id");
    expect(doc.rows.length).toBeGreaterThan(0);
    expect(doc.rows).toEqual(
      await rows("SELECT name, city FROM customers WHERE country = 'Germany' ORDER BY name, id"),
    );
    expect(doc.answer).toMatch(/reused example \[/);
  }, 60_000);

  it('another user does not get the example', async () => {
    const run = await runCliInProcess(['ask', '--json', '--user', 'rahul', 'customers from Germany'], {
      env,
    });
    expect(run.code).toBe(5);
    expect(JSON.parse(run.stdout).error.code).toBe('model_unreachable');
  }, 60_000);

  it('--no-model answers counts and top-N by rules', async () => {
    const count = await runCliInProcess(['ask', '--json', '--no-model', 'how many customers are there?'], {
      env,
    });
    expect(count.code, count.stderr).toBe(0);
    const c = JSON.parse(count.stdout);
    expect(c.path).toBe('rules');
    expect(c.rows).toEqual(await rows('SELECT count(*) FROM customers'));
    const top = await runCliInProcess(['ask', '--json', '--no-model', 'top 5 products by price'], { env });
    expect(top.code, top.stderr).toBe(0);
    const t = JSON.parse(top.stdout);
    expect(t.path).toBe('rules');
    const expected = await rows('SELECT price FROM products ORDER BY price DESC LIMIT 5');
    const priceAt = t.columns.indexOf('price');
    expect(t.rows.map((r: unknown[]) => [r[priceAt]])).toEqual(expected);
  }, 60_000);

  it("a rule answer that would skip the user's standing preference is refused, naming it by id", async () => {
    const run = await runCliInProcess(
      ['ask', '--json', '--no-model', '--user', 'meera', 'how many customers are there?'],
      { env },
    );
    expect(run.code).toBe(5);
    const doc = JSON.parse(run.stdout);
    // Named by its id: an error never carries what a memory says.
    expect(doc.error.message).toMatch(/standing preference \[[0-9a-f]{8}\]/);
    expect(run.stdout + run.stderr).not.toContain('always show customers from India');
    // a table the preference does not cover is still answered
    const products = await runCliInProcess(
      ['ask', '--json', '--no-model', '--user', 'meera', 'how many products are there?'],
      { env },
    );
    expect(products.code, products.stderr).toBe(0);
    expect(JSON.parse(products.stdout).rows).toEqual(await rows('SELECT count(*) FROM products'));
  }, 60_000);

  it('a complex question exits 5 with the hint to start Ollama', async () => {
    const run = await runCliInProcess(
      ['ask', '--no-model', 'which city had the biggest growth in wholesale revenue last quarter?'],
      { env },
    );
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/needs the model/);
    expect(run.stderr).toMatch(/ollama serve/);
  }, 60_000);
});
