/**
 * The layering of src/, checked on its import graph: every `import`, `export … from` and `import()`
 * of a module of src/ that loads it at run time, read with TypeScript's own parser. `import type`
 * and `export type` are left out (they vanish from the compiled code; a command naming the CLI's
 * option type is no cycle), as are packages.
 * - no cycle: each module can be understood, loaded and tested after the modules it imports;
 * - the front ends are siblings: nothing in src/cli/ imports src/server/ (the process entry,
 *   src/main.ts, hands the CLI what it needs of the server).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/cli.js';

const SRC = join(ROOT, 'src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !/\.test\.tsx?$/.test(entry.name) ? [path] : [];
  });
}

/** The module a relative specifier names (`./x.js` → `./x.ts`), or undefined for a package. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  for (const candidate of [
    base.replace(/\.js$/, '.ts'),
    base.replace(/\.js$/, '.tsx'),
    `${base}.ts`,
    join(base, 'index.ts'),
  ])
    if (existsSync(candidate)) return candidate;
  return undefined;
}

/** The specifiers a module loads at run time: value imports and re-exports, and `import()` calls. */
function runtimeSpecifiers(file: string): string[] {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) && !node.importClause?.isTypeOnly) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (ts.isExportDeclaration(node) && !node.isTypeOnly && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) out.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      out.push(node.arguments[0].text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/** Each module of src/ (repository-relative) → the src/ modules it loads at run time. */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sourceFiles(SRC)) {
    const targets = runtimeSpecifiers(file)
      .map((specifier) => resolveSpecifier(file, specifier))
      .filter((target): target is string => target !== undefined)
      .map((target) => relative(ROOT, target));
    graph.set(relative(ROOT, file), [...new Set(targets)]);
  }
  return graph;
}

/** Every cycle's modules in order (one per strongly connected component larger than one module or self-importing). */
function cycles(graph: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative enough for a graph of a few hundred modules.
  let index = 0;
  const indexOf = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string) => {
    indexOf.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indexOf.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node)!, indexOf.get(next)!));
    }
    if (low.get(node) === indexOf.get(node)) {
      const component: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        component.push(member);
      } while (member !== node);
      if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
    }
  };
  for (const node of graph.keys()) if (!indexOf.has(node)) visit(node);
  return found;
}

describe('import graph of src/', () => {
  const graph = importGraph();

  it('reads the real graph (static and lazy imports, .js specifiers found as .ts; types left out)', () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get('src/main.ts')).toContain('src/cli/program.ts');
    expect(graph.get('src/main.ts')).toContain('src/server/start.ts'); // import()
    expect(graph.get('src/cli/program.ts')).toContain('src/cli/commands/ask.ts'); // import()
    expect(graph.get('src/agent/set-aside.ts')).not.toContain('src/agent/memory-sql.ts'); // import type
  });

  it('finds a cycle when there is one (the detector itself)', () => {
    const sample = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', ['a']],
      ['e', ['e']],
    ]);
    expect(cycles(sample)).toEqual([['a', 'b', 'c'], ['e']]);
  });

  it('has no cycle', () => {
    expect(cycles(graph)).toEqual([]);
  });

  it('src/cli/ imports nothing from src/server/', () => {
    const offenders = [...graph]
      .filter(
        ([file, targets]) => file.startsWith('src/cli/') && targets.some((t) => t.startsWith('src/server/')),
      )
      .map(([file]) => file)
      .sort();
    expect(offenders).toEqual([]);
  });

  it('src/cli/ names no src/server/ module, not even for a type', () => {
    const offenders = sourceFiles(join(SRC, 'cli'))
      .filter((file) => /from '(\.\.\/)+server\//.test(readFileSync(file, 'utf8')))
      .map((file) => relative(ROOT, file));
    expect(offenders).toEqual([]);
  });
});
