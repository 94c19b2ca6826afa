import { describe, expect, it } from 'vitest';
import { dayOf, expiryOf, isExpired, parseUntil } from './expiry.js';

// Tuesday 1 December 2026, 10:00 UTC
const NOW = new Date('2026-12-01T10:00:00Z');

describe('expiry', () => {
  it('reads the end of the named day (UTC)', () => {
    expect(dayOf('2026-12-31', NOW)?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(dayOf('today', NOW)?.toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(dayOf('friday', NOW)?.toISOString()).toBe('2026-12-05T00:00:00.000Z');
    expect(dayOf('tuesday', NOW)?.toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(dayOf('this week', NOW)?.toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(dayOf('3 days', NOW)?.toISOString()).toBe('2026-12-04T00:00:00.000Z');
    expect(dayOf('2026-02-30', NOW)).toBeNull();
    expect(dayOf('someday', NOW)).toBeNull();
  });

  it('finds the expiry a message states', () => {
    expect(expiryOf('only delivered orders for this week', NOW)).toEqual({
      expiresAt: '2026-12-07T00:00:00.000Z',
      phrase: 'for this week',
    });
    expect(expiryOf('Only show customers from Peru until Friday', NOW)?.expiresAt).toBe(
      '2026-12-05T00:00:00.000Z',
    );
    expect(expiryOf('Always show customers from India', NOW)).toBeNull();
  });

  it('--until rejects what names no day; expired is at or after the instant', () => {
    expect(parseUntil('2026-12-31', NOW)).toBe('2027-01-01T00:00:00.000Z');
    expect(() => parseUntil('whenever', NOW)).toThrow(/--until takes a date/);
    expect(isExpired({ expiresAt: '2026-12-01T09:00:00Z' }, NOW)).toBe(true);
    expect(isExpired({ expiresAt: null }, NOW)).toBe(false);
  });
});
