/**
 * `sqlrecall eval --dataset FILE --dumps DIR [--db URL] [--memory-mode none|prompt|taught|all]`:
 * execution accuracy of the whole pipeline on a defog-format benchmark. Progress with ETA on
 * stderr; each prediction appended to a JSONL file as it is scored; Ctrl-C stops after keeping what
 * was scored (exit 130), `--resume` continues.
 */
import Table from 'cli-table3';
import { SqlrecallError } from '../../core/errors.js';
import { MEMORY_MODES, type MemoryMode } from '../../eval/dataset.js';
import { type EvalSummary, type GroupStats, STATS_HEADINGS, statsRow } from '../../eval/report.js';
import { checkEvalServerUrl, runBenchmark } from '../../runtime/eval-runtime.js';
import { pc } from '../colors.js';
import { configFrom } from '../config-from.js';
import type { CliIO } from '../io.js';
import { printJson } from '../output.js';
import type { GlobalOptions } from '../program.js';
import { progressBar } from '../progress.js';
import { reportError } from '../report.js';

/** Flags of `eval`. */
export interface EvalFlags extends GlobalOptions {
  dataset?: string;
  dumps?: string;
  memoryMode?: string;
  out?: string;
  resume?: boolean;
  limit?: string;
  category?: string;
  dbName?: string;
  dbPrefix?: string;
}

/** Exit code of a run stopped by Ctrl-C (128 + SIGINT), after its results were kept. */
export const EXIT_INTERRUPTED = 130;

function parseModes(value: string | undefined): MemoryMode[] {
  const mode = (value ?? 'prompt').toLowerCase();
  // taught first: a pipeline without memory then fails before the long runs, not after.
  if (mode === 'all') return ['taught', 'none', 'prompt'];
  if ((MEMORY_MODES as readonly string[]).includes(mode)) return [mode as MemoryMode];
  throw new SqlrecallError('usage', `--memory-mode must be none, prompt, taught or all (got "${value}").`);
}

function parseLimit(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1)
    throw new SqlrecallError('usage', `--limit must be a positive whole number (got "${value}").`);
  return n;
}

function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  return s >= 3600
    ? `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`
    : `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Runs `eval`; returns the exit code. */
export async function runEvalCommand(io: CliIO, opts: EvalFlags): Promise<number> {
  const json = Boolean(opts.json);
  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT_INTERRUPTED);
    io.stderr.write('\nStopping: the results so far are kept (Ctrl-C again to quit at once).\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  try {
    if (!opts.dataset || !opts.dumps) {
      throw new SqlrecallError(
        'usage',
        'eval needs --dataset FILE (a defog-format CSV) and --dumps DIR (<db_name>.sql files).',
      );
    }
    const modes = parseModes(opts.memoryMode);
    const limit = parseLimit(opts.limit);
    checkEvalServerUrl(opts.db);
    const config = configFrom(io, { ...opts, db: undefined });
    const started = Date.now();
    const bar = progressBar(io, 'eval', (done, total) => {
      const elapsed = Date.now() - started;
      const eta = done > 0 ? formatDuration((elapsed / done) * (total - done)) : '?';
      return `${done}/${total} questions, ${formatDuration(elapsed)} elapsed, ETA ${eta}`;
    });
    const summary = await runBenchmark({
      config,
      dataset: opts.dataset,
      dumpsDir: opts.dumps,
      serverUrl: opts.db,
      databasePrefix: opts.dbPrefix,
      modes,
      filter: { category: opts.category, dbName: opts.dbName, limit },
      outPath: opts.out,
      resume: Boolean(opts.resume),
      maxRows: opts.maxRows ? config.maxRows : undefined,
      signal: controller.signal,
      onProgress: (done, total) => bar.update(done, total),
      onNotice: (text) => io.stderr.write(`${pc.dim(text)}\n`),
    });
    bar.done();
    if (json) printJson(io, summary);
    else printSummary(io, summary);
    io.stderr.write(`${pc.dim(`every prediction: ${summary.resultsFile}`)}\n`);
    return summary.interrupted ? EXIT_INTERRUPTED : 0;
  } catch (error) {
    return reportError(io, json, error);
  } finally {
    process.off('SIGINT', onSigint);
  }
}

function statsTable(title: string, groups: [string, GroupStats][]): string {
  const table = new Table({ head: [title, ...STATS_HEADINGS], style: { head: [], border: [] } });
  for (const [name, stats] of groups) table.push([name, ...statsRow(stats)]);
  return table.toString();
}

/** Prints the report as tables: each mode by category and by database, then modes side by side. */
export function printSummary(io: CliIO, summary: EvalSummary): void {
  const out = (text: string): void => {
    io.stdout.write(`${text}\n`);
  };
  out(
    `Execution accuracy of ${summary.model} on ${summary.dataset}${summary.interrupted ? ' (interrupted)' : ''}`,
  );
  for (const mode of summary.modes) {
    out(`\nmemory mode: ${mode.mode}`);
    out(statsTable('category', [...Object.entries(mode.byCategory), ['all', mode.overall]]));
    out(statsTable('database', Object.entries(mode.byDatabase)));
    if (mode.withoutModel) {
      const w = mode.withoutModel;
      out(
        `without the model: answered ${w.answered} of ${w.questions} (coverage ${(w.coverage * 100).toFixed(1)}%; ` +
          `${w.byPath.example} from saved examples, ${w.byPath.rules} by rules); ` +
          `accuracy on answered ${(w.accuracyAnswered * 100).toFixed(1)}% (${w.correct}/${w.answered})`,
      );
    }
    if (mode.memory) {
      out(
        `taught: ${mode.memory.sentencesTaught} sentences → ${mode.memory.factsStored} facts stored; ` +
          `relevant memory recalled for ${mode.memory.questionsWithRelevantMemory} of ${mode.memory.questionsWithInstructions} questions`,
      );
      for (const n of mode.memory.notStored.slice(0, 10))
        out(pc.dim(`  not stored (${n.db}): ${n.sentence} — ${n.why}`));
      if (mode.memory.notStored.length > 10)
        out(pc.dim(`  … ${mode.memory.notStored.length - 10} more in --json`));
    }
  }
  if (summary.modes.length > 1) {
    out('\nmemory ablation');
    out(
      statsTable(
        'mode',
        summary.modes.map((m) => [m.mode, m.overall]),
      ),
    );
  }
  out(`\naccuracy: ${(summary.accuracy * 100).toFixed(1)}%`);
}
