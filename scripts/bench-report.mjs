// The format of BENCHMARKS.md, shared by `scripts/bench.mjs` and its test. The file is generated
// only: a header, then one section per benchmark of the registry, each opened by a marker comment,
// stamped with the run that produced it and closed by its wall-time line. A full run with `--only`
// replaces the sections it ran and carries the others' figures over from the existing file, so a
// partial run never erases figures; nothing outside a section is kept, so hand-written text has no
// place here (dated investigations live in docs/perf/).

/** Marker that opens the section of benchmark `name`. */
export const sectionMarker = (name) => `<!-- bench:${name} -->`;

const MARKER = /^<!-- bench:([a-z0-9-]+) -->$/;

const WALL_TIME = /^_\d+ s wall time\._$/;

/**
 * The generated sections of an existing BENCHMARKS.md that hold a run's figures, by benchmark name.
 * A section runs from its marker line through its `_N s wall time._` line; text after that line and
 * before the next marker, a second `## ` heading, and sections without figures (a benchmark that
 * was skipped or never run) are not kept.
 * @param {string} text
 * @returns {Map<string, string>}
 */
export function parseSections(text) {
  const sections = new Map();
  let name;
  let lines = [];
  for (const line of text.split('\n')) {
    const marker = MARKER.exec(line);
    if (marker) {
      name = marker[1];
      lines = [line];
    } else if (name === undefined) {
      // outside a section: the header, the footer or text written by hand
    } else if (line.startsWith('## ') && lines.length > 1) {
      name = undefined;
    } else {
      lines.push(line);
      if (WALL_TIME.test(line)) {
        sections.set(name, lines.join('\n').trim());
        name = undefined;
      }
    }
  }
  return sections;
}

/**
 * One section in the file's format.
 * @param {{ name: string, title: string, restsOn: string }} bench a registry entry
 * @param {{ stamp: string, command?: string, body: string, seconds?: number }} run `stamp` names the
 *   run (mode, date, Node, load); `command` is shown above the verbatim `body`; `seconds` the wall time
 */
export function renderSection(bench, run) {
  const parts = [
    sectionMarker(bench.name),
    `## ${bench.title}`,
    '',
    `Rests on: ${bench.restsOn}.`,
    '',
    `_${run.stamp}_`,
    '',
  ];
  if (run.command) parts.push('```', run.command, '```', '');
  parts.push(run.body.trim(), '');
  if (run.seconds !== undefined) parts.push(`_${run.seconds.toFixed(0)} s wall time._`, '');
  return parts.join('\n');
}

/**
 * The section of a benchmark that no run in the file has produced.
 * @param {{ name: string, title: string, restsOn: string }} bench
 * @param {string} [why] the stamp line; default: never run by `npm run bench`
 */
export function renderMissing(bench, why = 'Not run yet by `npm run bench` in full or quick mode.') {
  return renderSection(bench, {
    stamp: why,
    body: `No figures. Run \`npm run bench -- --only ${bench.name}\`.`,
  });
}

/**
 * The whole file: `header` lines, then for every registry entry in order its fresh section, else
 * the one carried over from `previous`, else its `skipped` section (why this run did not run it),
 * else a section saying `missing` (why there are no figures); then `footer`.
 * @param {{ header: string[], registry: { name: string, title: string, restsOn: string }[],
 *   fresh: Map<string, string>, previous?: Map<string, string>, skipped?: Map<string, string>,
 *   missing?: string, footer: string }} input
 */
export function renderReport({
  header,
  registry,
  fresh,
  previous = new Map(),
  skipped = new Map(),
  missing,
  footer,
}) {
  const sections = registry.map(
    (bench) =>
      `${(fresh.get(bench.name) ?? previous.get(bench.name) ?? skipped.get(bench.name) ?? renderMissing(bench, missing)).trim()}\n`,
  );
  return `${[...header, ...sections, footer].join('\n').trimEnd()}\n`;
}
