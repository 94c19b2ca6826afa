// `npm run docs:settings`: writes the settings table (src/config/settings.ts) into README.md between
// its settings markers. test/settings-doc.test.ts fails when the README's copy is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { withSettingsTable } from '../src/config/settings-doc.js';

const path = new URL('../README.md', import.meta.url);
const before = readFileSync(path, 'utf8');
const after = withSettingsTable(before);
if (after !== before) writeFileSync(path, after);
process.stdout.write(
  after === before ? 'README.md settings table is current\n' : 'README.md settings table updated\n',
);
