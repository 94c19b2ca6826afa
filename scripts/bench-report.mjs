// The format of BENCHMARKS.md, shared by `scripts/bench.mjs` and its test. The file is generated
// only: a header, then one section per benchmark of the registry, each opened by a marker comment
// and stamped with the run that produced it. A full run with `--only` replaces the sections it ran
// and carries the others over from the existing file by their markers, so a partial run never
// erases figures; anything outside the markers is not kept, so hand-written text has no place here
// (dated investigations live in docs/perf/).

/** Marker that opens the section of benchmark `name`. */
export const sectionMarker = (name) => `<!-- bench:${name} -->`;

const MARKER = /^<!-- bench:([a-z0-9-]+) -->$/;

/**
 * The generated sections of an existing BENCHMARKS.md, by benchmark name: each runs from its
 * marker line to the next marker or the footer (the line starting `_Load average at the end`).
 * Text outside sections is ignored.
 * @param {string} text
 * @returns {Map<string, string>}
 */
export function parseSections(text) {
  const sections = new Map();
  let name;
  let lines = [];
  const flush = () => {
    if (name) sections.set(name, lines.join('\n').trim());
  };
  for (const line of text.split('\n')) {
    const marker = MARKER.exec(line);
    if (marker) {
      flush();
      name = marker[1];
      lines = [line];
    } else if (line.startsWith('_Load average at the end')) {
      flush();
      name = undefined;
    } else if (name) {
      lines.push(line);
    }
  }
  flush();
  return sections;
}

/**
 * One section in the file's format.
 * @param {{ name: string, title: string, restsOn: string }} bench a registry entry
 * @param {{ stamp: string, command?: string, body: string, seconds?: number }} run `stamp` names the
 *   run (mode, date, Node, load); `command` is shown above the verbatim `body`; `seconds` the wall time
 */
export function renderSection(bench, run) {
  const parts = [sectionMarker(bench.name), `## ${bench.title}`, '', `Rests on: ${bench.restsOn}.`, '', `_${run.stamp}_`, ''];
  if (run.command) parts.push('```', run.command, '```', '');
  parts.push(run.body.trim(), '');
  if (run.seconds !== undefined) parts.push(`_${run.seconds.toFixed(0)} s wall time._`, '');
  return parts.join('\n');
}

/** The section of a benchmark that no run has produced yet. */
export function renderMissing(bench) {
  return renderSection(bench, {
    stamp: 'Not run yet by `npm run bench` in full or quick mode.',
    body: `No figures. Run \`npm run bench -- --only ${bench.name}\`.`,
  });
}

/**
 * The whole file: `header` lines, then for every registry entry in order its fresh section, else
 * the one carried over from `previous`, else its `skipped` section (why this run did not run it),
 * else a "not run yet" section; then `footer`.
 * @param {{ header: string[], registry: { name: string, title: string, restsOn: string }[],
 *   fresh: Map<string, string>, previous?: Map<string, string>, skipped?: Map<string, string>,
 *   footer: string }} input
 */
export function renderReport({ header, registry, fresh, previous = new Map(), skipped = new Map(), footer }) {
  const sections = registry.map(
    (bench) =>
      `${(fresh.get(bench.name) ?? previous.get(bench.name) ?? skipped.get(bench.name) ?? renderMissing(bench)).trim()}\n`,
  );
  return `${[...header, ...sections, footer].join('\n').trimEnd()}\n`;
}
