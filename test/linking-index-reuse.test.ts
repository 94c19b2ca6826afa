/**
 * Issue 13: the schema index is built once. Two "processes" (two SchemaIndex + planner instances,
 * the store's PGlite data directory closed and reopened in between) over an unchanged 1,000-table
 * database: the first embeds every table document, the second embeds only the question and
 * samples no table. Then one changed table is re-indexed alone.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import type { Schema, Table } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { databaseFingerprint } from '../src/linking/documents.js';
import { PgSchemaIndexStore } from '../src/linking/pg-store.js';
import type { LinkedContext } from '../src/linking/planner.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createPgliteClient } from '../src/memory/store/index.js';
import { CLINIC_SQL } from './corpus/clinic.js';
import { generateDecoys } from './support/decoys.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { hashEmbedding } from './support/scripted/embedding.js';

let user: PGlite;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'sqlrecall-i13-index-'));
  user = new PGlite(inMemoryPgliteOptions());
  await user.exec(CLINIC_SQL);
  await user.exec(
    generateDecoys(1000, { seed: 4242, taken: ['country', 'city', 'region'] })
      .map((d) => d.sql)
      .join('\n'),
  );
}, 120_000);

afterAll(async () => {
  await user?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A hash embedding that counts the texts it was asked to embed. */
function countingEmbedding(): EmbeddingModel & { texts: string[] } {
  const texts: string[] = [];
  return {
    id: 'hash-384',
    texts,
    dimensions: async () => 384,
    embed: async (batch) => {
      texts.push(...batch);
      return batch.map((t) => hashEmbedding(t));
    },
  };
}

/** One "process": opens the store directory, plans one question, closes everything. */
async function runOnce(question: string): Promise<{
  context: LinkedContext;
  embedded: string[];
  sampled: string[];
  schema: Schema;
}> {
  const sql = createPgliteClient(join(dir, 'store'));
  try {
    const connector = createPgliteConnector({ pglite: user });
    const schema = await connector.introspect();
    const embedding = countingEmbedding();
    const sampled: string[] = [];
    const sample = createValueSampler(connector);
    const index = new SchemaIndex({
      store: new PgSchemaIndexStore(sql),
      fingerprint: databaseFingerprint({
        displayName: connector.displayName,
        database: schema.database,
        schemas: schema.schemas,
      }),
      embedding,
      sampler: async (table: Table) => {
        sampled.push(table.name);
        return sample(table);
      },
    });
    const plan = createSchemaLinkingPlanner({ index, contextTokens: 8192 });
    const context = (await plan(question, schema)) as LinkedContext;
    return { context, embedded: embedding.texts, sampled, schema };
  } finally {
    await sql.close();
  }
}

describe('schema index built once, reused across processes (1,000 tables)', () => {
  it('re-embeds and re-samples nothing on the second run; one changed table alone later', async () => {
    const first = await runOnce('How many patients live in each country?');
    const tables = first.schema.tables.length;
    expect(tables).toBeGreaterThanOrEqual(1020);
    expect(first.context.index.indexed.length).toBe(tables);
    expect(first.embedded.length).toBe(tables + 1); // every document, then the question

    const second = await runOnce('Which clinics are located in the Algarve region?');
    expect(second.context.index.indexed).toEqual([]);
    expect(second.context.index.reembedded).toEqual([]);
    expect(second.context.index.unchanged).toBe(tables);
    expect(second.sampled).toEqual([]);
    expect(second.embedded).toEqual(['Which clinics are located in the Algarve region?']);
    expect(second.context.tables).toContain('public.region');

    await user.exec('ALTER TABLE clinic ADD COLUMN phone text');
    const third = await runOnce('Which clinics have a phone number?');
    expect(third.context.index.indexed).toEqual(['public.clinic']);
    expect(third.sampled).toEqual(['clinic']);
    expect(third.embedded.length).toBe(2);
  }, 240_000);
});
