import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { factsReply, messageOf, shopSchema } from '../../test/support/memory-fixtures.js';
import { type ScriptedOllama, startScriptedOllama } from '../../test/support/scripted/server.js';
import { createOllamaChatModel } from '../models/ollama/chat-model.js';
import { extractFacts } from './extract.js';
import { JSON_RETRY_MESSAGE } from './json-call.js';
import { EXTRACT_PROMPT_MARKER } from './prompts.js';

describe('extractFacts', () => {
  let server: ScriptedOllama;
  const schema = shopSchema();
  const logged: string[] = [];
  const chat = () => createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' });
  const extract = (message: string, maxFacts?: number) =>
    extractFacts(message, { chat: chat(), schema, maxFacts, log: (m) => logged.push(m) });

  beforeAll(async () => {
    server = await startScriptedOllama();
  });
  afterAll(async () => {
    await server.close();
  });
  beforeEach(() => {
    server.reset();
    logged.length = 0;
  });

  it('sends only the user message, with the schema and a JSON-schema format', async () => {
    server.enqueue(
      factsReply({
        kind: 'preference',
        text: 'Always show me customers from India',
        sql: "customers.country = 'India'",
      }),
    );
    const result = await extract('Always show me customers from India');
    expect(result).toEqual({
      facts: [
        {
          kind: 'preference',
          text: 'Always show me customers from India',
          sql: "customers.country = 'India'",
          tables: ['public.customers'],
          columns: ['public.customers.country'],
        },
      ],
      problems: [],
    });
    const [request] = server.chatRequests();
    expect(request?.messages[0]?.content.startsWith(EXTRACT_PROMPT_MARKER)).toBe(true);
    expect(request?.purpose).toBe('memory-extract');
    expect(messageOf(request!.lastUserMessage)).toBe('Always show me customers from India');
    expect(request?.lastUserMessage).toContain('orders(');
    expect(request?.format).toMatchObject({ type: 'object', properties: { facts: { type: 'array' } } });
    expect(JSON.stringify(request?.format)).toContain('preference');
  });

  it('NONE is allowed', async () => {
    server.enqueue(factsReply());
    expect(await extract('nice weather')).toEqual({ facts: [], problems: [] });
  });

  it('drops SQL that names unknown columns but keeps the fact, saying why', async () => {
    server.enqueue(
      factsReply({ kind: 'term', text: 'VIP means loyalty tier gold', sql: "customers.tier = 'gold'" }),
    );
    const { facts } = await extract('VIP means loyalty tier gold');
    expect(facts).toHaveLength(1);
    expect(facts[0]).toMatchObject({ kind: 'term', text: 'VIP means loyalty tier gold', sql: null });
    expect(facts[0]?.sqlNote).toMatch(/customers\.tier does not exist/);
  });

  it('keeps at most maxFacts facts and reports the others', async () => {
    server.enqueue(
      factsReply(
        { kind: 'preference', text: 'only India' },
        { kind: 'preference', text: 'only delivered orders' },
        { kind: 'term', text: 'big means over 100' },
      ),
    );
    const result = await extract('only India, only delivered orders, and big means over 100');
    expect(result.facts.map((f) => f.text)).toEqual(['only India', 'only delivered orders']);
    expect(result.problems).toEqual([expect.stringMatching(/Only 2 facts are kept.*big means over 100/)]);
  });

  it('retries malformed JSON once with a reminder', async () => {
    server.enqueue(
      'Sure! Here are the facts: {facts: [',
      factsReply({ kind: 'term', text: 'TPV means total paid value' }),
    );
    const result = await extract('TPV means total paid value');
    expect(result.facts.map((f) => f.text)).toEqual(['TPV means total paid value']);
    const second = server.chatRequests()[1];
    expect(second?.lastUserMessage).toBe(JSON_RETRY_MESSAGE);
  });

  it('never drops a fact silently: unreadable replies and facts are reported and logged', async () => {
    server.enqueue('garbage', 'still garbage');
    const broken = await extract('Always show me customers from India');
    expect(broken.facts).toEqual([]);
    expect(broken.problems).toEqual([expect.stringMatching(/could not read what to remember.*India/)]);
    expect(logged).toContain('memory extraction reply unreadable');

    server.enqueue(
      JSON.stringify({
        facts: [
          { kind: 'wish', text: 'a pony' },
          { kind: 'preference', text: 'only India' },
        ],
      }),
    );
    const partial = await extract('only India');
    expect(partial.facts.map((f) => f.text)).toEqual(['only India']);
    expect(partial.problems).toEqual([expect.stringMatching(/could not be read.*a pony/)]);
  });

  it('guesses the columns a fact without SQL is about (for contradiction checks)', async () => {
    server.enqueue(factsReply({ kind: 'preference', text: 'show all statuses again' }));
    const { facts } = await extract('show all statuses again');
    expect(facts[0]).toMatchObject({
      sql: null,
      columns: ['public.orders.status'],
      tables: ['public.orders'],
    });
  });
});
