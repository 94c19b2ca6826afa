/**
 * BENCHMARKS.md is written only by `npm run bench` (scripts/bench.mjs, format in
 * scripts/bench-report.mjs): a partial run keeps the other benchmarks' sections, nothing written by
 * hand survives a run, and the committed file holds nothing but generated sections.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  type BenchEntry,
  parseSections,
  renderReport,
  renderSection,
  sectionMarker,
} from '../scripts/bench-report.mjs';

const ROOT = join(import.meta.dirname, '..');
const REGISTRY: BenchEntry[] = [
  { name: 'alpha', title: 'Alpha figures', restsOn: 'nothing real' },
  { name: 'beta', title: 'Beta figures', restsOn: 'the scripted model' },
  { name: 'gamma', title: 'Gamma figures', restsOn: 'PGlite' },
];
const FOOTER = '_Load average at the end of the last run (1/5/15 min): 1.0 / 1.0 / 1.0._';

const section = (i: number, stamp: string, body: string) =>
  renderSection(REGISTRY[i] as BenchEntry, {
    stamp,
    command: `npx tsx bench/${REGISTRY[i]?.name}.ts`,
    body,
    seconds: 3,
  });

/** Names of the benchmarks registered in scripts/bench.mjs, in order. */
function registeredNames(): string[] {
  const source = readFileSync(join(ROOT, 'scripts', 'bench.mjs'), 'utf8');
  const registry = source.slice(
    source.indexOf('const REGISTRY = ['),
    source.indexOf('\n];', source.indexOf('const REGISTRY = [')),
  );
  return [...registry.matchAll(/^ {4}name: '([a-z0-9-]+)',$/gm)].map((m) => m[1] ?? '');
}

describe('BENCHMARKS.md format', () => {
  it('a partial run replaces its own sections and carries the others over unchanged', () => {
    const first = renderReport({
      header: ['# Benchmarks', ''],
      registry: REGISTRY,
      fresh: new Map([
        ['alpha', section(0, 'Run: full, day 1.', 'alpha 1 ms')],
        ['beta', section(1, 'Run: full, day 1.', 'beta 2 ms')],
      ]),
      footer: FOOTER,
    });
    expect(first).toContain('Not run yet');
    const second = renderReport({
      header: ['# Benchmarks', ''],
      registry: REGISTRY,
      fresh: new Map([['beta', section(1, 'Run: full, day 2.', 'beta 5 ms')]]),
      previous: parseSections(first),
      footer: FOOTER,
    });
    const sections = parseSections(second);
    // Only sections with figures are carried; gamma is rendered as never run again.
    expect([...sections.keys()]).toEqual(['alpha', 'beta']);
    expect(second).toContain(`${sectionMarker('gamma')}\n## Gamma figures`);
    expect(sections.get('alpha')).toContain('alpha 1 ms');
    expect(sections.get('alpha')).toContain('Run: full, day 1.');
    expect(sections.get('beta')).toContain('beta 5 ms');
    expect(second).not.toContain('beta 2 ms');
    // Re-reading and re-writing with nothing fresh is the identity.
    expect(
      renderReport({
        header: ['# Benchmarks', ''],
        registry: REGISTRY,
        fresh: new Map(),
        previous: sections,
        footer: FOOTER,
      }),
    ).toBe(second);
  });

  it('text written by hand between or after sections does not survive a run', () => {
    const generated = renderReport({
      header: ['# Benchmarks', ''],
      registry: REGISTRY,
      fresh: new Map([['alpha', section(0, 'Run: full, day 1.', 'alpha 1 ms')]]),
      footer: FOOTER,
    });
    const edited = `${generated}\n## My investigation\n\nHand-written notes.\n`.replace(
      sectionMarker('beta'),
      `## Another note\n\nMore notes.\n\n${FOOTER}\n\n${sectionMarker('beta')}`,
    );
    const next = renderReport({
      header: ['# Benchmarks', ''],
      registry: REGISTRY,
      fresh: new Map(),
      previous: parseSections(edited),
      footer: FOOTER,
    });
    expect(next).toContain('alpha 1 ms');
    expect(next).not.toContain('notes');
    expect(next).not.toContain('investigation');
  });

  it('the committed BENCHMARKS.md is all generated: one marked section per registered benchmark', () => {
    const text = readFileSync(join(ROOT, 'BENCHMARKS.md'), 'utf8');
    const names = registeredNames();
    expect(names.length).toBeGreaterThan(10);
    expect([...text.matchAll(/^<!-- bench:([a-z0-9-]+) -->$/gm)].map((m) => m[1])).toEqual(names);
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (line.startsWith('## '))
        expect(lines[i - 1], `heading without a marker: ${line}`).toMatch(/^<!-- bench:[a-z0-9-]+ -->$/);
    });
    const sections = parseSections(text);
    expect(sections.size).toBeGreaterThan(10);
    for (const body of sections.values()) expect(body).toMatch(/\n_Run: /);
    // Everything between the header and the footer is a section: nothing written by hand between.
    const body = text.slice(text.indexOf('<!-- bench:'), text.lastIndexOf('_Load average at the end'));
    const leftovers = body
      .split(/^<!-- bench:[a-z0-9-]+ -->$/m)
      .map((part) => part.slice(part.search(/_\d+ s wall time\._|No figures\. Run|Skipped: /)))
      .map((part) =>
        part.replace(/^(_\d+ s wall time\._|No figures\. Run[^\n]*|Skipped: [^\n]*)/, '').trim(),
      );
    expect(leftovers.filter(Boolean)).toEqual([]);
  });
});
