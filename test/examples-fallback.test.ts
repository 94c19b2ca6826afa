/**
 * Issue 19: answers without the model. With the model server unreachable (or `noModel`), a
 * question equal to a saved example but for another country or year returns the right rows (the
 * literal substituted through the parse tree and confirmed by the database); "how many … are there"
 * and "top 5 … by …" are answered by rules; anything else fails with the "model needed" hint
 * (exit 5). Another user's examples are never used.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Assistant } from '../src/agent/assistant.js';
import { alignQuestion, exampleSlots, substituteSlots } from '../src/agent/example-reuse.js';
import { wordSimilarity } from '../src/agent/example-similarity.js';
import type { ExampleSource } from '../src/agent/fallback.js';
import type { PreferenceSource } from '../src/agent/fallback-preferences.js';
import { ruleSql, ruleSqlWithFilter } from '../src/agent/fallback-rules.js';
import { SQL_PROMPT_MARKER, USER_EXAMPLE_LABEL } from '../src/agent/prompts.js';
import { isSqlrecallError } from '../src/core/errors.js';
import type { Memory, MemoryScope } from '../src/core/memory.js';
import type { Schema } from '../src/core/schema.js';
import type { AskOutcome, Step } from '../src/core/steps.js';
import { withFirstTokenTimeout } from '../src/models/first-token-timeout.js';
import { createOllamaChatModel } from '../src/models/ollama/chat-model.js';
import { createTestDatabase, ENGINES, type TestDatabase } from './support/engines.js';
import { memoryFixture } from './support/memory-fixtures.js';
import { startScriptedOllama } from './support/scripted/server.js';

const SETUP = `
CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL, country text NOT NULL);
INSERT INTO customers (name, country) VALUES ('Asha', 'India'), ('Bob', 'United States'), ('Chen', 'China'), ('Dev', 'India');
CREATE TABLE products (id serial PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL);
INSERT INTO products (name, price) VALUES ('a', 5), ('b', 50), ('c', 20), ('d', 70), ('e', 1), ('f', 30), ('g', 10);
CREATE TABLE sales (id serial PRIMARY KEY, region text NOT NULL, year int NOT NULL, amount numeric NOT NULL);
INSERT INTO sales (region, year, amount) VALUES ('Europe', 2023, 10), ('Europe', 2024, 20), ('Asia', 2023, 300), ('Asia', 2024, 4000), ('Asia', 2024, 1);
`;

function example(user: string, id: string, text: string, sql: string): Memory {
  return memoryFixture({ id, scope: { user }, kind: 'example', text, sql });
}

const EXAMPLES: Memory[] = [
  example(
    'alice',
    '11111111-0000-4000-8000-000000000001',
    'which customers are from India?',
    "SELECT name FROM customers WHERE country = 'India' ORDER BY name",
  ),
  example(
    'alice',
    '11111111-0000-4000-8000-000000000002',
    'total sales in Europe in 2023',
    "SELECT sum(s.amount) AS total FROM sales s WHERE s.region = 'Europe' AND s.year = 2023",
  ),
  example(
    'bob',
    '22222222-0000-4000-8000-000000000001',
    'names of customers living in India',
    "SELECT name FROM customers WHERE country = 'India'",
  ),
];

/** Examples by scope, recording every scope read. */
function source(): ExampleSource & { scopes: MemoryScope[] } {
  const scopes: MemoryScope[] = [];
  return {
    scopes,
    list: async (scope) => {
      scopes.push(scope);
      return EXAMPLES.filter((m) => m.scope.user === scope.user);
    },
  };
}

async function drain(gen: AsyncGenerator<Step, AskOutcome>): Promise<{ steps: Step[]; outcome: AskOutcome }> {
  const steps: Step[] = [];
  for (;;) {
    const next = await gen.next();
    if (next.done) return { steps, outcome: next.value };
    steps.push(next.value);
  }
}

