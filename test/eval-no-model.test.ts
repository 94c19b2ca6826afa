/**
 * `sqlrecall eval --model none` (issue 19): every question is asked without the model — answered
 * only from saved examples and rules — and the report gives coverage and the execution accuracy of
 * the answered ones. No model server listens (a closed port): a question that needs the model is
 * recorded as unanswered (path `none`), never fatal to the run.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEvalDataset } from '../src/eval/dataset.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { startScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

describe.skipIf(!HAS_BENCHMARKS)('eval --model none (embedded PGlite, model server down)', () => {
  let home: string;
  let dataset: string;
  let closedUrl: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-evalnone-'));
    // Two geography questions read from the benchmark: a per-country count a rule answers, and a
    // ratio of two named rows that needs the model.
    const all = await loadEvalDataset(benchmarkPath('defog', 'questions_gen_postgres.csv'), {
      dbName: 'geography',
    });
    const picked = all.filter((q) =>
      /^How many mountains are there in each country|ratio of the altitude/.test(q.question),
    );
    expect(picked).toHaveLength(2);
    const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
    dataset = join(home, 'small.csv');
    writeFileSync(
      dataset,
      [
        'question,query,db_name,query_category,instructions',
        ...picked.map((q) =>
          [q.question, q.query, q.dbName, q.category, q.instructions].map(quote).join(','),
        ),
      ].join('\n'),
    );
    const server = await startScriptedOllama({ chat: () => 'unused' });
    closedUrl = server.url;
    await server.close();
  });
  afterAll(() => {
    rmSync(home, { recursive: true, force: true });
  });

  it('reports coverage and accuracy on answered questions; unanswered ones are not fatal', async () => {
    const out = join(home, 'results.jsonl');
    const run = await runCliInProcess(
      [
        'eval',
        '--json',
        '--model',
        'none',
        '--memory-mode',
        'none',
        '--dataset',
        dataset,
        '--dumps',
        benchmarkPath('defog', 'dbs'),
        '--out',
        out,
      ],
      { env: { OLLAMA_HOST: closedUrl, SQLRECALL_HOME: join(home, 'home') } },
    );
    expect(run.code, run.stderr).toBe(0);
    const doc = JSON.parse(run.stdout);
    expect(doc.modes[0].withoutModel).toEqual({
      questions: 2,
      answered: 1,
      coverage: 0.5,
      correct: 1,
      accuracyAnswered: 1,
      byPath: { example: 0, rules: 1 },
    });
    const records = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const byQuestion = Object.fromEntries(records.map((r) => [r.question.slice(0, 20), r]));
    expect(byQuestion['How many mountains a']).toMatchObject({ path: 'rules', correct: true, modelCalls: 0 });
    expect(byQuestion['What is the ratio of']).toMatchObject({ path: 'none', correct: false });
    expect(byQuestion['What is the ratio of'].error.code).toBe('model_unreachable');
  }, 180_000);
});
