import { describe, expect, it } from 'vitest';
import type { MemoryScope } from '../core/memory.js';
import { withKnownUserSetting } from './assistant.js';
import { type ExampleSource, nearestExamples } from './example-similarity.js';

/** A source with one example per scope, recording every `isEnabled` question. */
function recordingSource(enabled: (scope: MemoryScope) => boolean) {
  const asked: MemoryScope[] = [];
  const source: ExampleSource = {
    list: async (scope) => [
      {
        id: scope.user ? 'u-example' : 't-example',
        scope,
        kind: 'example',
        text: 'revenue per customer',
        sql: 'SELECT 1',
        tables: [],
        columns: [],
        status: 'active',
        pinned: false,
        createdAt: '2026-01-01T00:00:00.000Z',
        updatedAt: '2026-01-01T00:00:00.000Z',
      } as never,
    ],
    isEnabled: async (scope) => {
      asked.push(scope);
      return enabled(scope);
    },
  };
  return { source, asked };
}

describe("withKnownUserSetting (the memory turn already read the user's setting)", () => {
  it("answers the user's own scope without asking the store; the team's is still asked", async () => {
    const { source, asked } = recordingSource(() => true);
    const known = withKnownUserSetting(source, 'ann', true);
    const found = await nearestExamples({
      question: 'revenue per customer',
      user: 'ann',
      team: 'ops',
      source: known,
    });
    expect(found.map((c) => c.memory.id)).toEqual(['u-example', 't-example']);
    expect(asked).toEqual([{ team: 'ops' }]);
  });

  it("memory off for the user (known) keeps the user's examples out, without a store query", async () => {
    const { source, asked } = recordingSource(() => true);
    const found = await nearestExamples({
      question: 'revenue per customer',
      user: 'ann',
      source: withKnownUserSetting(source, 'ann', false),
    });
    expect(found).toEqual([]);
    expect(asked).toEqual([]);
  });

  it('unknown (no memory turn): the source itself is used', async () => {
    const { source, asked } = recordingSource((scope) => scope.user !== 'ann');
    expect(withKnownUserSetting(source, 'ann', undefined)).toBe(source);
    expect(await nearestExamples({ question: 'revenue per customer', user: 'ann', source })).toEqual([]);
    expect(asked).toEqual([{ user: 'ann' }]);
  });
});
