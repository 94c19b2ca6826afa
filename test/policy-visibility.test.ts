/**
 * Data policies, what each user sees: the SQL prompt, schema linking, value hints and name
 * suggestions never mention a denied column or a table outside the allow-list, value hints come
 * from the rows a row filter leaves, and in privacy mode no result value reaches the model. Real
 * PGlite, real Ollama client against the scripted server; every request the model got is read back
 * from the server's log and searched for distinctive values.
 */
import { PGlite } from '@electric-sql/pglite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AskInput, Assistant } from '../src/agent/assistant.js';
import { createSchemaLinkingPlanner } from '../src/agent/context.js';
import { ask } from '../src/app/ask.js';
import { runSql } from '../src/app/run-sql.js';
import { readSchema, schemaText } from '../src/app/schema.js';
import { schemaContext } from '../src/app/schema-context.js';
import { isSqlrecallError, type SqlrecallError } from '../src/core/errors.js';
import type { DatabaseConnector } from '../src/core/ports.js';
import type { Schema } from '../src/core/schema.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { SchemaIndex } from '../src/linking/schema-index.js';
import { InMemorySchemaIndexStore } from '../src/linking/store.js';
import { createValueSampler } from '../src/linking/value-hints.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { type EffectivePolicy, unrestrictedPolicy } from '../src/policy/types.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';
import { type ScriptedOllama, startScriptedOllama } from './support/scripted/server.js';

const SHOP = `
CREATE TABLE customers (id int PRIMARY KEY, name text NOT NULL, email text, segment text, region text);
CREATE TABLE orders (id int PRIMARY KEY, customer_id int REFERENCES customers(id), region text, status text, amount numeric);
CREATE TABLE employees (id int PRIMARY KEY, name text, dept text, salary numeric);
CREATE UNIQUE INDEX employees_salary_key ON employees (id, salary);
CREATE TABLE vault (id int PRIMARY KEY, code text);
INSERT INTO customers VALUES
  (1, 'Qorvath Ltd', 'qorvath-mail@example.test', 'zelkova-gold', 'EMEA'),
  (2, 'Plumbix Inc', 'plumbix-mail@example.test', 'zelkova-gold', 'APAC');
INSERT INTO orders VALUES
  (1, 1, 'EMEA', 'emea-shipped', 10), (2, 1, 'EMEA', 'emea-shipped', 20),
  (3, 2, 'APAC', 'apac-hidden-status', 30), (4, 2, 'APAC', 'apac-hidden-status', 40);
INSERT INTO employees VALUES (1, 'Ann', 'sales', 91234), (2, 'Bob', 'ops', 87654);
INSERT INTO vault VALUES (1, 'vault-code-xyz');
CREATE VIEW order_totals AS SELECT region, sum(amount) AS total FROM orders GROUP BY region;
ANALYZE;
`;

/** Sam: three tables, salary and email denied, orders of their region only. */
const SAM: EffectivePolicy = {
  user: 'sam',
  sources: ['user sam', 'team sales'],
  tables: new Set(['public.orders', 'public.customers', 'public.employees']),
  deniedColumns: new Map([
    ['public.employees', new Map([['salary', 'team sales']])],
    ['public.customers', new Map([['email', 'team sales']])],
  ]),
  rowFilters: new Map([
    ['public.orders', [{ expression: 'region = $1', params: ['EMEA'], policy: 'team sales' }]],
  ]),
  rowsToModel: true,
  admin: false,
};

/** Rhea: no allow-list, the orders of her region only. */
const RHEA: EffectivePolicy = {
  ...unrestrictedPolicy('rhea'),
  sources: ['user rhea'],
  rowFilters: new Map([
    ['public.orders', [{ expression: 'region = $1', params: ['EMEA'], policy: 'user rhea' }]],
  ]),
};

/** Priya: every table, privacy mode. */
const PRIVATE: EffectivePolicy = {
  ...unrestrictedPolicy('priya'),
  sources: ['user priya'],
  rowsToModel: false,
};

const fenced = (sql: string) => `\`\`\`sql\n${sql}\n\`\`\``;

let pg: PGlite;
let db: DatabaseConnector;
let model: ScriptedOllama;
let assistant: Assistant;
/** SQL replies, consumed in order by the next `sql` requests. */
let sqlReplies: string[] = [];

beforeAll(async () => {
  pg = new PGlite(inMemoryPgliteOptions());
  await pg.exec(SHOP);
  db = createPgliteConnector({ pglite: pg });
  model = await startScriptedOllama({
    chat: (req) =>
      req.purpose === 'sql' ? fenced(sqlReplies.shift() ?? 'SELECT 1') : 'Here is what the query returned.',
  });
  // Schema linking wired as the runtime does: one index for every user of the database.
  const index = new SchemaIndex({
    store: new InMemorySchemaIndexStore(),
    fingerprint: 'policy-visibility',
    sampler: createValueSampler(db),
  });
  assistant = new Assistant({
    chat: createOllamaChatModel({ host: model.url, model: 'qwen2.5-coder:7b' }),
    db,
    loadSchema: () => db.introspect({ schemas: ['public'] }),
    planContext: createSchemaLinkingPlanner({ index, contextTokens: 8192 }),
    maxRepairs: 2,
  });
}, 60_000);

