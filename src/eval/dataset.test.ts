import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { INSTRUCTIONS_HEADER, questionMessage, splitSentences, teachingSentences } from './dataset.js';
import type { DefogQuestion } from './gold.js';
import { percentile, summarize } from './report.js';
import { openResultsFile, readResultsFile } from './results-file.js';
import type { EvalRecord } from './run.js';
import { teachingMessage } from './teach.js';

const q = (over: Partial<DefogQuestion>): DefogQuestion => ({
  question: 'How many?',
  query: 'SELECT 1',
  dbName: 'broker',
  category: 'c',
  instructions: '',
  ...over,
});

describe('memory modes', () => {
  it('pastes instructions only in prompt mode, and only when there are some', () => {
    const withI = q({ instructions: 'TPV = sum of amounts.' });
    expect(questionMessage(withI, 'none')).toBe('How many?');
    expect(questionMessage(withI, 'taught')).toBe('How many?');
    expect(questionMessage(withI, 'prompt')).toBe(`How many?\n${INSTRUCTIONS_HEADER}\nTPV = sum of amounts.`);
    expect(questionMessage(q({ instructions: '  ' }), 'prompt')).toBe('How many?');
  });

  it('splits sentences without breaking numbers, abbreviations or formulas', () => {
    expect(splitSentences('ACP = avg of 3.5 days. Use e.g. close. Weekend is Sat\nMoM = a - b')).toEqual([
      'ACP = avg of 3.5 days.',
      'Use e.g. close.',
      'Weekend is Sat',
      'MoM = a - b',
    ]);
    expect(splitSentences('')).toEqual([]);
  });

  it('teaches each distinct sentence of a database once, in order', () => {
    const qs = [
      q({ instructions: 'A is b. C is d.' }),
      q({ instructions: 'C is d.' }),
      q({ dbName: 'other', instructions: 'E is f.' }),
    ];
    expect(teachingSentences(qs, 'broker')).toEqual(['A is b.', 'C is d.']);
  });

  it('says a sentence as a user teaching would, keeping acronyms and names', () => {
    expect(teachingMessage('To get TPV, sum the amounts.')).toBe(
      'Remember that to get TPV, sum the amounts.',
    );
    expect(teachingMessage('TPV = sum of amounts')).toBe('Remember that TPV = sum of amounts');
    expect(teachingMessage('Always order with NULLS last.')).toBe('Always order with NULLS last.');
    expect(teachingMessage('Toyota Camry is a sedan')).toBe('Remember that Toyota Camry is a sedan');
  });
});

function record(over: Partial<EvalRecord>): EvalRecord {
  return {
    mode: 'none',
    id: '0-x',
    index: 0,
    db: 'a',
    category: 'c',
    question: 'q',
    message: 'q',
    sql: 'SELECT 1',
    attempts: [],
    refused: false,
    repairs: 0,
    correct: true,
    rowCount: 1,
    modelCalls: 1,
    promptTokens: 10,
    completionTokens: 2,
    modelMs: 1,
    latencyMs: 5,
    appliedMemories: 0,
    ...over,
  };
}

describe('report', () => {
  it('uses nearest-rank percentiles', () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 95)).toBe(95);
    expect(percentile([7], 95)).toBe(7);
    expect(percentile([], 50)).toBe(0);
  });

  it('groups by mode, category and database, and ends the document with accuracy', () => {
    const summary = summarize({
      dataset: 'd.csv',
      model: 'm',
      records: [
        record({ id: '1', category: 'x', latencyMs: 10 }),
        record({ id: '2', category: 'y', correct: false, refused: true, rowCount: null, latencyMs: 30 }),
        record({ id: '1', mode: 'prompt', db: 'b', repairs: 2, modelCalls: 3 }),
      ],
      resultsFile: 'r.jsonl',
    });
    expect(summary.modes.map((m) => m.mode)).toEqual(['none', 'prompt']);
    expect(summary.modes[0]!.overall).toMatchObject({
      questions: 2,
      correct: 1,
      accuracy: 0.5,
      refusals: 1,
      errors: 1,
    });
    expect(summary.modes[0]!.overall.p95LatencyMs).toBe(30);
    expect(Object.keys(summary.modes[0]!.byCategory)).toEqual(['x', 'y']);
    expect(summary.modes[1]!.byDatabase.b).toMatchObject({ repairs: 2, modelCalls: 3 });
    expect(summary.accuracy).toBeCloseTo(2 / 3);
    expect(Object.keys(summary).at(-1)).toBe('accuracy');
  });
});

describe('results file', () => {
  it('appends, resumes, ignores a last line cut by a crash and refuses other broken lines', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-results-'));
    try {
      const path = join(dir, 'sub', 'r.jsonl');
      const writer = openResultsFile(path, { resume: false });
      writer.append(record({ id: 'a' }));
      openResultsFile(path, { resume: true }).append(record({ id: 'b' }));
      expect(readResultsFile(path).map((r) => r.id)).toEqual(['a', 'b']);
      writeFileSync(path, `${JSON.stringify(record({ id: 'a' }))}\n{"id": "b", "mo`);
      expect(readResultsFile(path).map((r) => r.id)).toEqual(['a']);
      writeFileSync(path, `garbage\n${JSON.stringify(record({ id: 'a' }))}\n`);
      expect(() => readResultsFile(path)).toThrow(/Line 1 .* is not an eval result/);
      openResultsFile(path, { resume: false });
      expect(readResultsFile(path)).toEqual([]);
      expect(readResultsFile(join(dir, 'missing.jsonl'))).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
