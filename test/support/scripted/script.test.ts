import { describe, expect, it } from 'vitest';
import { parseScript, scriptHandler, scriptOptions } from './script.js';
import type { ScriptedChatRequest } from './types.js';

const request = (lastUserMessage: string, purpose?: string, system = ''): ScriptedChatRequest => ({
  endpoint: 'chat',
  model: 'qwen2.5-coder:7b',
  messages: [
    { role: 'system', content: system },
    { role: 'user', content: lastUserMessage },
  ],
  lastUserMessage,
  stream: true,
  ...(purpose ? { purpose } : {}),
});

describe('script files', () => {
  const script = parseScript({
    rules: [
      { purpose: '^sql$', match: 'customers', reply: 'SELECT count(*) FROM customers' },
      { match: 'broken', replies: ['SELECT nope', { text: 'SELECT 1' }] },
      { prompt: 'return json', reply: '{"facts":[]}' },
      { match: '^answer$', reply: 'matched by purpose' },
    ],
    default: 'fallback',
  });
  const handler = scriptHandler(script);

  it('tries rules in order; all conditions of a rule must hold; regexes ignore case', () => {
    expect(handler(request('How many CUSTOMERS?', 'sql'))).toBe('SELECT count(*) FROM customers');
    expect(handler(request('How many customers?', 'answer'))).toBe('matched by purpose');
    expect(handler(request('anything', undefined, 'Return JSON only'))).toBe('{"facts":[]}');
    expect(handler(request('nothing matches'))).toBe('fallback');
  });

  it('uses replies one per request and repeats the last', () => {
    const h = scriptHandler(script);
    expect(h(request('broken query'))).toBe('SELECT nope');
    expect(h(request('broken query'))).toEqual({ text: 'SELECT 1' });
    expect(h(request('broken query'))).toEqual({ text: 'SELECT 1' });
  });

  it('answers "no reply programmed" without a default', () => {
    expect(scriptHandler(parseScript({ rules: [] }))(request('x'))).toEqual({
      status: 500,
      error: 'scripted server: no reply programmed',
    });
  });

  it('rejects invalid scripts with the path of the problem', () => {
    expect(() => parseScript({ rules: [{ match: '(', reply: 'x' }] })).toThrow(
      /rules\.0\.match.*regular expression/,
    );
    expect(() => parseScript({ rules: [{ match: 'a' }] })).toThrow(/exactly one of "reply" or "replies"/);
    expect(() => parseScript({ rules: [{ match: 'a', reply: 'x', replies: ['y'] }] })).toThrow(/exactly one/);
    expect(() => parseScript({ rules: [{ reply: { txt: 'typo' } }] })).toThrow(/rules\.0\.reply/);
    expect(() => parseScript({ rulez: [] })).toThrow(/invalid script/);
    expect(() => parseScript([])).toThrow(/invalid script/);
  });

  it('turns script settings into server options', () => {
    const options = scriptOptions(
      parseScript({
        models: ['m:1b', { name: 'e', kind: 'embedding' }],
        embeddingDimensions: 768,
        version: '1.0.0',
      }),
    );
    expect(options).toMatchObject({
      models: ['m:1b', { name: 'e', kind: 'embedding' }],
      embeddingDimensions: 768,
      version: '1.0.0',
    });
    expect(typeof options.chat).toBe('function');
  });
});
