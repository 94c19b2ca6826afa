/**
 * Comments in `src/` explain why in words that stand alone: no pointer to an issue number, a design
 * document outside the repository or a private notes folder, which a reader of the code cannot
 * open. The architecture lives in docs/architecture.md, measurements in bench/ and docs/perf/.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** What a comment must not point at, with the reason shown when one does. */
const FORBIDDEN: [RegExp, string][] = [
  [/\bissues? #?\d+/i, 'an issue number'],
  [/\.\.\/shared\b/, 'a folder outside the repository'],
  [/\bDESIGN\.md\b/, 'a design document outside the repository'],
  [/\/work\//, 'a path on a development machine'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|tsx|mts|mjs|js)$/.test(entry.name) ? [path] : [];
  });
}

/**
 * The comment part of a line: the whole line when it opens with `//`, `/*` or continues a block
 * comment with `*`; else the text after a ` //` that follows code (close enough for source lines,
 * where a URL's `//` comes right after a colon, not a space).
 */
function commentOf(line: string): string | undefined {
  const trimmed = line.trimStart();
  if (/^(\/\/|\/\*|\*)/.test(trimmed)) return trimmed;
  const at = line.indexOf(' // ');
  return at >= 0 ? line.slice(at) : undefined;
}

describe('comments in src/', () => {
  it('stand alone: no issue numbers, no paths outside the repository', () => {
    const files = sourceFiles(join(ROOT, 'src'));
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          const comment = commentOf(line);
          if (comment === undefined) return;
          for (const [pattern, what] of FORBIDDEN) {
            if (pattern.test(comment))
              found.push(`${relative(ROOT, file)}:${i + 1} points at ${what}: ${line.trim()}`);
          }
        });
    }
    expect(found).toEqual([]);
  });

  it('the check sees a comment that points at an issue, in either form', () => {
    expect(commentOf(' * The guard (issue 10, item 8): parses')).toMatch(FORBIDDEN[0]?.[0] as RegExp);
    expect(commentOf('const x = 1; // issue 14: jsonb text')).toMatch(FORBIDDEN[0]?.[0] as RegExp);
    expect(commentOf("const url = 'http://127.0.0.1:11434';")).toBeUndefined();
  });
});
