/**
 * Set-aside decisions when the model call fails: the preference is enforced AND listed
 * as undecided, so the answer says it was kept because the model could not decide. The model is
 * the scripted Ollama server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScriptedOllama, startScriptedOllama } from '../../test/support/scripted/server.js';
import { predicateParts, statementParts } from '../memory/sql-fragment.js';
import { createOllamaChatModel } from '../models/ollama/chat-model.js';
import type { RequiredPredicate } from './memory-sql.js';
import { decideSetAside, undecidedText } from './set-aside.js';

const SQL = "orders.status = 'delivered'";
const QUESTION = 'combien de commandes pour chaque état ?';

describe('decideSetAside when the model call fails', () => {
  let reply = '';
  let server: ScriptedOllama;
  beforeAll(async () => {
    server = await startScriptedOllama({ chat: () => reply });
  });
  afterAll(async () => {
    await server?.close();
  });

  const decide = async () => {
    const required: RequiredPredicate = {
      memory: { id: 'm1', kind: 'preference', text: 'Only show delivered orders', sql: SQL },
      tables: ['orders'],
      parts: (await predicateParts(SQL))!,
    };
    return decideSetAside({
      question: QUESTION,
      missing: [required],
      statement: await statementParts('SELECT status, count(*) FROM orders GROUP BY status'),
      chat: createOllamaChatModel({ host: server.url, model: 'qwen2.5-coder:7b' }),
    });
  };

  it('an unreadable reply enforces the preference and reports it as undecided', async () => {
    reply = 'I am not sure, it depends.';
    const result = await decide();
    expect(result.setAside).toEqual([]);
    expect(result.enforce.map((r) => r.memory.id)).toEqual(['m1']);
    expect(result.undecided).toEqual([
      expect.objectContaining({ id: 'm1', text: 'Only show delivered orders' }),
    ]);
    expect(undecidedText(result.undecided)).toMatch(
      /^Applied: Only show delivered orders — the model could not say whether your question overrides it \(.+\), so it was kept$/,
    );
  });

  it('a readable "keep it" reply enforces silently; a readable "set aside" sets it aside', async () => {
    reply = JSON.stringify({ setAside: false, reason: null });
    let result = await decide();
    expect([result.enforce.length, result.undecided, result.setAside]).toEqual([1, [], []]);
    reply = JSON.stringify({ setAside: true, reason: 'la question demande chaque état' });
    result = await decide();
    expect(result.setAside).toEqual([
      expect.objectContaining({ id: 'm1', reason: 'la question demande chaque état' }),
    ]);
    expect(result.undecided).toEqual([]);
  });
});