describe('example reuse (pure parts)', () => {
  const schema = {
    tables: [
      {
        schema: 'public',
        name: 'customers',
        kind: 'table',
        columns: [{ name: 'name' }, { name: 'country' }],
      },
    ],
  } as unknown as Schema;

  it('finds the literals the question names, with their token ranges and column', async () => {
    const sql = "SELECT name FROM customers c WHERE c.country = 'India' LIMIT 5";
    const slots = await exampleSlots(sql, 'top 5 customers from India', schema);
    expect(slots.map((s) => [s.value, s.kind, s.column?.column ?? null])).toEqual([
      ['India', 'string', 'country'],
      ['5', 'number', null],
    ]);
    const out = substituteSlots(sql, [
      { slot: slots[0]!, newValue: "Côte d'Ivoire" },
      { slot: slots[1]!, newValue: '10' },
    ]);
    expect(out).toBe("SELECT name FROM customers c WHERE c.country = 'Côte d''Ivoire' LIMIT 10");
  });

  it('a text value not compared with one table column cannot be confirmed, so it is not a reusable slot', async () => {
    const sql = "SELECT name FROM customers WHERE upper(country) = upper('India')";
    const slots = await exampleSlots(sql, 'customers from India', schema);
    expect(slots).toHaveLength(1);
    expect(slots[0]!.column).toBeNull();
  });

  it('aligns only questions that differ in the values alone, and refuses ambiguity', () => {
    const slots = [{ value: 'India', kind: 'string' as const }];
    expect(alignQuestion('customers from India', slots, 'customers from United States')).toEqual([
      ['united', 'states'],
    ]);
    expect(alignQuestion('customers from India', slots, 'customers living in France')).toBeNull();
    expect(alignQuestion('customers from India', slots, 'customers from')).toBeNull();
    // a question that is little more than the value is never matched
    expect(alignQuestion('India', slots, 'France')).toBeNull();
    // articles and "please" are ignored on both sides; other words are not
    expect(alignQuestion('list the customers from India', slots, 'please list customers from Peru')).toEqual([
      ['peru'],
    ]);
    expect(alignQuestion('list customers from India', slots, 'list all customers from Peru')).toBeNull();
    expect(alignQuestion('list customers from India', slots, 'list customers not from Peru')).toBeNull();
    // a value holding an article keeps every word
    const nl = [{ value: 'The Netherlands', kind: 'string' as const }];
    expect(alignQuestion('customers from The Netherlands', nl, 'customers from the netherlands')).toEqual([
      ['the', 'netherlands'],
    ]);
  });

  it('rules: the one foreign-key join, only when one key and one reading fit', () => {
    const col = (name: string, type = 'text') => ({ name, type, domainBaseType: null });
    const shop = {
      tables: [
        {
          schema: 'public',
          name: 'customers',
          kind: 'table',
          primaryKey: ['id'],
          columns: [col('id', 'integer'), col('country')],
          foreignKeys: [],
        },
        {
          schema: 'public',
          name: 'orders',
          kind: 'table',
          primaryKey: ['id'],
          columns: [col('id', 'integer'), col('customer_id', 'integer'), col('status')],
          foreignKeys: [
            {
              name: 'orders_customer_fk',
              columns: ['customer_id'],
              references: { schema: 'public', table: 'customers', columns: ['id'] },
            },
          ],
        },
      ],
    } as unknown as Schema;
    expect(ruleSql('count of orders per customer country', shop)?.sql).toBe(
      'SELECT p.country, count(*) AS count FROM public.orders t JOIN public.customers p ON t.customer_id = p.id GROUP BY p.country ORDER BY count DESC, p.country',
    );
    expect(ruleSql('how many orders per customer city', shop)).toBeNull(); // no such column
    expect(ruleSql('how many customers per order status', shop)).toBeNull(); // no key that way
    const twoKeys = {
      tables: [
        shop.tables[0]!,
        {
          ...shop.tables[1]!,
          foreignKeys: [
            ...shop.tables[1]!.foreignKeys,
            {
              name: 'orders_billing_fk',
              columns: ['billing_id'],
              references: { schema: 'public', table: 'customers', columns: ['id'] },
            },
          ],
        },
      ],
    } as unknown as Schema;
    expect(ruleSql('count of orders per customer country', twoKeys)).toBeNull(); // which customer?
  });

  it('rules: a trailing filter only on a value exactly one column confirms', async () => {
    const col = (name: string) => ({ name, type: 'text', domainBaseType: null });
    const table = {
      schema: 'public',
      name: 'customers',
      kind: 'table',
      primaryKey: ['id'],
      columns: [col('name'), col('country'), col('city')],
      foreignKeys: [],
    };
    const schema = { tables: [table] } as unknown as Schema;
    const hints = async () => [
      { column: 'country', values: ['India', 'Peru', 'Georgia'], source: 'sample' as const, sampledRows: 9 },
      { column: 'city', values: ['Georgia', 'Lima'], source: 'sample' as const, sampledRows: 9 },
    ];
    expect((await ruleSqlWithFilter('how many customers are there in india?', schema, hints))?.sql).toBe(
      "SELECT count(*) AS count FROM public.customers WHERE country = 'India'",
    );
    expect((await ruleSqlWithFilter('list customers from Lima', schema, hints))?.sql).toBe(
      "SELECT * FROM public.customers WHERE city = 'Lima'",
    );
    // in two columns: ambiguous; in none: unknown; a relative date is no value
    expect(await ruleSqlWithFilter('how many customers from Georgia', schema, hints)).toBeNull();
    expect(await ruleSqlWithFilter('how many customers from Narnia', schema, hints)).toBeNull();
    expect(await ruleSqlWithFilter('how many customers from last month', schema, hints)).toBeNull();
  });

  it('word similarity is the Dice coefficient of stemmed content words', () => {
    expect(wordSimilarity('which customers are from India?', 'customers from China')).toBe(0.5);
    expect(wordSimilarity('orders per country', 'how many orders per country')).toBe(1);
    expect(wordSimilarity('the', 'products')).toBe(0);
  });

  it('rules resolve table and column names only when certain', () => {
    const shop = {
      tables: [
        {
          schema: 'public',
          name: 'products',
          kind: 'table',
          primaryKey: ['id'],
          columns: [
            { name: 'name', type: 'text', domainBaseType: null },
            { name: 'price', type: 'numeric(10,2)', domainBaseType: null },
          ],
        },
        { schema: 'public', name: 'order_items', kind: 'table', primaryKey: [], columns: [] },
      ],
    } as unknown as Schema;
    expect(ruleSql('How many products are there?', shop)?.sql).toBe(
      'SELECT count(*) AS count FROM public.products',
    );
    expect(ruleSql('how many order items', shop)?.rule).toBe('count');
    expect(ruleSql('top 5 products by price', shop)?.sql).toBe(
      'SELECT * FROM public.products WHERE price IS NOT NULL ORDER BY price DESC, id LIMIT 5',
    );
    expect(ruleSql('top 5 products by name', shop)).toBeNull(); // not numeric
    expect(ruleSql('how many products are there per category', shop)).toBeNull(); // no such column
    const withCategory = {
      tables: [
        {
          ...shop.tables[0]!,
          columns: [
            ...shop.tables[0]!.columns,
            { name: 'category_name', type: 'text', domainBaseType: null },
          ],
        },
      ],
    } as unknown as Schema;
    expect(ruleSql('how many products are there per category', withCategory)?.sql).toBe(
      'SELECT category_name, count(*) AS count FROM public.products GROUP BY category_name ORDER BY count DESC, category_name',
    );
    expect(ruleSql('how many products did we sell last month?', shop)).toBeNull();
    expect(ruleSql('how many widgets are there', shop)).toBeNull();
  });
});

