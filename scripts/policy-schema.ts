// `npm run docs:policy-schema`: writes the policy file's JSON schema (src/policy/file.ts) to
// docs/policy.schema.json. test/policy-file.test.ts fails when the published copy is stale.
import { readFileSync, writeFileSync } from 'node:fs';
import { policyJsonSchema } from '../src/policy/file.js';

const path = new URL('../docs/policy.schema.json', import.meta.url);
const text = `${JSON.stringify(policyJsonSchema(), null, 2)}\n`;
let before = '';
try {
  before = readFileSync(path, 'utf8');
} catch {}
if (text !== before) writeFileSync(path, text);
process.stdout.write(
  text === before ? 'docs/policy.schema.json is current\n' : 'docs/policy.schema.json updated\n',
);
