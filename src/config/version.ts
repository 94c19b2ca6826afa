/**
 * sqlrecall's version, read once from its own package.json: the one place it is written. Found by
 * walking up from this module, which sits at another depth when compiled (`dist/config/`), bundled
 * (`dist/bundle/`) or run from `src/` by a test.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

let cached: string | undefined;

/**
 * The `version` of the package.json named `sqlrecall` nearest above this module; `0.0.0` when none
 * is found (a copy of the code without its package file), never an error.
 */
export function packageVersion(): string {
  if (cached !== undefined) return cached;
  cached = '0.0.0';
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth += 1, dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (!existsSync(file)) continue;
    try {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (pkg.name === 'sqlrecall' && typeof pkg.version === 'string') {
        cached = pkg.version;
        break;
      }
    } catch {
      // unreadable: keep looking further up
    }
  }
  return cached;
}
