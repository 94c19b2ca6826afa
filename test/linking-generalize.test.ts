/**
 * Issue 13: schema linking on a schema written for the tests (`test/corpus/clinic.ts`), padded with
 * 1,000 decoy tables. The three miss kinds of the issue: a filter reached through a chain of
 * foreign keys, a measure named by a synonym, and a filter value in a lookup table whose rows were
 * never sampled (schema-only). Lexical only (no embedding model).
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import type { Schema } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import type { LinkedContext } from '../src/linking/planner.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore } from '../src/linking/store.js';
import { createValueSampler, enumHints } from '../src/linking/value-hints.js';
import { CLINIC_QUESTIONS, CLINIC_SQL, type ClinicQuestion } from './corpus/clinic.js';
import { generateDecoys } from './support/decoys.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';

let pglite: PGlite;
let schema: Schema;

beforeAll(async () => {
  pglite = new PGlite(inMemoryPgliteOptions());
  await pglite.exec(CLINIC_SQL);
  const connector = createPgliteConnector({ pglite });
  const base = await connector.introspect();
  const decoys = generateDecoys(1000, {
    seed: 1313,
    taken: base.tables.map((t) => t.name),
    realColumns: base.tables.flatMap((t) => t.columns.map((c) => [c.name, c.type] as [string, string])),
  });
  await pglite.exec(decoys.map((d) => d.sql).join('\n'));
  schema = await connector.introspect();
}, 120_000);

afterAll(async () => {
  await pglite?.close();
});

/** A planner over the padded clinic schema; `sampled: false` reads no values at all. */
function planner(sampled: boolean) {
  const connector = createPgliteConnector({ pglite });
  const index = new SchemaIndex({
    store: new InMemorySchemaIndexStore(),
    fingerprint: `clinic-${sampled}`,
    sampler: sampled ? createValueSampler(connector) : async (table) => enumHints(table),
  });
  return createSchemaLinkingPlanner({ index, contextTokens: 8192, forceLinking: true });
}

function recalled(context: LinkedContext, q: ClinicQuestion): boolean {
  const chosen = new Set(context.tables.map((t) => t.slice(t.indexOf('.') + 1)));
  return q.gold.some((alt) => alt.every((t) => chosen.has(t)));
}

describe('schema linking generalizes (clinic schema + 1,000 decoys)', () => {
  it('has 1,000 decoys around the 22 clinic tables', () => {
    expect(schema.tables.length).toBeGreaterThanOrEqual(1022);
  });

  for (const kind of ['multi_hop_filter', 'synonym_measure', 'lookup_value'] as const) {
    it(`recalls every ${kind} question, values sampled and schema-only`, async () => {
      const questions = CLINIC_QUESTIONS.filter((q) => q.kind === kind);
      expect(questions.length).toBeGreaterThanOrEqual(2);
      for (const sampled of [true, false]) {
        const plan = planner(sampled);
        for (const q of questions.filter((x) => sampled || !x.valueOnly)) {
          const context = (await plan(q.question, schema)) as LinkedContext;
          expect(
            recalled(context, q),
            `${sampled ? 'sampled' : 'schema-only'}: ${q.question} → ${context.tables.join(', ')}`,
          ).toBe(true);
          expect(context.estimatedTokens).toBeLessThanOrEqual(2000);
        }
      }
    }, 120_000);
  }

  it('recalls the plain questions too', async () => {
    const plan = planner(true);
    for (const q of CLINIC_QUESTIONS.filter((x) => x.kind === 'plain')) {
      const context = (await plan(q.question, schema)) as LinkedContext;
      expect(recalled(context, q), `${q.question} → ${context.tables.join(', ')}`).toBe(true);
    }
  }, 60_000);

  it('names the join path of a table that is only on the way', async () => {
    const context = (await planner(true)('How many patients live in each country?', schema)) as LinkedContext;
    const city = context.choices.find((c) => c.table === 'public.city');
    expect(city?.kind).toBe('join_path');
    expect(city?.role).toMatch(/^join path: public\.\w+ → .*public\.city.* → public\.\w+$/);
  }, 60_000);
});
