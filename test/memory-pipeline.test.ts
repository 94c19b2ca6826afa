/**
 * The memory logic through the question pipeline, in process: real memory store (PGlite, in
 * memory), real shop database (PGlite), real Ollama client against the scripted server. What the
 * SQL model sees is read from its prompts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PREFERENCE_REMINDER_MARKER } from '../src/agent/memory-sql.js';
import { MemoryService } from '../src/memory/service.js';
import { type MemoryPipeline, startMemoryPipeline } from './support/memory-pipeline.js';

const INDIA_SQL = "```sql\nSELECT name FROM customers WHERE country = 'India' ORDER BY name\n```";
const COUNT_SQL = '```sql\nSELECT count(*) AS n FROM orders\n```';

describe('memory in the question pipeline', () => {
  let p: MemoryPipeline;
  beforeAll(async () => {
    p = await startMemoryPipeline();
  });
  afterAll(async () => {
    await p?.close();
  });

  const lastPrompt = () => p.sqlPrompts[p.sqlPrompts.length - 1] ?? '';
  const active = async (user: string) => (await p.store.list({ user })).map((m) => m.text);

  it('an instruction is stored and answered "Remembered", without any SQL', async () => {
    const before = p.sqlPrompts.length;
    const { steps, outcome } = await p.ask('asha', 'Always show me customers from India');
    expect(p.sqlPrompts.length).toBe(before);
    expect(steps.some((s) => s.type === 'sql')).toBe(false);
    expect(outcome).toMatchObject({
      kind: 'instruction',
      sql: null,
      remembered: [{ action: 'ADD', kind: 'preference' }],
    });
    expect(outcome.answer).toMatch(/^Remembered \[[0-9a-f]{8}\]: Always show me customers from India/);
    expect(await p.store.list({ user: 'asha' })).toMatchObject([
      { kind: 'preference', sql: "customers.country = 'India'", tables: ['public.customers'] },
    ]);
  });

  it('prompts never contain another user’s memories (12 users, hostile ids, shuffled order)', async () => {
    const users = [
      'u1',
      'u2',
      'u3',
      'u4',
      'u5',
      'u6',
      'u7',
      "' OR '1'='1",
      '*',
      '%',
      ' spaced ',
      'x'.repeat(300),
    ];
    const place = (i: number) => `Zland${String.fromCharCode(65 + i)}q`;
    const order = [...users.keys()].sort((a, b) => ((a * 7919) % 13) - ((b * 7919) % 13));
    for (const i of order) await p.ask(users[i]!, `Always show me customers from ${place(i)}`);
    for (const i of order) {
      await p.ask(users[i]!, 'which customers are there?');
      const prompt = lastPrompt();
      expect(prompt).toContain(`customers.country = '${place(i)}'`);
      for (const j of users.keys()) if (j !== i) expect(prompt).not.toContain(place(j));
    }
    // `*` and `%` are ordinary ids: each sees exactly its own memory.
    expect(await active('*')).toEqual([`Always show me customers from ${place(8)}`]);
  });

  it('20 concurrent identical instructions for one user produce one memory', async () => {
    const runs = await Promise.all(
      Array.from({ length: 20 }, () => p.ask('conc', 'Always show me customers from India')),
    );
    expect(await active('conc')).toEqual(['Always show me customers from India']);
    const actions = runs.map((r) => r.outcome.remembered?.[0]?.action);
    expect(actions.filter((a) => a === 'ADD')).toHaveLength(1);
    expect(actions.filter((a) => a === 'NOOP')).toHaveLength(19);
  });

  it('the seed scenario in process: both memories reach the prompt and are listed as applied', async () => {
    await p.ask('priya', 'Always show me customers from India');
    await p.ask('priya', 'High value order means total amount over 10000');
    p.sqlReply = (prompt) =>
      prompt.includes("customers.country = 'India'") && prompt.includes('orders.total_amount > 10000')
        ? "```sql\nSELECT DISTINCT c.name FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.country = 'India' AND o.total_amount > 10000\n```"
        : 'SELECT broken';
    const { outcome } = await p.ask('priya', 'Show me customers who have a high order value');
    expect(outcome.result?.rowCount).toBe(2);
    expect(outcome.appliedMemories.map((m) => m.kind).sort()).toEqual(['preference', 'term']);
    expect(lastPrompt()).toMatch(/<memories>[\s\S]*preference, standing filter[\s\S]*<\/memories>/);
    p.sqlReply = () => COUNT_SQL;
    await p.ask('rahul', 'Show me customers who have a high order value');
    expect(lastPrompt()).not.toContain('India');
    expect(lastPrompt()).not.toContain('10000');
    expect(lastPrompt()).not.toMatch(/^<memories>$/m);
  });

  it('a missing standing predicate is caught before execution and retried once with a reminder', async () => {
    await p.ask('retry', 'Always show me customers from India');
    let calls = 0;
    p.sqlReply = () => {
      calls += 1;
      return calls === 1 ? '```sql\nSELECT name FROM customers ORDER BY name\n```' : INDIA_SQL;
    };
    const { steps, outcome } = await p.ask('retry', 'list the customers');
    expect(calls).toBe(2);
    expect(outcome.attempts).toEqual([
      {
        sql: 'SELECT name FROM customers ORDER BY name',
        error: expect.stringMatching(/does not apply: Always show me customers from India/),
      },
      { sql: "SELECT name FROM customers WHERE country = 'India' ORDER BY name" },
    ]);
    expect(steps.filter((s) => s.type === 'rows')).toHaveLength(1); // the first statement never ran
    expect(lastPrompt()).toContain(PREFERENCE_REMINDER_MARKER);
    expect(outcome.result?.rows).toEqual([['Asha'], ['Dev']]);
    expect(outcome.appliedMemories.map((m) => m.text)).toEqual(['Always show me customers from India']);
    // A query that does not read customers does not need the customer filter.
    p.sqlReply = () => COUNT_SQL;
    calls = 0;
    const orders = await p.ask('retry', 'how many orders?');
    expect(orders.outcome.attempts).toHaveLength(1);
    expect(orders.outcome.appliedMemories).toEqual([]);
  });

  it('contradiction through the chat path: one active memory, history of both', async () => {
    await p.ask('dora', 'only delivered orders');
    p.reconcileReply = () => JSON.stringify({ action: 'SUPERSEDE', id: 1 });
    const { outcome } = await p.ask('dora', 'show all statuses again');
    expect(outcome.remembered).toMatchObject([{ action: 'SUPERSEDE', text: 'show all statuses again' }]);
    expect(await active('dora')).toEqual(['show all statuses again']);
    const all = await p.store.list({ user: 'dora' }, { statuses: ['active', 'superseded', 'deleted'] });
    expect(all.map((m) => `${m.status}:${m.text}`).sort()).toEqual([
      'active:show all statuses again',
      'superseded:only delivered orders',
    ]);
    const history = await p.store.history({ user: 'dora' });
    expect(history.map((h) => h.action)).toEqual(expect.arrayContaining(['ADD', 'SUPERSEDE']));
    await p.ask('dora', 'how many orders?');
    expect(lastPrompt()).not.toContain("status = 'delivered'");
  });

  it('deletion removes a memory from the very next prompt; restore brings it back', async () => {
    await p.ask('eve', 'Always show me customers from Chile');
    await p.ask('eve', 'how many orders?');
    expect(lastPrompt()).toContain("customers.country = 'Chile'");
    // Issue 12: a plain-language forget asks first; it deletes once confirmed (ask --yes).
    const asked = await p.ask('eve', 'forget the Chile filter');
    expect(asked.outcome.remembered).toEqual([]);
    expect(asked.outcome.answer).toMatch(
      /^Forget \[[0-9a-f]{8}\] preference: Always show me customers from Chile\?/,
    );
    await p.ask('eve', 'how many orders?');
    expect(lastPrompt()).toContain("customers.country = 'Chile'");
    const { outcome } = await p.ask('eve', 'forget the Chile filter', { confirmDeletes: true });
    expect(outcome.remembered).toMatchObject([{ action: 'DELETE' }]);
    const id = outcome.remembered![0]!.id!;
    await p.ask('eve', 'how many orders?');
    expect(lastPrompt()).not.toContain('Chile');
    await p.store.write({ user: 'eve' }, [{ op: 'restore', id }]);
    await p.ask('eve', 'how many orders?');
    expect(lastPrompt()).toContain("customers.country = 'Chile'");
  });

  it('--without skips one memory for one question only', async () => {
    await p.ask('finn', 'Always show me customers from India');
    await p.ask('finn', 'Big order means total amount over 500');
    const india = (await p.store.list({ user: 'finn' })).find((m) => m.kind === 'preference')!;
    p.sqlReply = () => '```sql\nSELECT count(*) FROM orders WHERE total_amount > 500\n```';
    const { outcome } = await p.ask('finn', 'how many big orders?', { without: [india.id.slice(0, 8)] });
    expect(lastPrompt()).not.toContain('India');
    expect(lastPrompt()).toContain('orders.total_amount > 500');
    expect(outcome.appliedMemories.map((m) => m.kind)).toEqual(['term']);
    await p.ask('finn', 'how many big orders?');
    expect(lastPrompt()).toContain('India');
    p.sqlReply = () => COUNT_SQL;
  });

  it('memory off: nothing recalled or learned; on again: back', async () => {
    await p.ask('gus', 'Always show me customers from India');
    await p.store.setEnabled({ user: 'gus' }, false);
    const off = await p.ask('gus', 'Always show me customers from Peru');
    expect(off.outcome.answer).toMatch(/Memory is off for gus/);
    await p.ask('gus', 'how many orders?');
    expect(lastPrompt()).not.toMatch(/^<memories>$/m);
    expect(await active('gus')).toEqual(['Always show me customers from India']);
    await p.store.setEnabled({ user: 'gus' }, true);
    await p.ask('gus', 'how many orders?');
    expect(lastPrompt()).toContain('India');
  });

  it('a message that instructs and asks: stored, then answered with it applied', async () => {
    p.sqlReply = (prompt) =>
      prompt.includes('From now on only delivered orders')
        ? "```sql\nSELECT count(*) AS n FROM orders WHERE status = 'delivered'\n```"
        : 'SELECT broken';
    const { steps, outcome } = await p.ask(
      'hana',
      'From now on only delivered orders — how many orders are there?',
    );
    expect(outcome.kind).toBe('both');
    expect(lastPrompt()).toContain('Question: how many orders are there?');
    expect(outcome.result?.rows).toEqual([['3']]);
    // The write happened after the answer, and the new memory is listed as applied.
    const order = steps.map((s) => s.type);
    expect(order.indexOf('remembered')).toBeGreaterThan(order.indexOf('answer'));
    expect(await active('hana')).toEqual(['From now on only delivered orders']);
    expect(outcome.appliedMemories).toMatchObject([
      { kind: 'preference', text: 'From now on only delivered orders' },
    ]);
    p.sqlReply = () => COUNT_SQL;
  });

  it('a follow-up sees the previous question and SQL of its conversation only', async () => {
    p.sqlReply = () => INDIA_SQL;
    await p.ask('ivy', 'which customers are from India?', { conversationId: 'c-1' });
    p.sqlReply = () => COUNT_SQL;
    await p.ask('ivy', 'how many of those were wholesale?', { conversationId: 'c-1' });
    expect(lastPrompt()).toMatch(/<conversation>[\s\S]*Previous question: which customers are from India\?/);
    expect(lastPrompt()).toContain("Previous SQL: SELECT name FROM customers WHERE country = 'India'");
    await p.ask('ivy', 'how many of those were wholesale?', { conversationId: 'c-2' });
    expect(lastPrompt()).not.toContain('<conversation>');
    await p.ask('other', 'how many of those were wholesale?', { conversationId: 'c-1' });
    expect(lastPrompt()).not.toContain('<conversation>'); // same id, other user: nothing
  });

  it('team memories apply to the team’s users; the user’s own wins on the same column', async () => {
    await p.service.add(
      { team: 'sales' },
      { kind: 'preference', text: 'only customers from China', sql: "customers.country = 'China'" },
    );
    await p.service.add(
      { team: 'sales' },
      { kind: 'term', text: 'Huge order means total amount over 99999', sql: 'orders.total_amount > 99999' },
    );
    await p.ask('jo', 'Always show me customers from India');
    await p.ask('jo', 'how many huge orders?', { team: 'sales' });
    expect(lastPrompt()).toContain("customers.country = 'India'");
    expect(lastPrompt()).not.toContain('China');
    expect(lastPrompt()).toContain('from the team');
    await p.ask('kim', 'how many huge orders?', { team: 'sales' });
    expect(lastPrompt()).toContain("customers.country = 'China'");
    await p.ask('kim', 'how many huge orders?');
    expect(lastPrompt()).not.toContain('China'); // not in the team for this question
  });

  it('a pending write left by a crash is applied by the next start', async () => {
    await p.store.enqueuePending(
      { user: 'lou' },
      { type: 'learn', message: 'Always show me customers from Kenya', messageId: 'm-1' },
    );
    expect(await active('lou')).toEqual([]);
    const result = await p.service.recoverPending({ schema: (await p.assistant.schema()).schema });
    expect(result).toEqual({ applied: 1, failed: 0 });
    expect(await active('lou')).toEqual(['Always show me customers from Kenya']);
    expect(await p.store.listPending({ user: 'lou' })).toEqual([]);
    expect(MemoryService.messageId()).toMatch(/^[0-9a-f-]{36}$/);
  });
});
