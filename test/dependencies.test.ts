/**
 * Issue 18: every runtime dependency in package.json is imported by the shipped code (`src/`,
 * tests excluded, or the web UI in `web/`). A package only tests, benchmarks or the build use
 * belongs in devDependencies; one nothing imports does not belong at all.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** Source files below `dir` (TypeScript, TSX and JavaScript), test files left out. */
function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') out.push(...sourceFiles(path));
    } else if (/\.(ts|tsx|mts|js|mjs)$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name)) {
      out.push(path);
    }
  }
  return out;
}

/**
 * Module specifiers a source text imports: `import … from 'x'`, `export … from 'x'`,
 * `import 'x'`, `import('x')` and `require('x')`.
 */
function importSpecifiers(source: string): string[] {
  const pattern = /(?:\bfrom\s*|\bimport\s*|\bimport\s*\(\s*|\brequire\s*\(\s*)(['"])([^'"\n]+)\1/g;
  return [...source.matchAll(pattern)].map((match) => match[2] as string);
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`); null for relative and `node:` ones. */
function packageOf(specifier: string): string | null {
  if (specifier.startsWith('.') || specifier.startsWith('/') || specifier.startsWith('node:')) return null;
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? null);
}

/** Dependencies of `dependencies` that no text of `sources` imports. */
function unimported(dependencies: readonly string[], sources: readonly string[]): string[] {
  const used = new Set(sources.flatMap((text) => importSpecifiers(text).map(packageOf)));
  return dependencies.filter((name) => !used.has(name));
}

describe('runtime dependencies', () => {
  it('the scanner sees every import form and tells a missing package', () => {
    const sources = [
      "import { a } from 'alpha';\nimport type { B } from '@scope/beta/sub';",
      "export * from 'gamma';\nimport 'delta/register';\nconst e = await import('epsilon');",
      "const z = require(\"zeta\");\nimport x from './local.js';\nimport { readFileSync } from 'node:fs';",
    ];
    const all = ['alpha', '@scope/beta', 'gamma', 'delta', 'epsilon', 'zeta'];
    expect(unimported(all, sources)).toEqual([]);
    expect(unimported([...all, 'unused', '@scope/other'], sources)).toEqual(['unused', '@scope/other']);
    expect(unimported(['alpha'], ["// alpha is mentioned, not imported: 'alpha'"])).toEqual(['alpha']);
  });

  it('every one in package.json (optional ones too) is imported by src/ or web/', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const files = [...sourceFiles(join(ROOT, 'src')), ...sourceFiles(join(ROOT, 'web'))];
    expect(files.map((file) => relative(ROOT, file))).toContain('src/main.ts');
    const missing = unimported(
      [...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})],
      files.map((file) => readFileSync(file, 'utf8')),
    );
    expect(missing, 'move these to devDependencies or remove them').toEqual([]);
  });

  it('shipped code (src/, tests left out) imports nothing from test/ (the scripted model server lives there)', () => {
    const offenders = sourceFiles(join(ROOT, 'src')).filter((file) =>
      importSpecifiers(readFileSync(file, 'utf8')).some((spec) => /(^|\/)test\//.test(spec)),
    );
    expect(offenders.map((file) => relative(ROOT, file))).toEqual([]);
  });

  it('pins every dependency to an exact version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
      optionalDependencies?: Record<string, string>;
    };
    const ranges = Object.entries({
      ...pkg.dependencies,
      ...pkg.devDependencies,
      ...pkg.optionalDependencies,
    }).filter(([, version]) => !/^\d+\.\d+\.\d+(-[\w.]+)?$/.test(version));
    expect(ranges).toEqual([]);
  });
});
