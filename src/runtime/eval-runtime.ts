/**
 * Composition of `sqlrecall eval`: loads the benchmark databases, builds one Runtime per database
 * with a metered chat model (the same real pipeline a user gets: schema context, memories,
 * generation, guard, repair, read-only execution), runs {@link runEval}, appends each prediction to
 * the results JSONL and returns the report.
 */
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { SqlrecallError } from '../core/errors.js';
import type { ChatModel } from '../core/ports.js';
import { parseDatabaseUrl } from '../databases/open.js';
import { type DatasetFilter, hasInstructions, loadEvalDataset, type MemoryMode } from '../eval/dataset.js';
import { type MeteredChatModel, meterChatModel } from '../eval/meter.js';
import { type EvalSummary, summarize } from '../eval/report.js';
import { openResultsFile, readResultsFile } from '../eval/results-file.js';
import { type EvalDatabase, type EvalRecord, recordKey, runEval, type TeachSummary } from '../eval/run.js';
import { teachSentences } from '../eval/teach.js';
import { prepareEvalDatabase } from './eval-databases.js';
import { type MemoryRuntime, openMemory } from './memory-runtime.js';
import { Runtime } from './runtime.js';

/** Row cap of benchmark queries unless `--max-rows` is given (results must be complete to score). */
export const EVAL_MAX_ROWS = 100_000;

/** Options of {@link runBenchmark}. */
export interface BenchmarkOptions {
  config: Config;
  /** A defog-format CSV. */
  dataset: string;
  /** Folder with `<db_name>.sql` dumps. */
  dumpsDir: string;
  /** PostgreSQL server for the benchmark databases; absent → embedded PGlite. */
  serverUrl?: string;
  /** Server database prefix (default `sqlrecall_eval_`). */
  databasePrefix?: string;
  modes: MemoryMode[];
  filter?: DatasetFilter;
  /** Results JSONL; default `<home>/eval/results/<dataset name>.jsonl`. */
  outPath?: string;
  /** Skip questions already in the results file (and keep them in the report). */
  resume?: boolean;
  /** Row cap; default {@link EVAL_MAX_ROWS}. */
  maxRows?: number;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number) => void;
  /** Status lines (loading databases, teaching) for stderr. */
  onNotice?: (text: string) => void;
}

/**
 * Checks the `--db` of an eval run: benchmark databases are created on a PostgreSQL server or, with
 * no URL, in embedded PGlite, so a URL must be `postgres://…`.
 * @throws SqlrecallError `usage` for any other URL (a PGlite path, another scheme)
 */
export function checkEvalServerUrl(url: string | undefined): void {
  if (url && parseDatabaseUrl(url).engine !== 'postgres') {
    throw new SqlrecallError(
      'usage',
      'eval --db takes a PostgreSQL server URL (postgres://…); leave it out for embedded databases.',
    );
  }
}

/** Default results path for a dataset. */
export function defaultResultsPath(config: Config, dataset: string): string {
  const base = dataset
    .split(/[\\/]/)
    .pop()!
    .replace(/\.[^.]+$/, '');
  return join(config.home, 'eval', 'results', `${base}.jsonl`);
}

/**
 * A Runtime whose chat model is the run's shared metered model and whose memory store is the run's
 * one store (opened once for all databases, closed by the run, not by each database's runtime).
 */
class EvalRuntime extends Runtime {
  constructor(
    config: Config,
    private readonly metered: ChatModel,
    private readonly sharedMemory: () => Promise<MemoryRuntime>,
  ) {
    super(config);
  }

  override chat(): ChatModel {
    return this.metered;
  }

  override memory(): Promise<MemoryRuntime> {
    return this.sharedMemory();
  }
}

/**
 * Runs a benchmark end to end and returns its report (resumed predictions included).
 * @throws SqlrecallError `usage` (dataset, dumps, taught without memory), `db_*`, `model_*`
 */
export async function runBenchmark(options: BenchmarkOptions): Promise<EvalSummary> {
  const { config } = options;
  const questions = await loadEvalDataset(options.dataset, options.filter);
  const outPath = options.outPath ?? defaultResultsPath(config, options.dataset);
  const previous: EvalRecord[] = options.resume ? readResultsFile(outPath) : [];
  const writer = openResultsFile(outPath, { resume: Boolean(options.resume) });
  const maxRows = options.maxRows ?? EVAL_MAX_ROWS;
  const modes = hasInstructions(questions) ? options.modes : options.modes.filter((m) => m !== 'taught');
  if (modes.length < options.modes.length)
    options.onNotice?.('The dataset has no instructions: taught mode skipped.');
  const meter: MeteredChatModel = meterChatModel(new Runtime(config).chat());
  // Eval memories live apart from the user's own, always in the embedded store under the eval
  // folder (MEMORY_DATABASE_URL is ignored): a run never teaches the real users anything.
  const evalHome = join(config.home, 'eval', 'home');
  const evalConfig: Config = { ...config, home: evalHome, memoryDatabaseUrl: undefined };
  const runTag = Date.now().toString(36);
  let memory: Promise<MemoryRuntime> | undefined;
  const sharedMemory = (): Promise<MemoryRuntime> => {
    if (!memory) {
      const opening = openMemory(evalConfig, { chat: meter });
      memory = opening;
      opening.catch(() => {
        if (memory === opening) memory = undefined;
      });
    }
    return memory;
  };

  const openDatabase = async (name: string): Promise<EvalDatabase> => {
    const location = await prepareEvalDatabase(name, {
      dumpsDir: options.dumpsDir,
      serverUrl: options.serverUrl,
      home: config.home,
      prefix: options.databasePrefix,
    });
    options.onNotice?.(`${location.reused ? 'using' : 'loaded'} database ${name}`);
    const runtime = new EvalRuntime(
      { ...evalConfig, databaseUrl: location.url, maxRows, schemas: [] },
      meter,
      sharedMemory,
    );
    const assistant = await runtime.assistant();
    const db = await runtime.database();
    const database: EvalDatabase = {
      pipeline: assistant,
      runGold: (sql) => db.execute(sql, { maxRows, timeoutMs: config.statementTimeoutMs }),
      teach: (user, sentences) => teachSentences(assistant, user, sentences),
      close: () => runtime.close(),
    };
    return database;
  };

  const taught: TeachSummary[] = [];
  const running = runEval({
    questions,
    modes,
    openDatabase,
    meter: () => meter.reading(),
    userFor: (mode, db) => `eval-${db}-${mode}-${runTag}`,
    skip: new Set(previous.map((r) => recordKey(r.mode, r.id))),
    onRecord: (record) => writer.append(record),
    onTaught: (summary) => {
      taught.push(summary);
      options.onNotice?.(
        `taught ${summary.db}: ${summary.sentences} sentences → ${summary.memories} memories`,
      );
    },
    onProgress: options.onProgress,
    signal: options.signal,
    // `eval --model none`: answers only from saved examples and rules.
    ...(config.model === 'none' ? { noModel: true } : {}),
  });
  let result: Awaited<typeof running>;
  try {
    result = await running;
  } finally {
    const opened = memory;
    memory = undefined;
    if (opened) await opened.then((m) => m.store.close()).catch(() => {});
  }
  const wanted = new Set(questions.map((q) => q.id));
  const kept = previous.filter((r) => wanted.has(r.id) && modes.includes(r.mode));
  return summarize({
    dataset: options.dataset,
    model: config.model,
    records: [...kept, ...result.records],
    taught,
    interrupted: result.interrupted,
    resultsFile: outPath,
  });
}
