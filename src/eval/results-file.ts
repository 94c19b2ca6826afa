/**
 * The results JSONL: one {@link EvalRecord} per line, appended synchronously as each prediction
 * is scored (so Ctrl-C or a crash keeps every finished question), read back by `--resume`.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SqlrecallError } from '../core/errors.js';
import type { EvalRecord } from './run.js';

/** Appends records to a JSONL file. */
export interface ResultsWriter {
  readonly path: string;
  append(record: EvalRecord): void;
}

/**
 * Opens `path` for results: emptied first unless `resume` (then appended to). Each `append` is one
 * synchronous write of one line.
 * @throws SqlrecallError `usage` when the file cannot be written
 */
export function openResultsFile(path: string, options: { resume: boolean }): ResultsWriter {
  try {
    mkdirSync(dirname(path), { recursive: true });
    if (!options.resume || !existsSync(path)) writeFileSync(path, '');
  } catch (error) {
    throw new SqlrecallError('usage', `Cannot write the results file ${path}.`, { cause: error });
  }
  return {
    path,
    append(record) {
      appendFileSync(path, `${JSON.stringify(record)}\n`);
    },
  };
}

/**
 * Reads the records of a results file; a missing file is empty. A last line cut by a crash is
 * ignored (its question is asked again); any other broken line is an error.
 * @throws SqlrecallError `usage` for a file that is not a results JSONL
 */
export function readResultsFile(path: string): EvalRecord[] {
  if (!existsSync(path)) return [];
  const lines = readFileSync(path, 'utf8').split('\n');
  const records: EvalRecord[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    try {
      const value = JSON.parse(line) as EvalRecord;
      if (typeof value.id !== 'string' || typeof value.mode !== 'string') throw new Error('not a record');
      records.push(value);
    } catch (error) {
      const last = lines.slice(i + 1).every((rest) => rest.trim() === '');
      if (last) return;
      throw new SqlrecallError(
        'usage',
        `Line ${i + 1} of ${path} is not an eval result; remove it or drop --resume.`,
        {
          cause: error,
        },
      );
    }
  });
  return records;
}
