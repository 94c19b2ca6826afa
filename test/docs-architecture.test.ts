/**
 * docs/architecture.md is the map of `src/`: every folder of `src/` (at any depth) must be named in
 * it as `src/<folder>`, so a new folder cannot appear without its place in the layers being said.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** Every folder under `dir`, as paths relative to the repository root with `/` separators. */
function folders(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(dir, entry.name);
    out.push(relative(ROOT, path).split('\\').join('/'), ...folders(path));
  }
  return out;
}

describe('docs/architecture.md', () => {
  it('names every folder of src/', () => {
    const doc = readFileSync(join(ROOT, 'docs', 'architecture.md'), 'utf8');
    const all = folders(join(ROOT, 'src'));
    expect(all.length).toBeGreaterThan(10);
    // A name counts only as a whole path: `src/models` must not be satisfied by `src/models/ollama`.
    const missing = all.filter(
      (folder) => !new RegExp(`${folder.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-])`).test(doc),
    );
    expect(missing, 'folders of src/ not named in docs/architecture.md').toEqual([]);
  });
});
