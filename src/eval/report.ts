/**
 * Aggregates scored predictions into the benchmark report: per memory mode, overall and by
 * category and by database — accuracy, refusals, errors, repairs, model calls, prompt tokens and
 * p50/p95 latency — plus the `taught` mode's memory figures.
 */
import { MEMORY_MODES, type MemoryMode } from './dataset.js';
import type { EvalRecord, TeachSummary } from './run.js';

/** Figures of a group of predictions. */
export interface GroupStats {
  questions: number;
  correct: number;
  /** correct / questions, in [0, 1] (0 for an empty group). */
  accuracy: number;
  /** Statements the SQL guard refused. */
  refusals: number;
  /** Questions that produced no result (refusals included). */
  errors: number;
  /** Repairs after database errors, summed. */
  repairs: number;
  modelCalls: number;
  promptTokens: number;
  /** Nearest-rank percentiles of the per-question pipeline time, ms. */
  p50LatencyMs: number;
  p95LatencyMs: number;
}

/** The report of one memory mode. */
export interface ModeSummary {
  mode: MemoryMode;
  overall: GroupStats;
  byCategory: Record<string, GroupStats>;
  byDatabase: Record<string, GroupStats>;
  /** `taught` only: what teaching stored and how often it came back. */
  memory?: {
    sentencesTaught: number;
    factsStored: number;
    /** Questions (with instructions) where a memory taught from their own instructions was applied. */
    questionsWithRelevantMemory: number;
    questionsWithInstructions: number;
    /** Sentences that left no new memory, and why. */
    notStored: { db: string; sentence: string; why: string }[];
  };
  /**
   * `eval --model none` only: coverage (answered / questions) and execution accuracy
   * of the answered ones (correct / answered), and how many each path answered.
   */
  withoutModel?: WithoutModelStats;
}

/** Figures of a `--model none` run (see {@link ModeSummary.withoutModel}). */
export interface WithoutModelStats {
  questions: number;
  answered: number;
  /** answered / questions, in [0, 1]. */
  coverage: number;
  correct: number;
  /** correct / answered, in [0, 1] (0 when nothing was answered). */
  accuracyAnswered: number;
  byPath: { example: number; rules: number };
}

/** The `--model none` figures of `records`, or undefined when none of them ran without the model. */
export function withoutModelStats(records: readonly EvalRecord[]): WithoutModelStats | undefined {
  const mine = records.filter((r) => r.path !== undefined);
  if (mine.length === 0) return undefined;
  // An answer is a result from a saved example or a rule; a chosen SQL that failed counts as answered, wrong.
  const answered = mine.filter((r) => r.path === 'example' || r.path === 'rules');
  const correct = answered.filter((r) => r.correct).length;
  return {
    questions: mine.length,
    answered: answered.length,
    coverage: answered.length / mine.length,
    correct,
    accuracyAnswered: answered.length === 0 ? 0 : correct / answered.length,
    byPath: {
      example: answered.filter((r) => r.path === 'example').length,
      rules: answered.filter((r) => r.path === 'rules').length,
    },
  };
}

/** The whole report (`eval --json`); `accuracy` comes last, over every prediction of the run. */
export interface EvalSummary {
  dataset: string;
  model: string;
  modes: ModeSummary[];
  interrupted: boolean;
  /** JSONL file with every prediction. */
  resultsFile?: string;
  accuracy: number;
}

/** Nearest-rank percentile (`p` in [0, 100]) of `values`; 0 when empty. */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}

/** Figures of a list of predictions. */
export function groupStats(records: readonly EvalRecord[]): GroupStats {
  const latencies = records.map((r) => r.latencyMs);
  const correct = records.filter((r) => r.correct).length;
  return {
    questions: records.length,
    correct,
    accuracy: records.length === 0 ? 0 : correct / records.length,
    refusals: records.filter((r) => r.refused).length,
    errors: records.filter((r) => r.rowCount === null).length,
    repairs: sum(records.map((r) => r.repairs)),
    modelCalls: sum(records.map((r) => r.modelCalls)),
    promptTokens: sum(records.map((r) => r.promptTokens)),
    p50LatencyMs: percentile(latencies, 50),
    p95LatencyMs: percentile(latencies, 95),
  };
}

function groupBy(records: readonly EvalRecord[], key: (r: EvalRecord) => string): Record<string, GroupStats> {
  const groups = new Map<string, EvalRecord[]>();
  for (const r of records) groups.set(key(r), [...(groups.get(key(r)) ?? []), r]);
  return Object.fromEntries(
    [...groups.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([k, v]) => [k, groupStats(v)]),
  );
}

/** Builds the report from every record of the run (resumed ones included). */
export function summarize(input: {
  dataset: string;
  model: string;
  records: readonly EvalRecord[];
  taught?: readonly TeachSummary[];
  interrupted?: boolean;
  resultsFile?: string;
}): EvalSummary {
  const modes = MEMORY_MODES.filter((m) => input.records.some((r) => r.mode === m));
  const summaries = modes.map((mode): ModeSummary => {
    const records = input.records.filter((r) => r.mode === mode);
    const summary: ModeSummary = {
      mode,
      overall: groupStats(records),
      byCategory: groupBy(records, (r) => r.category || '(none)'),
      byDatabase: groupBy(records, (r) => r.db),
    };
    const withoutModel = withoutModelStats(records);
    if (withoutModel) summary.withoutModel = withoutModel;
    if (mode === 'taught') {
      const taught = input.taught ?? [];
      const withInstructions = records.filter((r) => r.relevantMemoryRecalled !== undefined);
      summary.memory = {
        sentencesTaught: sum(taught.map((t) => t.sentences)),
        factsStored: sum(taught.map((t) => t.memories)),
        questionsWithRelevantMemory: withInstructions.filter((r) => r.relevantMemoryRecalled).length,
        questionsWithInstructions: withInstructions.length,
        notStored: taught.flatMap((t) => (t.unstored ?? []).map((u) => ({ db: t.db, ...u }))),
      };
    }
    return summary;
  });
  const correct = input.records.filter((r) => r.correct).length;
  const out: EvalSummary = {
    dataset: input.dataset,
    model: input.model,
    modes: summaries,
    interrupted: input.interrupted ?? false,
    accuracy: input.records.length === 0 ? 0 : correct / input.records.length,
  };
  if (input.resultsFile) {
    // Keep `accuracy` the last key of the JSON document.
    const { accuracy, ...rest } = out;
    return { ...rest, resultsFile: input.resultsFile, accuracy };
  }
  return out;
}

/** Column headings of {@link statsRow}. */
export const STATS_HEADINGS = [
  'accuracy',
  'correct',
  'refused',
  'errors',
  'repairs',
  'model calls',
  'prompt tokens',
  'p50 ms',
  'p95 ms',
] as const;

/** One table row of figures, formatted for people. */
export function statsRow(stats: GroupStats): string[] {
  return [
    `${(stats.accuracy * 100).toFixed(1)}%`,
    `${stats.correct}/${stats.questions}`,
    String(stats.refusals),
    String(stats.errors),
    String(stats.repairs),
    String(stats.modelCalls),
    String(stats.promptTokens),
    stats.p50LatencyMs.toFixed(0),
    stats.p95LatencyMs.toFixed(0),
  ];
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
