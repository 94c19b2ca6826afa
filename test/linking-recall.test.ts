/**
 * Issue 5, schema-linking recall on real questions (a regression guard; the full figures come from
 * `bench/schema-linking.ts`): gold tables are the relations each gold query references (libpg-query
 * RangeVars minus CTEs); a question is recalled when every gold table of one of its gold
 * alternatives is chosen. Lexical and value evidence only (no embedding model), linking forced on
 * these small databases, and one database padded with 1,000 decoy tables.
 */
import { PGlite } from '@electric-sql/pglite';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { type DefogQuestion, expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import type { LinkedContext } from '../src/linking/planner.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore } from '../src/linking/store.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { generateDecoys } from './support/decoys.js';
import { defogDump } from './support/defog.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { loadReferenceParser, referencedTables } from './support/referenced-tables.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

const CSVS = ['questions_gen_postgres.csv', 'instruct_basic_postgres.csv', 'instruct_advanced_postgres.csv'];

async function questionsFor(db: string): Promise<{ q: DefogQuestion; gold: string[][] }[]> {
  await loadReferenceParser();
  const out: { q: DefogQuestion; gold: string[][] }[] = [];
  for (const file of CSVS) {
    for (const q of await readDefogCsv(benchmarkPath('defog', file))) {
      if (q.dbName !== db) continue;
      const gold = splitGoldQueries(q.query).map((alt) =>
        referencedTables(expandGoldQuery(alt, 'first')[0]!).map((r) => r.name.toLowerCase()),
      );
      out.push({ q, gold });
    }
  }
  return out;
}

async function measure(
  db: string,
  decoys: number,
): Promise<{ recall: number; under2000: number; n: number }> {
  const pglite = new PGlite(inMemoryPgliteOptions());
  try {
    await pglite.exec(defogDump(db));
    const connector = createPgliteConnector({ pglite });
    if (decoys > 0) {
      const base = await connector.introspect();
      const realColumns = base.tables.flatMap((t) =>
        t.columns.map((c) => [c.name, c.type] as [string, string]),
      );
      const list = generateDecoys(decoys, {
        seed: 17,
        schema: base.tables[0]!.schema,
        taken: base.tables.map((t) => t.name),
        realColumns,
      });
      await pglite.exec(list.map((d) => d.sql).join('\n'));
    }
    const schema = await connector.introspect();
    const index = new SchemaIndex({
      store: new InMemorySchemaIndexStore(),
      fingerprint: db,
      sampler: createValueSampler(connector),
    });
    const plan = createSchemaLinkingPlanner({ index, contextTokens: 8192, forceLinking: true });
    const cases = await questionsFor(db);
    let recalled = 0;
    let small = 0;
    for (const { q, gold } of cases) {
      const context = (await plan(q.question, schema)) as LinkedContext;
      const chosen = new Set(context.tables.map((t) => t.slice(t.indexOf('.') + 1).toLowerCase()));
      if (gold.some((alt) => alt.every((t) => chosen.has(t)))) recalled += 1;
      if (context.estimatedTokens < 2000) small += 1;
    }
    return { recall: recalled / cases.length, under2000: small / cases.length, n: cases.length };
  } finally {
    await pglite.close();
  }
}

describe.skipIf(!HAS_BENCHMARKS)('schema-linking recall on defog questions', () => {
  beforeAll(async () => {
    await loadReferenceParser();
  });

  it.each(['academic', 'car_dealership', 'scholar'])(
    'links %s with recall ≥ 0.95',
    async (db) => {
      const { recall, n } = await measure(db, 0);
      expect(n).toBeGreaterThan(10);
      expect(recall).toBeGreaterThanOrEqual(0.95);
    },
    60_000,
  );

  it('keeps recall ≥ 0.95 and the schema under 2,000 tokens with 1,000 decoy tables', async () => {
    const { recall, under2000 } = await measure('atis', 1000);
    expect(recall).toBeGreaterThanOrEqual(0.95);
    expect(under2000).toBeGreaterThanOrEqual(0.95);
  }, 120_000);
});
