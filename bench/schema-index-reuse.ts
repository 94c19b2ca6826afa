/**
 * Schema-index reuse benchmark: the index is built once and reused by the next process.
 * Two user databases in one run, a large one (the clinic schema of `test/corpus/clinic.ts` plus
 * `--tables` decoy tables, default 1,000) and a small one (10 tables); for each, a first and a
 * second "process" (a fresh store client on the same PGlite data directory, a fresh SchemaIndex
 * and planner, introspection included) plans one question. Printed per run: wall time, documents
 * embedded (a counting hash embedding, 384 dimensions), tables sampled; then the ratio of the large
 * database's second run to the small one's, and the peak RSS of the process.
 *
 *   npx tsx bench/schema-index-reuse.ts [--tables 1000] [--repeat 3] [--quick] [--json]
 *
 * `--quick`: 200 decoy tables, 1 repeat (CI size). Second-run times are the median of `--repeat`.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import type { EmbeddingModel } from '../src/core/ports.js';
import type { Table } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { databaseFingerprint } from '../src/linking/documents.js';
import { PgSchemaIndexStore } from '../src/linking/pg-store.js';
import type { LinkedContext } from '../src/linking/planner.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createPgliteClient } from '../src/memory/store/index.js';
import { CLINIC_SQL } from '../test/corpus/clinic.js';
import { generateDecoys } from '../test/support/decoys.js';
import { hashEmbedding } from '../test/support/scripted/embedding.js';

const { values: args } = parseArgs({
  options: {
    tables: { type: 'string' },
    repeat: { type: 'string' },
    quick: { type: 'boolean', default: false },
    json: { type: 'boolean', default: false },
  },
});
const decoyCount = Number(args.tables ?? (args.quick ? 200 : 1000));
const repeat = Number(args.repeat ?? (args.quick ? 1 : 3));

let peakRss = process.memoryUsage().rss;
const sampler = setInterval(() => {
  peakRss = Math.max(peakRss, process.memoryUsage().rss);
}, 50);

interface RunResult {
  ms: number;
  embedded: number;
  sampled: number;
  indexed: number;
  unchanged: number;
  tables: number;
}

async function runOnce(user: PGlite, storeDir: string, question: string): Promise<RunResult> {
  const started = performance.now();
  const sql = createPgliteClient(storeDir);
  try {
    const connector = createPgliteConnector({ pglite: user });
    const schema = await connector.introspect();
    let embedded = 0;
    const embedding: EmbeddingModel = {
      id: 'hash-384',
      dimensions: async () => 384,
      embed: async (texts) => {
        embedded += texts.length;
        return texts.map((t) => hashEmbedding(t));
      },
    };
    let sampled = 0;
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
        sampled += 1;
        return sample(table);
      },
    });
    const plan = createSchemaLinkingPlanner({ index, contextTokens: 8192 });
    const context = (await plan(question, schema)) as LinkedContext;
    return {
      ms: performance.now() - started,
      embedded,
      sampled,
      indexed: context.index.indexed.length,
      unchanged: context.index.unchanged,
      tables: schema.tables.length,
    };
  } finally {
    await sql.close();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-bench-index-'));
const results: Record<string, { first: RunResult; second: RunResult[] }> = {};
try {
  const large = new PGlite();
  await large.exec(CLINIC_SQL);
  await large.exec(
    generateDecoys(decoyCount, { seed: 99, taken: ['country', 'region', 'city'] })
      .map((d) => d.sql)
      .join('\n'),
  );
  const small = new PGlite();
  await small.exec(
    generateDecoys(10, { seed: 7 })
      .map((d) => d.sql)
      .join('\n'),
  );
  const question = 'How many patients live in each country?';
  for (const [name, db] of [
    ['large', large],
    ['small', small],
  ] as const) {
    const storeDir = join(dir, name);
    const first = await runOnce(db, storeDir, question);
    const second: RunResult[] = [];
    for (let i = 0; i < repeat; i += 1) second.push(await runOnce(db, storeDir, question));
    results[name] = { first, second };
  }
  await large.close();
  await small.close();
} finally {
  clearInterval(sampler);
  rmSync(dir, { recursive: true, force: true });
}

const large = results.large!;
const small = results.small!;
const largeSecond = median(large.second.map((r) => r.ms));
const smallSecond = median(small.second.map((r) => r.ms));
const summary = {
  decoys: decoyCount,
  repeat,
  large: {
    tables: large.first.tables,
    first: large.first,
    secondMedianMs: largeSecond,
    second: large.second,
  },
  small: {
    tables: small.first.tables,
    first: small.first,
    secondMedianMs: smallSecond,
    second: small.second,
  },
  secondRunRatioLargeToSmall: largeSecond / smallSecond,
  peakRssMb: Math.round(peakRss / 2 ** 20),
};
if (args.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
else {
  const line = (label: string, r: RunResult) =>
    `${label} | ${r.tables} | ${r.ms.toFixed(0)} | ${r.embedded} | ${r.sampled} | ${r.indexed} | ${r.unchanged}\n`;
  process.stdout.write('run | tables | wall ms | texts embedded | tables sampled | indexed | unchanged\n');
  process.stdout.write(line('large, first run', large.first));
  for (const [i, r] of large.second.entries()) process.stdout.write(line(`large, second run #${i + 1}`, r));
  process.stdout.write(line('small, first run', small.first));
  for (const [i, r] of small.second.entries()) process.stdout.write(line(`small, second run #${i + 1}`, r));
  process.stdout.write(
    `second run, ${large.first.tables} vs ${small.first.tables} tables: ${largeSecond.toFixed(0)} ms vs ${smallSecond.toFixed(0)} ms (ratio ${summary.secondRunRatioLargeToSmall.toFixed(2)}; goal ≤ 2)\npeak RSS ${summary.peakRssMb} MB\n`,
  );
}
