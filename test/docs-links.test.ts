/**
 * The documentation in the repository holds together: README.md stays an overview (at most 250
 * lines; details live in docs/), and every relative link in README.md, BENCHMARKS.md, SECURITY.md
 * and docs/ points at a file or folder that exists, and at a heading that exists when it names one.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

function markdownFiles(): string[] {
  const files = ['README.md', 'BENCHMARKS.md', 'SECURITY.md'].map((f) => join(ROOT, f));
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) files.push(path);
    }
  };
  walk(join(ROOT, 'docs'));
  return files.filter((f) => existsSync(f));
}

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = readFileSync(file, 'utf8').replace(/```[\s\S]*?```/g, '');
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

/** Relative link targets of a Markdown file (code blocks and inline code left out). */
function links(text: string): string[] {
  const prose = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

describe('documentation', () => {
  it('README.md is at most 250 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length;
    expect(lines).toBeLessThanOrEqual(250);
  });

  it('every relative link resolves, anchors included', () => {
    const files = markdownFiles();
    expect(files.length).toBeGreaterThan(5);
    const broken: string[] = [];
    let checked = 0;
    for (const file of files) {
      for (const target of links(readFileSync(file, 'utf8'))) {
        checked += 1;
        const [path = '', anchor] = target.split('#');
        const resolved = path === '' ? file : join(dirname(file), decodeURIComponent(path));
        const where = `${relative(ROOT, file)} → ${target}`;
        if (!existsSync(resolved)) broken.push(`${where} (no such file)`);
        else if (anchor && !statSync(resolved).isDirectory() && !anchors(resolved).has(anchor))
          broken.push(`${where} (no such heading)`);
      }
    }
    expect(checked).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });
});
