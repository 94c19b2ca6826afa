import { describe, expect, it } from 'vitest';
import { dayOf, expiryOf, isExpired, parseUntil, untilDay, untilOf, userTimeZone } from './expiry.js';

// Tuesday 1 December 2026, 10:00 UTC
const NOW = new Date('2026-12-01T10:00:00Z');

describe('expiry', () => {
  it('reads the end of the named day (in UTC)', () => {
    expect(dayOf('2026-12-31', NOW, 'UTC')?.toISOString()).toBe('2027-01-01T00:00:00.000Z');
    expect(dayOf('today', NOW, 'UTC')?.toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(dayOf('friday', NOW, 'UTC')?.toISOString()).toBe('2026-12-05T00:00:00.000Z');
    expect(dayOf('tuesday', NOW, 'UTC')?.toISOString()).toBe('2026-12-02T00:00:00.000Z');
    expect(dayOf('this week', NOW, 'UTC')?.toISOString()).toBe('2026-12-07T00:00:00.000Z');
    expect(dayOf('3 days', NOW, 'UTC')?.toISOString()).toBe('2026-12-04T00:00:00.000Z');
    expect(dayOf('2026-02-30', NOW, 'UTC')).toBeNull();
    expect(dayOf('someday', NOW, 'UTC')).toBeNull();
  });

  it('finds the expiry a message states', () => {
    expect(expiryOf('only delivered orders for this week', NOW, 'UTC')).toEqual({
      expiresAt: '2026-12-07T00:00:00.000Z',
      expiresOn: '2026-12-06',
      phrase: 'for this week',
    });
    expect(expiryOf('Only show customers from Peru until Friday', NOW, 'UTC')?.expiresAt).toBe(
      '2026-12-05T00:00:00.000Z',
    );
    expect(expiryOf('Always show customers from India', NOW, 'UTC')).toBeNull();
  });

  it('--until rejects what names no day; expired is at or after the instant', () => {
    expect(parseUntil('2026-12-31', NOW, 'UTC')).toBe('2027-01-01T00:00:00.000Z');
    expect(() => parseUntil('whenever', NOW, 'UTC')).toThrow(/--until takes a date/);
    expect(isExpired({ expiresAt: '2026-12-01T09:00:00Z' }, NOW)).toBe(true);
    expect(isExpired({ expiresAt: null }, NOW)).toBe(false);
  });
});

describe('expiry in the user time zone', () => {
  // Monday 30 November 2026, 19:30 in Los Angeles (03:30 UTC on Tuesday 1 December).
  const LA_EVENING = new Date('2026-12-01T03:30:00Z');
  const LA = 'America/Los_Angeles';

  it('--until DAY lasts through the end of DAY in the zone, west of UTC in the evening', () => {
    const until = parseUntil('2026-12-01', LA_EVENING, LA);
    expect(until).toBe('2026-12-02T08:00:00.000Z'); // midnight after 1 December, Pacific time
    expect(isExpired({ expiresAt: until }, LA_EVENING)).toBe(false);
    expect(untilDay(until, LA)).toBe('2026-12-01');
    // "today" is still Monday there, though it is Tuesday in UTC.
    expect(parseUntil('today', LA_EVENING, LA)).toBe('2026-12-01T08:00:00.000Z');
    expect(untilDay(parseUntil('monday', LA_EVENING, LA), LA)).toBe('2026-11-30');
  });

  it('shows the day the user typed, not the next one', () => {
    expect(untilDay(parseUntil('2099-12-31', LA_EVENING, LA), LA)).toBe('2099-12-31');
    expect(untilDay(parseUntil('2099-12-31', LA_EVENING, 'UTC'), 'UTC')).toBe('2099-12-31');
  });

  it('east of UTC: the day ends before midnight UTC', () => {
    const tokyoMorning = new Date('2026-12-01T23:30:00Z'); // 08:30 on Wednesday 2 December in Tokyo
    const until = parseUntil('today', tokyoMorning, 'Asia/Tokyo');
    expect(until).toBe('2026-12-02T15:00:00.000Z');
    expect(untilDay(until, 'Asia/Tokyo')).toBe('2026-12-02');
    expect(parseUntil('2026-12-31', tokyoMorning, 'Asia/Kolkata')).toBe('2026-12-31T18:30:00.000Z');
  });

  it('daylight saving: a day of 23 hours still ends at local midnight', () => {
    // 8 March 2026 is the spring-forward day in the United States.
    expect(parseUntil('2026-03-08', new Date('2026-03-01T12:00:00Z'), 'America/New_York')).toBe(
      '2026-03-09T04:00:00.000Z',
    );
  });

  it('the zone comes from SQLRECALL_TZ, else the process; an unknown name is a configuration error', () => {
    expect(userTimeZone({ SQLRECALL_TZ: 'Asia/Tokyo' })).toBe('Asia/Tokyo');
    expect(userTimeZone({})).toBe(Intl.DateTimeFormat().resolvedOptions().timeZone);
    expect(() => userTimeZone({ SQLRECALL_TZ: 'Mars/Olympus' })).toThrow(
      expect.objectContaining({ code: 'config', message: expect.stringContaining('Europe/Berlin') }),
    );
    expect(expiryOf('only delivered orders until Friday', LA_EVENING, LA)?.expiresAt).toBe(
      '2026-12-05T08:00:00.000Z',
    );
  });
});

describe('--until a day already over', () => {
  it('is refused in the user zone (invalid_date), today is still accepted', () => {
    // 2026-12-02 20:00 in Los Angeles is already 2026-12-03 in UTC: "2026-12-02" is today there.
    const laEvening = new Date('2026-12-03T04:00:00Z');
    expect(untilOf('2026-12-02', laEvening, 'America/Los_Angeles')).toEqual({
      expiresAt: '2026-12-03T08:00:00.000Z',
      expiresOn: '2026-12-02',
    });
    expect(() => untilOf('2026-12-02', laEvening, 'UTC')).toThrow(
      expect.objectContaining({ code: 'invalid_date', message: expect.stringContaining('already over') }),
    );
    expect(() => untilOf('2026-12-01', laEvening, 'America/Los_Angeles')).toThrow(
      expect.objectContaining({ code: 'invalid_date' }),
    );
  });
});