afterAll(async () => {
  await model?.close();
  await db?.close();
  await pg?.close();
});

/** Asks as `policy`'s user; returns the document and every chat request it caused. */
async function askAs(policy: EffectivePolicy | undefined, question: string, replies: string[]) {
  sqlReplies = [...replies];
  const before = model.chatRequests().length;
  const input: Omit<AskInput, 'message'> & { question: string } = {
    user: policy?.user ?? 'anyone',
    question,
    ...(policy ? { policy } : {}),
  };
  const doc = await ask(assistant, input);
  const requests = model.chatRequests().slice(before);
  const text = (purpose?: string) =>
    requests
      .filter((r) => purpose === undefined || r.purpose === purpose)
      .flatMap((r) => r.messages.map((m) => m.content))
      .join('\n');
  return { doc, requests, text };
}

describe('what a policed user sees of the schema', () => {
  it('the SQL prompt names no denied column, no table outside the allow-list, no value of a filtered-out row', async () => {
    const { text, doc } = await askAs(SAM, 'orders per status', [
      'SELECT status, count(*) FROM orders GROUP BY status',
    ]);
    const prompt = text('sql');
    expect(prompt).toContain('orders');
    expect(prompt).toContain('customers');
    // The value hint of orders.status is sampled from sam's rows only.
    expect(prompt).toContain('emea-shipped');
    for (const hidden of ['salary', 'email', 'vault', 'apac-hidden-status', 'employees_salary_key'])
      expect(prompt).not.toContain(hidden);
    expect(doc.privacyMode).toBeUndefined();
  });

  it('the shared index still serves everyone: an unrestricted user asked next sees every table', async () => {
    const { text } = await askAs(undefined, 'what is in the vault', ['SELECT code FROM vault']);
    const prompt = text('sql');
    expect(prompt).toContain('vault');
    expect(prompt).toContain('salary');
    expect(prompt).toContain('apac-hidden-status');
  });

  it('did-you-mean suggestions never offer a denied column', async () => {
    const { text, doc } = await askAs(SAM, 'pay of each employee', [
      'SELECT name, salry FROM employees',
      'SELECT name FROM employees',
    ]);
    expect(doc.attempts.length).toBe(2);
    expect(doc.attempts[0]!.error).toMatch(/salry/);
    expect(doc.attempts[0]!.error).not.toMatch(/salary/);
    expect(text()).not.toContain('salary');
  });

  it('schema, /api/schema and MCP read the catalog through one use case: hidden tables are "not found"', async () => {
    const source = { catalog: () => db.introspect({ schemas: ['public'] }) };
    const seen: Schema = await readSchema(source, { policy: SAM });
    expect(seen.tables.map((t) => t.name).sort()).toEqual(['customers', 'employees', 'orders']);
    const text = schemaText(seen);
    expect(text).not.toMatch(/salary|email|vault/);
    const employees = seen.tables.find((t) => t.name === 'employees')!;
    expect(employees.uniqueIndexes.map((u) => u.name)).not.toContain('employees_salary_key');
    const missing = await readSchema(source, { table: 'vault', policy: SAM }).catch((e: unknown) => e);
    expect(isSqlrecallError(missing, 'not_found')).toBe(true);
    // Without a policy the same source shows everything (the filter is the policy's, not the source's).
    expect(schemaText(await readSchema(source))).toMatch(/salary/);
  });
});

describe('a view the user cannot read, and row counts beyond a row filter', () => {
  it('the SQL prompt and the repair hint never offer the view over the filtered table', async () => {
    const { text, doc } = await askAs(RHEA, 'totals per region', [
      'SELECT * FROM order_total',
      'SELECT region FROM orders',
    ]);
    expect(doc.attempts.length).toBe(2);
    expect(doc.attempts[0]!.error).toMatch(/order_total/);
    expect(doc.attempts[0]!.error).not.toMatch(/order_totals/);
    expect(text()).not.toContain('order_totals');
    expect(text('sql')).toContain('vault');
  });

  it('schema, /api/schema and MCP show neither the view nor the estimate of the filtered table', async () => {
    const source = { catalog: () => db.introspect({ schemas: ['public'] }) };
    const open = await readSchema(source);
    expect(open.tables.find((t) => t.name === 'orders')!.estimatedRows).toBe(4);
    const seen = await readSchema(source, { policy: RHEA });
    expect(seen.tables.map((t) => t.name)).not.toContain('order_totals');
    expect(seen.tables.find((t) => t.name === 'orders')!.estimatedRows).toBeNull();
    expect(seen.tables.find((t) => t.name === 'employees')!.estimatedRows).toBe(2);
    const missing = await readSchema(source, { table: 'order_totals', policy: RHEA }).catch(
      (e: unknown) => e,
    );
    expect(isSqlrecallError(missing, 'not_found')).toBe(true);
  });
});

