/**
 * The table allowlist (`--allow-tables`) must shape what the model is shown, as a data policy
 * does: a table outside the list, its columns and its sampled values never reach the SQL prompt.
 * Otherwise the model can hand a value of a forbidden table back as a literal
 * (`SELECT 'vault-code-xyz'`), which the guard accepts because it reads no table.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Assistant } from '../src/agent/assistant.js';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import { ask } from '../src/app/ask.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore } from '../src/linking/store.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

let pg: PGlite;
let db: DatabaseConnector;
let model: ScriptedOllama;

beforeAll(async () => {
  pg = new PGlite(inMemoryPgliteOptions());
  await pg.exec(`
    CREATE TABLE orders (id int PRIMARY KEY, status text);
    CREATE TABLE vault (id int PRIMARY KEY, code text);
    INSERT INTO orders VALUES (1, 'shipped'), (2, 'open');
    INSERT INTO vault VALUES (1, 'vault-code-xyz'), (2, 'vault-code-xyz');
    ANALYZE;`);
  db = createPgliteConnector({ pglite: pg });
  model = await startScriptedOllama({
    chat: (req) => (req.purpose === 'sql' ? '```sql\nSELECT 1\n```' : 'Done.'),
  });
}, 60_000);

afterAll(async () => {
  await model?.close();
  await db?.close();
  await pg?.close();
});

describe('allowlist and the SQL prompt', () => {
  it('shows the model no table, column or value outside --allow-tables', async () => {
    const index = new SchemaIndex({
      store: new InMemorySchemaIndexStore(),
      fingerprint: 'allowlist-prompt',
      sampler: createValueSampler(db),
    });
    const assistant = new Assistant({
      chat: createOllamaChatModel({ host: model.url, model: 'qwen2.5-coder:7b' }),
      db,
      loadSchema: () => db.introspect({ schemas: ['public'] }),
      planContext: createSchemaLinkingPlanner({ index, contextTokens: 8192 }),
      allowTables: ['public.orders'],
      maxRepairs: 0,
    });
    const before = model.chatRequests().length;
    await ask(assistant, { user: 'anyone', question: 'what codes are in the vault' });
    const prompt = model
      .chatRequests()
      .slice(before)
      .filter((r) => r.purpose === 'sql')
      .flatMap((r) => r.messages.map((m) => m.content))
      .join('\n');
    expect(prompt).toContain('orders');
    expect(prompt).not.toContain('vault-code-xyz');
    expect(prompt).not.toMatch(/\bvault\b.*\bcode\b/s);
  });
});
