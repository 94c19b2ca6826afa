// Types of scripts/bench-report.mjs, for the tests that import it.

/** One benchmark of the registry in scripts/bench.mjs, as far as the report needs it. */
export interface BenchEntry {
  name: string;
  title: string;
  restsOn: string;
}

/** One run's output of one benchmark. */
export interface BenchRun {
  /** The line naming the run: mode, date, Node, load. */
  stamp: string;
  /** The exact command, shown above the output. */
  command?: string;
  /** The script's output, verbatim. */
  body: string;
  /** Wall time of the script in seconds. */
  seconds?: number;
}

export function sectionMarker(name: string): string;
export function parseSections(text: string): Map<string, string>;
export function renderSection(bench: BenchEntry, run: BenchRun): string;
export function renderMissing(bench: BenchEntry, why?: string): string;
export function renderReport(input: {
  header: string[];
  registry: BenchEntry[];
  fresh: Map<string, string>;
  previous?: Map<string, string>;
  skipped?: Map<string, string>;
  missing?: string;
  footer: string;
}): string;