describe.each(ENGINES)('answers without the model (%s)', (engine) => {
  let db: TestDatabase;
  let closedUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase(engine, 'i19_fallback');
    await db.exec(SETUP);
    // A port where no model server listens any more: connection refused.
    const server = await startScriptedOllama({ chat: () => 'unused' });
    closedUrl = server.url;
    await server.close();
  });
  afterAll(async () => {
    await db?.dispose();
  });

  function assistant(examples = source()): Assistant {
    return new Assistant({
      chat: createOllamaChatModel({ host: closedUrl, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
      db: db.connector,
      loadSchema: () => db.connector.introspect(),
      examples,
    });
  }

  it('reuses a saved example for another country, with the stored spelling', async () => {
    const { steps, outcome } = await drain(
      assistant().ask({ user: 'alice', message: 'which customers are from china?' }),
    );
    expect(outcome.path).toBe('example');
    expect(outcome.exampleId).toBe(EXAMPLES[0]!.id);
    expect(outcome.sql).toBe("SELECT name FROM customers WHERE country = 'China' ORDER BY name");
    expect(outcome.result?.rows).toEqual([['Chen']]);
    expect(steps.find((s) => s.type === 'fallback')).toMatchObject({ path: 'example' });
    expect(outcome.answer).toContain('reused example [11111111]');
  });

  it('reuses an example for another region and year', async () => {
    const { outcome } = await drain(
      assistant().ask({ user: 'alice', message: 'Total sales in Asia in 2024' }),
    );
    expect(outcome.path).toBe('example');
    expect(outcome.sql).toBe(
      "SELECT sum(s.amount) AS total FROM sales s WHERE s.region = 'Asia' AND s.year = 2024",
    );
    expect(outcome.result?.rows).toEqual([['4001']]);
  });

  it('does not reuse an example whose changed value is not compared with a known column', async () => {
    const examples: ExampleSource = {
      list: async () => [
        example(
          'dora',
          '33333333-0000-4000-8000-000000000001',
          'customers called Asha',
          "SELECT name FROM customers WHERE lower(name) = lower('Asha')",
        ),
      ],
    };
    const same = await drain(
      assistant(examples as never).ask({ user: 'dora', message: 'customers called asha' }),
    );
    expect(same.outcome.result?.rows).toEqual([['Asha']]);
    const error = await drain(
      assistant(examples as never).ask({ user: 'dora', message: 'customers called Chen' }),
    ).catch((e) => e);
    expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
  });

  it('does not substitute a value the database does not confirm', async () => {
    const error = await drain(
      assistant().ask({ user: 'alice', message: 'which customers are from Narnia?' }),
    ).catch((e) => e);
    expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
    expect(error.details.hint).toMatch(/ollama serve/);
  });

  it("never uses another user's examples", async () => {
    const examples = source();
    const error = await drain(
      assistant(examples).ask({ user: 'alice', message: 'names of customers living in China' }),
    ).catch((e) => e);
    expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
    expect(examples.scopes.every((s) => s.user === 'alice')).toBe(true);
    const { outcome } = await drain(
      assistant().ask({ user: 'bob', message: 'names of customers living in China' }),
    );
    expect(outcome.exampleId).toBe(EXAMPLES[2]!.id);
    expect(outcome.result?.rows).toEqual([['Chen']]);
  });

  it('answers "how many … are there" and "top 5 … by …" by rules', async () => {
    const count = await drain(assistant().ask({ user: 'carol', message: 'How many customers are there?' }));
    expect(count.outcome.path).toBe('rules');
    expect(count.outcome.result?.rows).toEqual([['4']]);
    const top = await drain(assistant().ask({ user: 'carol', message: 'top 5 products by price' }));
    expect(top.outcome.path).toBe('rules');
    expect(top.outcome.result?.rows.map((r) => r[1])).toEqual(['d', 'b', 'f', 'c', 'g']);
  });

  it('a rule with a filter the sampled values confirm returns the right rows', async () => {
    const { outcome } = await drain(assistant().ask({ user: 'carol', message: 'list customers from india' }));
    expect(outcome.path).toBe('rules');
    expect(outcome.sql).toBe("SELECT * FROM public.customers WHERE country = 'India'");
    expect(outcome.result?.rows.map((r) => r[1])).toEqual(['Asha', 'Dev']);
  });

  it('a complex question fails with the model-needed hint (exit 5)', async () => {
    const error = await drain(
      assistant().ask({
        user: 'carol',
        message: 'which country has the customers with the highest average order value?',
      }),
    ).catch((e) => e);
    expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
    expect(error.exitCode).toBe(5);
    expect(error.message).toMatch(/needs the model/);
  });

  it('--no-model never calls a running model', async () => {
    const server = await startScriptedOllama({ chat: () => '```sql\nSELECT 1\n```' });
    try {
      const a = new Assistant({
        chat: createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        db: db.connector,
        loadSchema: () => db.connector.introspect(),
        examples: source(),
      });
      const { outcome } = await drain(
        a.ask({ user: 'alice', message: 'which customers are from United States', noModel: true }),
      );
      expect(outcome.result?.rows).toEqual([['Bob']]);
      expect(server.requests).toHaveLength(0);
    } finally {
      await server.close();
    }
  });
});

