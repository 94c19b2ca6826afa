/**
 * A benchmark run's questions: a defog CSV read with {@link readDefogCsv}, filtered, with stable
 * ids; how a question is put to the pipeline in each memory mode; and the sentences a simulated
 * user teaches in `taught` mode.
 */
import { createHash } from 'node:crypto';
import { type DefogQuestion, readDefogCsv } from './gold.js';

/** How domain instructions reach the model. */
export type MemoryMode = 'none' | 'prompt' | 'taught';

/** Every memory mode, in report order. */
export const MEMORY_MODES: readonly MemoryMode[] = ['none', 'prompt', 'taught'];

/** One question of a run. */
export interface EvalQuestion extends DefogQuestion {
  /** Position in the file (0-based, before filtering). */
  index: number;
  /** Stable id: index plus a short hash of the database and question text (used by `--resume`). */
  id: string;
}

/** Filters of {@link loadEvalDataset}. */
export interface DatasetFilter {
  /** Only this `query_category`. */
  category?: string;
  /** Only questions on this database (`db_name`). */
  dbName?: string;
  /** At most this many questions (after the other filters), in file order. */
  limit?: number;
}

/** Stable id of a question (see {@link EvalQuestion.id}). */
export function questionId(index: number, question: DefogQuestion): string {
  const hash = createHash('sha256').update(`${question.dbName}\n${question.question}`).digest('hex');
  return `${index}-${hash.slice(0, 8)}`;
}

/**
 * Reads and filters a defog question file.
 * @throws SqlrecallError `not_found`, `usage` (see {@link readDefogCsv})
 */
export async function loadEvalDataset(path: string, filter: DatasetFilter = {}): Promise<EvalQuestion[]> {
  const all = (await readDefogCsv(path)).map((q, index) => ({ ...q, index, id: questionId(index, q) }));
  const chosen = all.filter(
    (q) =>
      (filter.category === undefined || q.category === filter.category) &&
      (filter.dbName === undefined || q.dbName === filter.dbName),
  );
  return filter.limit === undefined ? chosen : chosen.slice(0, Math.max(0, filter.limit));
}

/** True when at least one question carries instructions (the memory ablation applies). */
export function hasInstructions(questions: readonly EvalQuestion[]): boolean {
  return questions.some((q) => q.instructions.trim() !== '');
}

/** The line that introduces pasted instructions in `prompt` mode. */
export const INSTRUCTIONS_HEADER = 'Follow these instructions when you write the query:';

/**
 * The message put to the pipeline: the question alone (`none`, `taught`), or the question followed
 * by its instructions (`prompt`, as defog's sql-eval pastes the `instructions` column into the
 * prompt). A question without instructions is the same in every mode.
 */
export function questionMessage(question: DefogQuestion, mode: MemoryMode): string {
  const instructions = question.instructions.trim();
  if (mode !== 'prompt' || instructions === '') return question.question;
  return `${question.question}\n${INSTRUCTIONS_HEADER}\n${instructions}`;
}

/**
 * Splits instructions into sentences a user would say one at a time: on line breaks, and after
 * `.`, `!` or `?` followed by a space and a capital letter (so `e.g. 5` and `3.5` stay whole).
 */
export function splitSentences(text: string): string[] {
  return text
    .split(/\r?\n|(?<=[.!?])\s+(?=[A-Z])/)
    .map((s) => s.trim())
    .filter((s) => s !== '');
}

/**
 * The sentences taught for one database in `taught` mode: every distinct sentence of the
 * `instructions` of that database's questions, in first-seen order.
 */
export function teachingSentences(questions: readonly DefogQuestion[], dbName: string): string[] {
  const seen = new Set<string>();
  for (const q of questions) {
    if (q.dbName !== dbName) continue;
    for (const sentence of splitSentences(q.instructions)) seen.add(sentence);
  }
  return [...seen];
}
