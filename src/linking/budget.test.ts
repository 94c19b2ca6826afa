import { describe, expect, it } from 'vitest';
import { estimateTokens } from '../core/tokens.js';
import {
  AUTO_CONTEXT_CAP_TOKENS,
  FALLBACK_CONTEXT_TOKENS,
  fitSections,
  resolveContextTokens,
  schemaBudget,
  TEMPLATE_MARGIN_TOKENS,
} from './budget.js';

describe('token budget', () => {
  it('resolves the window from num_ctx and the trained context length', () => {
    expect(resolveContextTokens(4096, 32768)).toBe(4096);
    expect(resolveContextTokens(65536, 32768)).toBe(32768);
    expect(resolveContextTokens(undefined, 32768)).toBe(AUTO_CONTEXT_CAP_TOKENS);
    expect(resolveContextTokens(undefined, 2048)).toBe(2048);
    expect(resolveContextTokens(undefined, undefined)).toBe(FALLBACK_CONTEXT_TOKENS);
  });

  it('gives the schema priority but leaves room for reservations', () => {
    const base = { contextTokens: 4096, answerReserveTokens: 1024, promptOverheadTokens: 300 };
    const available = 4096 - 1024 - 300 - TEMPLATE_MARGIN_TOKENS;
    expect(schemaBudget(base)).toEqual({ availableTokens: available, schemaTokens: available });
    expect(schemaBudget({ ...base, reservedTokens: 500 }).schemaTokens).toBe(available - 500);
    // Reservations never take more than half.
    expect(schemaBudget({ ...base, reservedTokens: 100_000 }).schemaTokens).toBe(
      available - Math.floor(available / 2),
    );
    // A window smaller than the reply: nothing, never negative.
    expect(schemaBudget({ ...base, contextTokens: 512 })).toEqual({ availableTokens: 0, schemaTokens: 0 });
  });

  it('fits sections in priority order and skips items that do not fit', () => {
    const big = 'x'.repeat(350); // 100 tokens
    const small = 'y'.repeat(35); // 10 tokens
    const fit = fitSections(125, [
      { name: 'memories', items: [big, small] },
      { name: 'conversation', items: [big, small, small] },
    ]);
    expect(fit.kept.get('memories')).toEqual([big, small]);
    expect(fit.kept.get('conversation')).toEqual([small]);
    expect(fit.dropped.get('conversation')).toBe(2);
    const used = [...fit.tokens.values()].reduce((a, b) => a + b, 0);
    expect(used).toBeLessThanOrEqual(125);
    expect(used).toBe(estimateTokens(big) + 1 + 2 * (estimateTokens(small) + 1));
    expect(fitSections(-5, [{ name: 'a', items: [small] }]).kept.get('a')).toEqual([]);
  });
});