describe.each(ENGINES)('few-shot: confirmed examples in the SQL prompt (%s)', (engine) => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase(engine, 'i19_fewshot');
    await db.exec(SETUP);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  /** The SQL prompt (system + user text) of every SQL request the scripted server received. */
  function sqlPrompts(server: Awaited<ReturnType<typeof startScriptedOllama>>): string[] {
    return server
      .chatRequests()
      .filter((r) => r.messages[0]?.content.startsWith(SQL_PROMPT_MARKER))
      .map((r) => r.messages.map((m) => m.content).join('\n'));
  }

  async function ask(examples: ExampleSource, user: string, message: string, team?: string) {
    const server = await startScriptedOllama({
      chat: () => "```sql\nSELECT name FROM customers WHERE country = 'China'\n```",
    });
    try {
      const a = new Assistant({
        chat: createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        db: db.connector,
        loadSchema: () => db.connector.introspect(),
        examples,
      });
      const { outcome } = await drain(a.ask({ user, message, ...(team ? { team } : {}) }));
      return { outcome, prompts: sqlPrompts(server) };
    } finally {
      await server.close();
    }
  }

  it('a relevant example of the user appears, marked as the user’s confirmed example', async () => {
    const { outcome, prompts } = await ask(source(), 'alice', 'which customers are from China?');
    expect(outcome.path ?? 'model').toBe('model');
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).toContain('<examples>');
    expect(prompts[0]).toContain(`Example [11111111], ${USER_EXAMPLE_LABEL}:`);
    expect(prompts[0]).toContain("SELECT name FROM customers WHERE country = 'India' ORDER BY name");
    // the sales example shares no content word with the question: not shown
    expect(prompts[0]).not.toContain('total sales in Europe');
  });

  it('an irrelevant example does not appear (no block at all)', async () => {
    const { prompts } = await ask(source(), 'alice', 'how many products cost more than 20?');
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).not.toContain('<examples>');
    expect(prompts[0]).not.toContain('customers are from India');
  });

  it('a similar example on tables the linker did not choose does not appear', async () => {
    const examples: ExampleSource = {
      list: async () => [
        example(
          'erin',
          '44444444-0000-4000-8000-000000000001',
          'which customers are from China?',
          "SELECT region FROM sales WHERE region = 'Asia'",
        ),
      ],
    };
    const server = await startScriptedOllama({ chat: () => '```sql\nSELECT 1\n```' });
    try {
      const a = new Assistant({
        chat: createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        db: db.connector,
        loadSchema: () => db.connector.introspect(),
        // a planner that links only the customers table for this question
        planContext: async () => ({
          schemaText: 'customers(id, name, country)',
          tables: ['public.customers'],
        }),
        examples,
      });
      await drain(a.ask({ user: 'erin', message: 'which customers are from China?' }));
      expect(sqlPrompts(server)[0]).not.toContain('<examples>');
    } finally {
      await server.close();
    }
  });

  it("another user's example for the exact same question never appears", async () => {
    // bob saved an example for exactly this question; alice has one of her own on another subject
    const scopes: MemoryScope[] = [];
    const hostile: ExampleSource = {
      list: async (scope) => {
        scopes.push(scope);
        return EXAMPLES.filter((m) => m.scope.user === scope.user);
      },
    };
    const { prompts } = await ask(hostile, 'alice', 'names of customers living in India', 'shop');
    expect(prompts).toHaveLength(1);
    expect(prompts[0]).not.toContain('22222222');
    expect(prompts[0]).not.toContain("SELECT name FROM customers WHERE country = 'India'\n");
    expect(scopes).toEqual([{ user: 'alice' }, { team: 'shop' }]);
    // bob himself gets it
    const own = await ask(source(), 'bob', 'names of customers living in India');
    expect(own.prompts[0]).toContain(`Example [22222222], ${USER_EXAMPLE_LABEL}:`);
  });
});

