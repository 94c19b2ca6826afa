/**
 * Answers without the model: on the defog databases, examples are taught from one half
 * of the questions (even positions of each database's questions, file order; SQL = the first gold
 * alternative) and the other half is asked with the model off. Reported per condition:
 * coverage (answered / asked) and execution accuracy of the answered ones (defog scoring, see
 * `src/eval/score.ts`). Conditions: examples + rules (what `--no-model` does) and rules alone.
 * The asked questions are split again for honest tuning: `dev` (positions 1, 5, 9, … of each
 * database) to choose thresholds, `held-out` (positions 3, 7, 11, …) to report them.
 *
 * It also measures the few-shot relevance floor (`DEFAULT_MIN_WORD_SIMILARITY`): for each asked
 * question, the taught example nearest by word similarity, and whether every table that example's
 * SQL reads is among the tables of the question's own gold SQL (a proxy for "relevant": it shows
 * tables the answer needs). Printed per floor: how many questions get an example, how many of
 * those are relevant.
 * Databases are loaded into in-memory PGlite; no model, nothing external.
 *
 *   npx tsx bench/examples-fallback.ts            # all eleven databases, all three question files
 *   npx tsx bench/examples-fallback.ts --quick    # four databases, questions_gen only (< 1 min)
 *   npx tsx bench/examples-fallback.ts --verbose  # every answered question with its verdict
 */
