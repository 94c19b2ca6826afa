/**
 * `sqlrecall eval` as a user runs it: one subprocess run on a small dataset proves flags, the JSON
 * document (ending with `accuracy`), the results file and the exit code; usage errors in-process.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEvalDataset } from '../src/eval/dataset.js';
import { runSqlrecall } from './support/cli.js';
import { startEvalModel } from './support/eval-model.js';
import { runCliInProcess } from './support/in-process-cli.js';
import type { ScriptedOllama } from './support/scripted/server.js';
import { benchmarkPath, HAS_BENCHMARKS } from './support/shared-data.js';

describe('eval usage errors', () => {
  it('needs --dataset and --dumps', async () => {
    const run = await runCliInProcess(['eval', '--json']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--dataset FILE .* --dumps DIR/);
    expect(JSON.parse(run.stdout).error.code).toBe('usage');
  });

  it('rejects an unknown memory mode and a non-server --db', async () => {
    const bad = await runCliInProcess([
      'eval',
      '--dataset',
      'x.csv',
      '--dumps',
      '.',
      '--memory-mode',
      'sometimes',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/none, prompt, taught or all/);
    const pglite = await runCliInProcess([
      'eval',
      '--dataset',
      'x.csv',
      '--dumps',
      '.',
      '--db',
      'pglite:/tmp/x',
    ]);
    expect(pglite.code).toBe(2);
    expect(pglite.stderr).toMatch(/PostgreSQL server URL/);
    const limit = await runCliInProcess(['eval', '--dataset', 'x.csv', '--dumps', '.', '--limit', '0']);
    expect(limit.code).toBe(2);
  });

  it('names a missing dataset file', async () => {
    const home = mkdtempSync(join(tmpdir(), 'sqlrecall-evalcli-'));
    try {
      const run = await runCliInProcess(['eval', '--dataset', join(home, 'nope.csv'), '--dumps', home], {
        env: { SQLRECALL_HOME: home },
      });
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(/Cannot read the question file .*nope\.csv/);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe.skipIf(!HAS_BENCHMARKS)('sqlrecall eval --json (subprocess, embedded PGlite)', () => {
  let home: string;
  let model: ScriptedOllama;
  let dataset: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'sqlrecall-evalcli-'));
    // A small dataset: the first four restaurants questions, copied with the CSV header.
    const source = benchmarkPath('defog', 'questions_gen_postgres.csv');
    const questions = await loadEvalDataset(source, { dbName: 'restaurants', limit: 4 });
    const quote = (s: string) => `"${s.replace(/"/g, '""')}"`;
    dataset = join(home, 'small.csv');
    writeFileSync(
      dataset,
      [
        'question,query,db_name,query_category,instructions',
        ...questions.map((q) =>
          [q.question, q.query, q.dbName, q.category, q.instructions].map(quote).join(','),
        ),
      ].join('\n'),
    );
    const texts = questions.map((q) => q.question);
    // The last question gets a wrong answer: accuracy 3/4.
    model = await startEvalModel(questions, (q) => (q.question === texts[3] ? "SELECT 'wrong'" : undefined));
  });
  afterAll(async () => {
    await model?.close();
    rmSync(home, { recursive: true, force: true });
  });

  it('prints one JSON report ending with accuracy and writes every prediction', async () => {
    const out = join(home, 'results.jsonl');
    const run = await runSqlrecall(
      ['eval', '--json', '--dataset', dataset, '--dumps', benchmarkPath('defog', 'dbs'), '--out', out],
      { env: { OLLAMA_HOST: model.url, SQLRECALL_HOME: home }, timeoutMs: 120_000 },
    );
    expect(run.stderr).toMatch(/eval +\d+%/); // progress lines on stderr
    expect(run.code).toBe(0);
    const doc = JSON.parse(run.stdout) as Record<string, unknown>;
    expect(Object.keys(doc).at(-1)).toBe('accuracy');
    expect(doc.accuracy).toBe(0.75);
    expect(doc.resultsFile).toBe(out);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(4);
    const wrong = lines.map((l) => JSON.parse(l)).filter((r) => !r.correct);
    expect(wrong).toHaveLength(1);
    expect(wrong[0]).toMatchObject({ db: 'restaurants', mode: 'prompt', sql: "SELECT 'wrong'" });
    expect(wrong[0].why).toEqual(expect.any(String));
  }, 180_000);
});