describe('fallback on a model timeout (first-token deadline)', () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase('pglite', 'i19_timeout');
    await db.exec(SETUP);
  });
  afterAll(async () => {
    await db?.dispose();
  });

  async function withSlowModel<T>(
    delayMs: number,
    timeoutMs: number,
    run: (a: Assistant, server: Awaited<ReturnType<typeof startScriptedOllama>>) => Promise<T>,
  ): Promise<T> {
    const server = await startScriptedOllama({
      chat: () => ({ text: '```sql\nSELECT count(*) AS n FROM products\n```', delayMs }),
    });
    try {
      const chat = withFirstTokenTimeout(
        createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
        timeoutMs,
      );
      return await run(
        new Assistant({
          chat,
          db: db.connector,
          loadSchema: () => db.connector.introspect(),
          examples: source(),
        }),
        server,
      );
    } finally {
      await server.close();
    }
  }

  it('a model that does not answer in time: the rule answers, and the steps say why', async () => {
    await withSlowModel(5_000, 300, async (a) => {
      const { steps, outcome } = await drain(
        a.ask({ user: 'carol', message: 'How many customers are there?' }),
      );
      expect(outcome.path).toBe('rules');
      expect(outcome.result?.rows).toEqual([['4']]);
      expect(steps.find((s) => s.type === 'fallback')).toMatchObject({
        why: expect.stringMatching(/model_timeout/),
      });
    });
  });

  it('a complex question on a timed-out model exits 5 with model_timeout', async () => {
    await withSlowModel(5_000, 300, async (a) => {
      const error = await drain(
        a.ask({ user: 'carol', message: 'which product sold best to customers in India last year?' }),
      ).catch((e) => e);
      expect(isSqlrecallError(error, 'model_timeout')).toBe(true);
      expect(error.exitCode).toBe(5);
      expect(error.message).toMatch(/needs the model/);
    });
  });

  it('a model that answers within the deadline is used', async () => {
    await withSlowModel(50, 5_000, async (a) => {
      const { outcome } = await drain(
        a.ask({ user: 'carol', message: 'How many customers are there?', skipAnswer: true }),
      );
      expect(outcome.path ?? 'model').toBe('model');
      expect(outcome.sql).toBe('SELECT count(*) AS n FROM products');
    });
  });
});