import { parseArgs } from 'node:util';
import { PGlite } from '@electric-sql/pglite';
import { exampleTables, wordSimilarity } from '../src/agent/example-similarity.js';
import { answerWithoutModel, type ExampleSource } from '../src/agent/fallback.js';
import type { Memory } from '../src/core/memory.js';
import type { Table } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { type DefogQuestion, expandGoldQuery, readDefogCsv, splitGoldQueries } from '../src/eval/gold.js';
import { scoreAgainstGold } from '../src/eval/score.js';
import type { ValueHint } from '../src/linking/documents.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { DEFOG_DATABASES, defogDump } from '../test/support/defog.js';
import { benchmarkPath } from '../test/support/shared-data.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    dbs: { type: 'string' },
    files: { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const QUICK_DBS = ['academic', 'broker', 'car_dealership', 'restaurants'];
const ALL_FILES = [
  'questions_gen_postgres.csv',
  'instruct_basic_postgres.csv',
  'instruct_advanced_postgres.csv',
];
const dbs = args.dbs ? args.dbs.split(',') : args.quick ? QUICK_DBS : [...DEFOG_DATABASES];
const files = args.files ? args.files.split(',') : args.quick ? ['questions_gen_postgres.csv'] : ALL_FILES;

interface Tally {
  asked: number;
  answered: number;
  correct: number;
}
const blank = (): Tally => ({ asked: 0, answered: 0, correct: 0 });
type Half = 'dev' | 'held-out';
const conditions: Record<string, Tally> = {
  'examples + rules, dev': blank(),
  'examples + rules, held-out': blank(),
  'rules alone, dev': blank(),
  'rules alone, held-out': blank(),
  'examples, taught questions asked again': blank(),
};
const paths: Record<string, number> = {};
/** Per asked question: nearest example's word similarity and whether it is relevant (tables ⊆ gold's). */
const nearest: { half: Half; similarity: number; relevant: boolean }[] = [];
const perDb: Record<string, Record<string, Tally>> = {};

const questions: DefogQuestion[] = [];
for (const f of files) questions.push(...(await readDefogCsv(benchmarkPath('defog', f))));

const started = performance.now();
for (const name of dbs) {
  const mine = questions.filter((q) => q.dbName === name);
  if (mine.length === 0) continue;
  const pglite = new PGlite();
  await pglite.exec(defogDump(name));
  const db = createPgliteConnector({ pglite });
  const schema = await db.introspect();
  const examples: Memory[] = [];
  const asked: { q: DefogQuestion; half: Half }[] = [];
  mine.forEach((q, i) => {
    if (i % 2 === 1) {
      asked.push({ q, half: i % 4 === 1 ? 'dev' : 'held-out' });
      return;
    }
    const sql = splitGoldQueries(q.query).flatMap((g) => expandGoldQuery(g, 'first'))[0];
    if (!sql) return;
    examples.push({
      id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      scope: { user: 'bench' },
      kind: 'example',
      text: q.question,
      sql,
      tables: [],
      columns: [],
      embeddingModel: 'none',
      contentHash: String(i),
      status: 'active',
      supersedes: null,
      sourceMessageId: null,
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      expiresAt: null,
    });
  });
  const source: ExampleSource = { list: async () => examples };
  const sampler = createValueSampler(db);
  const hintCache = new Map<string, Promise<ValueHint[]>>();
  const valueHints = (table: Table) => {
    const key = `${table.schema}.${table.name}`;
    if (!hintCache.has(key)) hintCache.set(key, sampler(table));
    return hintCache.get(key)!;
  };
  for (const { q, half } of asked) {
    const gold = splitGoldQueries(q.query).flatMap((g) => expandGoldQuery(g, 'first'))[0];
    const goldTables = gold ? await exampleTables(gold, schema) : null;
    let best: { similarity: number; sql: string } | null = null;
    for (const e of examples) {
      const similarity = wordSimilarity(q.question, e.text);
      if (!best || similarity > best.similarity) best = { similarity, sql: e.sql! };
    }
    if (!best || !goldTables) continue;
    const tables = await exampleTables(best.sql, schema);
    nearest.push({
      half,
      similarity: best.similarity,
      relevant: tables !== null && tables.length > 0 && tables.every((t) => goldTables.includes(t)),
    });
  }
  const runGold = (sql: string) => db.execute(sql, { maxRows: 100_000, timeoutMs: 30_000 });
  perDb[name] = { 'examples + rules': blank(), 'rules alone': blank() };
  for (const [condition, useExamples] of [
    ['examples + rules', true],
    ['rules alone', false],
  ] as const) {
    const local = perDb[name]![condition]!;
    for (const { q, half } of asked) {
      const tally = conditions[`${condition}, ${half}`]!;
      tally.asked++;
      local.asked++;
      let found: Awaited<ReturnType<typeof answerWithoutModel>> = null;
      try {
        found = await answerWithoutModel({
          question: q.question,
          user: 'bench',
          schema,
          db,
          examples: source,
          maxRows: 100_000,
          timeoutMs: 30_000,
          useExamples,
          valueHints,
        });
      } catch (error) {
        // A chosen SQL that fails to run is an answered, wrong question (never hidden).
        tally.answered++;
        local.answered++;
        if (args.verbose) console.log(`  [${name}] ERROR ${q.question} :: ${(error as Error).message}`);
        continue;
      }
      if (!found || found.path === 'blocked') continue;
      paths[`${condition}: ${found.path}`] = (paths[`${condition}: ${found.path}`] ?? 0) + 1;
      tally.answered++;
      local.answered++;
      const score = await scoreAgainstGold(q.query, found.result, runGold);
      if (score.correct) {
        tally.correct++;
        local.correct++;
      }
      if (args.verbose)
        console.log(
          `  [${name}] ${score.correct ? 'ok   ' : 'WRONG'} ${found.path} ${q.question} :: ${found.sql}${score.correct ? '' : ` (${score.why})`}`,
        );
    }
  }
  // Sanity bound of reuse: the taught questions asked again word for word (each must reuse its own
  // example, or another that gives the same rows); shows the reuse machinery on real schemas.
  for (const example of examples) {
    const q = mine.find((m) => m.question === example.text)!;
    const tally = conditions['examples, taught questions asked again']!;
    tally.asked++;
    const found = await answerWithoutModel({
      question: q.question,
      user: 'bench',
      schema,
      db,
      examples: source,
      maxRows: 100_000,
      timeoutMs: 30_000,
      useRules: false,
    }).catch(() => 'error' as const);
    if (found === null || (found !== 'error' && found.path === 'blocked')) {
      if (args.verbose) console.log(`  [${name}] NOT REUSED ${q.question}`);
      continue;
    }
    tally.answered++;
    if (found === 'error') continue;
    const score = await scoreAgainstGold(q.query, found.result, runGold);
    if (score.correct) tally.correct++;
    else if (args.verbose)
      console.log(`  [${name}] WRONG reuse ${q.question} :: ${found.sql} (${score.why})`);
  }
  await db.close();
  await pglite.close();
}

const pct = (a: number, b: number) => (b === 0 ? 'n/a' : `${((100 * a) / b).toFixed(1)}%`);
console.log(`Databases: ${dbs.join(', ')}; question files: ${files.join(', ')}`);
console.log('Examples taught: even positions of each database, asked: odd positions (model off).');
console.log('');
console.log('| condition | asked | answered | coverage | correct | accuracy (answered) |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, t] of Object.entries(conditions)) {
  console.log(
    `| ${name} | ${t.asked} | ${t.answered} | ${pct(t.answered, t.asked)} | ${t.correct} | ${pct(t.correct, t.answered)} |`,
  );
}
console.log('');
console.log(`Answers by path: ${JSON.stringify(paths)}`);
console.log('');
console.log(
  'Nearest taught example by word similarity (few-shot floor): questions with an example at or above',
);
console.log('the floor, and how many of those examples read only tables of the gold SQL (relevant).');
console.log('');
console.log('| floor | dev: with example | dev: relevant | held-out: with example | held-out: relevant |');
console.log('|---:|---:|---:|---:|---:|');
for (const floor of [0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]) {
  const cell = (half: Half) => {
    const above = nearest.filter((n) => n.half === half && n.similarity >= floor);
    const relevant = above.filter((n) => n.relevant).length;
    return `${above.length} | ${relevant} (${pct(relevant, above.length)})`;
  };
  console.log(`| ${floor.toFixed(1)} | ${cell('dev')} | ${cell('held-out')} |`);
}
console.log('');
console.log('| database | asked | answered (ex+rules) | correct | answered (rules) | correct |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const [name, t] of Object.entries(perDb)) {
  const a = t['examples + rules']!;
  const r = t['rules alone']!;
  console.log(`| ${name} | ${a.asked} | ${a.answered} | ${a.correct} | ${r.answered} | ${r.correct} |`);
}
console.log('');
console.log(`Total time: ${((performance.now() - started) / 1000).toFixed(1)} s`);
