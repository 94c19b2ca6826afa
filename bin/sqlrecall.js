#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` through the prepare script):
// dist/bundle/ is dist/cli/main.js and what it imports, bundled (scripts/bundle.mjs).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const entry = new URL('../dist/bundle/main.js', import.meta.url);
if (!existsSync(fileURLToPath(entry))) {
  process.stderr.write(
    'sqlrecall is not built yet: run `npm install` (or `npm run build`) in the project folder.\n',
  );
  process.exit(2);
}
await import(entry.href);