describe('standing preferences on answers without the model', () => {
  let db: TestDatabase;
  let closedUrl: string;
  beforeAll(async () => {
    db = await createTestDatabase('pglite', 'i19_preferences');
    await db.exec(SETUP);
    const server = await startScriptedOllama({ chat: () => 'unused' });
    closedUrl = server.url;
    await server.close();
  });
  afterAll(async () => {
    await db?.dispose();
  });

  const INDIA: Memory = {
    ...example('alice', '55555555-0000-4000-8000-000000000001', 'always show customers from India', ''),
    kind: 'preference',
    sql: "customers.country = 'India'",
    tables: ['public.customers'],
  };
  function preferences(list: Memory[]): PreferenceSource {
    return {
      list: async (scope, options) =>
        list.filter(
          (m) =>
            m.scope.user === scope.user &&
            (!options.tablesAny ||
              m.tables.length === 0 ||
              m.tables.some((t) => options.tablesAny!.includes(t))),
        ),
    };
  }
  function assistant(prefs: PreferenceSource): Assistant {
    return new Assistant({
      chat: createOllamaChatModel({ host: closedUrl, model: 'qwen2.5-coder:7b', numCtx: 4096 }),
      db: db.connector,
      loadSchema: () => db.connector.introspect(),
      examples: source(),
      preferences: prefs,
    });
  }

  it('refuses an example or rule answer on a table a preference filters, and names the preference by id', async () => {
    for (const message of ['which customers are from china?', 'How many customers are there?']) {
      const error = await drain(assistant(preferences([INDIA])).ask({ user: 'alice', message })).catch(
        (e) => e,
      );
      expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
      expect(error.exitCode).toBe(5);
      // Named by id only: an error message reaches logs and other front ends, a memory's text never.
      expect(error.message).toContain('standing preference [55555555] applies');
      expect(error.message).not.toContain(INDIA.text);
      expect(error.details.preferences).toEqual([{ id: INDIA.id }]);
      expect(error.details.hint).toMatch(/ollama serve/);
    }
  });

  it('answers when the preference is already applied by the SQL, or covers other tables', async () => {
    const a = assistant(preferences([INDIA]));
    const india = await drain(a.ask({ user: 'alice', message: 'which customers are from India?' }));
    expect(india.outcome.path).toBe('example');
    expect(india.outcome.result?.rows).toEqual([['Asha'], ['Dev']]);
    const sales = await drain(a.ask({ user: 'alice', message: 'Total sales in Asia in 2024' }));
    expect(sales.outcome.path).toBe('example');
    // another user's preference does not apply to carol
    const count = await drain(a.ask({ user: 'carol', message: 'How many customers are there?' }));
    expect(count.outcome.result?.rows).toEqual([['4']]);
  });

  it('a preference without SQL that names no table applies to every answer; --without skips it', async () => {
    const loose: Memory = {
      ...INDIA,
      id: '55555555-0000-4000-8000-000000000002',
      text: 'only count active records',
      sql: null,
      tables: [],
    };
    const a = assistant(preferences([loose]));
    const error = await drain(a.ask({ user: 'alice', message: 'top 5 products by price' })).catch((e) => e);
    expect(isSqlrecallError(error, 'model_unreachable')).toBe(true);
    expect(error.message).toContain('[55555555]');
    expect(error.message).not.toContain('only count active records');
    const skipped = await drain(
      a.ask({
        user: 'alice',
        message: 'top 5 products by price',
        without: ['55555555-0000-4000-8000-000000000002'],
      }),
    );
    expect(skipped.outcome.path).toBe('rules');
  });
});