describe('the other ways a user meets the schema', () => {
  const sqlRuntime = () => ({
    database: async () => db,
    catalog: () => db.introspect({ schemas: ['public'] }),
    limits: { maxRows: 100, statementTimeoutMs: 5000, maxResultBytes: 1_000_000, allowTables: [] },
  });

  it("a person's SQL with a misspelt name gets a hint naming only columns the user may see", async () => {
    const as = async (policy?: EffectivePolicy) =>
      (await runSql(
        { sql: 'SELECT salry FROM employees', ...(policy ? { policy } : {}) },
        sqlRuntime(),
      ).catch((e: unknown) => e)) as SqlrecallError;
    const open = await as();
    expect(`${open.message} ${open.details.hint}`).toMatch(/salary/);
    const sam = await as(SAM);
    expect(sam.code).toBe('db_query');
    expect(`${sam.message} ${sam.details.hint ?? ''}`).not.toMatch(/salary/);
  });

  it("the schema context of a question shows only the user's tables, columns and values", async () => {
    const index = new SchemaIndex({
      store: new InMemorySchemaIndexStore(),
      fingerprint: 'policy-visibility-context',
      sampler: createValueSampler(db),
    });
    const planner = createSchemaLinkingPlanner({ index, contextTokens: 8192 });
    const runtime = {
      catalog: () => db.introspect({ schemas: ['public'] }),
      schemaLinking: async () => ({ plan: planner }),
    };
    const open = await schemaContext(runtime, 'orders per status and salaries');
    expect(open.schemaText).toMatch(/salary/);
    expect(open.schemaText).toMatch(/apac-hidden-status/);
    const doc = await schemaContext(runtime, 'orders per status and salaries', {}, { policy: SAM });
    expect(doc.catalogTables).toBe(3);
    expect(JSON.stringify(doc)).not.toMatch(/salary|email|vault|apac-hidden-status/);
  });
});

describe('privacy mode: no result value reaches the model', () => {
  it('the answer model gets column names, types and the row count, never a value', async () => {
    const { doc, text } = await askAs(PRIVATE, 'customer names and emails', [
      'SELECT name, email FROM customers ORDER BY id',
    ]);
    expect(doc.rows).toEqual([
      ['Qorvath Ltd', 'qorvath-mail@example.test'],
      ['Plumbix Inc', 'plumbix-mail@example.test'],
    ]);
    expect(doc.privacyMode).toBe(true);
    const answerPrompt = text('answer');
    expect(answerPrompt).toContain('Rows returned: 2');
    expect(answerPrompt).toContain('"email"');
    for (const value of [
      'Qorvath',
      'Plumbix',
      'qorvath-mail',
      'plumbix-mail',
      'zelkova-gold',
      'emea-shipped',
    ])
      expect(text()).not.toContain(value);
  });

  it('a database error quoting a value reaches the repair prompt without the value', async () => {
    const { doc, text } = await askAs(PRIVATE, 'emails as numbers', [
      'SELECT email::int FROM customers',
      'SELECT count(*) AS n FROM customers',
    ]);
    expect(doc.attempts[0]!.error).toMatch(/invalid input syntax for type integer/);
    expect(doc.rows).toEqual([['2']]);
    expect(text()).toMatch(/invalid input syntax for type integer/);
    expect(text()).not.toMatch(/qorvath|plumbix/i);
  });

  it('an empty result is not repaired with stored values', async () => {
    const { doc, text } = await askAs(PRIVATE, 'gold customers', [
      "SELECT name FROM customers WHERE segment = 'Zelkova-Gold'",
      "SELECT name FROM customers WHERE segment = 'zelkova-gold'",
    ]);
    expect(doc.rowCount).toBe(0);
    expect(doc.attempts).toHaveLength(1);
    expect(text()).not.toContain('zelkova-gold');
  });

  it('without privacy mode the same empty result is repaired with the stored spelling (the check is live)', async () => {
    const { doc, text } = await askAs(undefined, 'gold customers', [
      "SELECT name FROM customers WHERE segment = 'Zelkova-Gold'",
      "SELECT name FROM customers WHERE segment = 'zelkova-gold'",
    ]);
    expect(doc.attempts).toHaveLength(2);
    expect(doc.rowCount).toBe(2);
    expect(text('sql')).toContain('zelkova-gold');
  });
});
