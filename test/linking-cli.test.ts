/**
 * Issue 5: `sqlrecall schema context "<question>" --json` (in-process CLI) on an embedded database
 * with 60 decoy tables: the chosen tables with the reason for each, columns, value hints, estimated
 * tokens beside the whole schema, the budget from the model's context length, a progress bar on
 * stderr for the build, the stored index reused by the next run (issue 13), and a usage error
 * without a question.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateDecoys } from './support/decoys.js';
import { SHOP_SQL } from './support/fixtures.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { seedPgliteDataDir } from './support/pglite-template.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

describe('sqlrecall schema context', () => {
  let server: ScriptedOllama;
  let env: Record<string, string>;

  beforeAll(async () => {
    const dir = seedPgliteDataDir(mkdtempSync(join(tmpdir(), 'sqlrecall-linking-cli-')));
    const db = new PGlite(dir);
    await db.exec(SHOP_SQL);
    await db.exec(
      "ALTER TABLE customers ADD COLUMN segment text; UPDATE customers SET segment = CASE WHEN id % 2 = 0 THEN 'wholesale' ELSE 'retail' END;",
    );
    await db.exec(
      generateDecoys(60, { seed: 9 })
        .map((d) => d.sql)
        .join('\n'),
    );
    await db.close();
    server = await startScriptedOllama({
      models: [{ name: 'qwen2.5-coder:7b', contextLength: 8192 }, 'all-minilm'],
    });
    env = {
      DATABASE_URL: `pglite:${dir}`,
      OLLAMA_HOST: server.url,
      SQLRECALL_HOME: mkdtempSync(join(tmpdir(), 'sqlrecall-linking-home-')),
    };
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  it('prints the chosen tables, reasons and estimated tokens as JSON', async () => {
    const run = await runCliInProcess(
      ['schema', 'context', 'how many wholesale customers ordered?', '--json'],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as {
      mode: string;
      estimatedTokens: number;
      wholeSchemaTokens: number;
      budget: { contextTokens: number; schemaTokens: number };
      tables: { table: string; kind: string; reasons: string[]; columns: string[]; valueHints: string[] }[];
      index: { indexed: number };
      schemaText: string;
    };
    expect(doc.mode).toBe('linked');
    expect(doc.tables[0]?.table).toBe('public.customers');
    expect(doc.tables[0]?.reasons).toContain("column segment has value 'wholesale'");
    expect(doc.tables[0]?.valueHints).toContain('segment');
    expect(doc.tables.map((t) => t.table)).toContain('public.orders');
    expect(doc.tables.every((t) => t.reasons.length > 0 && t.columns.length > 0)).toBe(true);
    expect(doc.estimatedTokens).toBeGreaterThan(0);
    expect(doc.estimatedTokens).toBeLessThan(doc.wholeSchemaTokens);
    expect(doc.budget.contextTokens).toBe(8192); // from /api/show
    expect(doc.index.indexed).toBe(64);
    expect(doc.schemaText).toContain("segment text['retail','wholesale']");
    expect(run.stderr).toContain('Indexing schema 100% 64/64 tables');
    // The scripted server embedded the documents and the question.
    expect(server.requests.some((r) => r.path === '/api/embed')).toBe(true);
  }, 60_000);

  it('reuses the stored index on the next run: nothing re-indexed, only the question embedded', async () => {
    const before = server.requests.length;
    const run = await runCliInProcess(['schema', 'context', 'late orders per customer', '--json'], { env });
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout) as {
      index: { indexed: number; reembedded: number; unchanged: number };
    };
    expect(doc.index).toMatchObject({ indexed: 0, reembedded: 0, unchanged: 64 });
    const embedded = server.requests
      .slice(before)
      .filter((r) => r.path === '/api/embed')
      .flatMap((r) => {
        const input = (r.body as { input?: string | string[] }).input;
        return Array.isArray(input) ? input : input === undefined ? [] : [input];
      });
    expect(embedded).toEqual(['late orders per customer']);
    expect(run.stderr).not.toContain('Indexing schema');
  }, 60_000);

  it('prints a readable list without --json, and needs a question', async () => {
    const run = await runCliInProcess(['schema', 'context', 'orders', 'by', 'status', '--num-ctx', '4096'], {
      env,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^public\.orders lexical/m);
    expect(run.stdout).toMatch(
      /of 64 tables, ~\d+ tokens \(whole schema ~\d+; schema budget \d+ of num_ctx 4096\)/,
    );
    const missing = await runCliInProcess(['schema', 'context'], { env });
    expect(missing.code).toBe(2);
  }, 60_000);
});
