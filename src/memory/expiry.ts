/**
 * Memories that expire: "only delivered orders for this week", "until Friday",
 * `memory add --until 2026-12-31`. An expired memory is no longer recalled but stays in the list
 * (`--all`) and the history. Days are whole days in the USER's time zone: "until Friday" lasts
 * through the end of that Friday where the user is (the instant of the next local midnight, stored
 * as a UTC timestamp), and is shown back as the day the user named ({@link untilDay}).
 *
 * The zone is an IANA name (`America/Los_Angeles`): `SQLRECALL_TZ`, else the process's own zone
 * (the `TZ` variable or the system setting); the HTTP server passes the browser's zone instead.
 * Local midnights are found with `Intl.DateTimeFormat`, so daylight-saving changes are honoured.
 */

import { processEnv } from '../config/env.js';
import { SqlrecallError } from '../core/errors.js';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;

/** True when `zone` is an IANA time zone name this runtime knows. */
export function isTimeZone(zone: string): boolean {
  if (!zone || zone.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/**
 * The user's time zone: `SQLRECALL_TZ` when set, else the process's (from `TZ` or the system),
 * else `UTC`.
 * @throws SqlrecallError `config` when `SQLRECALL_TZ` names no zone this runtime knows: days would
 *   otherwise silently be counted in another zone
 */
export function userTimeZone(env: NodeJS.ProcessEnv = processEnv()): string {
  const configured = env.SQLRECALL_TZ?.trim();
  if (configured) {
    if (isTimeZone(configured)) return configured;
    throw new SqlrecallError(
      'config',
      `SQLRECALL_TZ must name a time zone such as Europe/Berlin, not "${configured.slice(0, 64)}".`,
      {
        details: {
          setting: 'SQLRECALL_TZ',
          hint: 'Use an IANA time zone name (e.g. SQLRECALL_TZ=Europe/Berlin), or unset it for the system zone.',
        },
      },
    );
  }
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

interface LocalDay {
  year: number;
  /** 1–12. */
  month: number;
  day: number;
  /** 0 = Sunday. */
  weekday: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      weekday: 'short',
    });
    formatters.set(zone, f);
  }
  return f;
}

/** Wall-clock fields of `instant` in `zone`. */
function wallClock(
  instant: number,
  zone: string,
): LocalDay & { hour: number; minute: number; second: number } {
  const parts: Record<string, string> = {};
  for (const p of formatter(zone).formatToParts(new Date(instant))) parts[p.type] = p.value;
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'].indexOf(parts.weekday ?? ''),
  };
}

/** Offset of `zone` from UTC at `instant`, in milliseconds (positive east of UTC). */
function offsetAt(instant: number, zone: string): number {
  const w = wallClock(instant, zone);
  const asUtc = Date.UTC(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/** The instant of local midnight starting the calendar day `year-month-day` in `zone`. */
function startOfLocalDay(year: number, month: number, day: number, zone: string): Date {
  const wall = Date.UTC(year, month - 1, day);
  let instant = wall - offsetAt(wall, zone);
  // Around a daylight-saving change the offset at the guess may differ from the offset at midnight.
  const again = wall - offsetAt(instant, zone);
  if (again !== instant) instant = again;
  return new Date(instant);
}

/** The end of the local calendar day `days` after `local` (the next local midnight). */
function endOfLocalDay(local: Pick<LocalDay, 'year' | 'month' | 'day'>, zone: string, days = 0): Date {
  const next = new Date(Date.UTC(local.year, local.month - 1, local.day) + (days + 1) * DAY_MS);
  return startOfLocalDay(next.getUTCFullYear(), next.getUTCMonth() + 1, next.getUTCDate(), zone);
}

/**
 * The end of the day a phrase names in `zone` (default {@link userTimeZone}), or null: `today`,
 * `tomorrow`, a weekday (its next occurrence, today included), `this week` (through Sunday),
 * `N days`/`N weeks`, or an ISO date `YYYY-MM-DD`. "Today" is the local date of `now` in `zone`.
 */
export function dayOf(phrase: string, now: Date, zone: string = userTimeZone()): Date | null {
  const p = phrase.trim().toLowerCase();
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(p);
  if (iso) {
    const d = new Date(Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])));
    if (Number.isNaN(d.getTime()) || d.getUTCDate() !== Number(iso[3])) return null;
    return endOfLocalDay({ year: Number(iso[1]), month: Number(iso[2]), day: Number(iso[3]) }, zone);
  }
  const today = wallClock(now.getTime(), zone);
  if (p === 'today' || p === 'the day' || p === 'now') return endOfLocalDay(today, zone);
  if (p === 'tomorrow') return endOfLocalDay(today, zone, 1);
  if (/^(?:this|the)\s+week$/.test(p)) return endOfLocalDay(today, zone, (7 - today.weekday) % 7);
  const span = /^(?:the\s+next\s+)?(\d{1,3})\s+(day|week)s?$/.exec(p);
  if (span) return endOfLocalDay(today, zone, Number(span[1]) * (span[2] === 'week' ? 7 : 1) - 1);
  const day = WEEKDAYS.indexOf(p.replace(/^(?:next\s+|this\s+)/, ''));
  if (day >= 0) return endOfLocalDay(today, zone, (day - today.weekday + 7) % 7);
  return null;
}

/** Phrases in a message that limit how long it holds: "for this week", "until Friday", "for 3 days". */
const EXPIRY_PHRASE =
  /\s*,?\s*\b(?:for\s+(this\s+week|today|the\s+next\s+\d{1,3}\s+(?:days?|weeks?)|\d{1,3}\s+(?:days?|weeks?))|until\s+(\d{4}-\d{2}-\d{2}|today|tomorrow|(?:next\s+|this\s+)?(?:sunday|monday|tuesday|wednesday|thursday|friday|saturday)))\b/i;

/**
 * The expiry a message states, if any: `{ expiresAt, phrase }` with `expiresAt` an ISO timestamp
 * (end of the named day in `zone`, default {@link userTimeZone}) and `phrase` the words that said
 * it. Null when none.
 */
export function expiryOf(
  message: string,
  now: Date = new Date(),
  zone: string = userTimeZone(),
): { expiresAt: string; expiresOn: string; phrase: string } | null {
  const match = EXPIRY_PHRASE.exec(message);
  if (!match) return null;
  const day = dayOf(match[1] ?? match[2] ?? '', now, zone);
  if (!day) return null;
  const expiresAt = day.toISOString();
  return { expiresAt, expiresOn: untilDay(expiresAt, zone), phrase: match[0].trim() };
}

/** When a memory stops holding: the instant and the last day it holds as the user named it. */
export interface Until {
  /** ISO timestamp: the end of the day in the user's zone. */
  expiresAt: string;
  /** `YYYY-MM-DD`: that day, in the zone it was typed in (stored, shown as typed everywhere). */
  expiresOn: string;
}

/**
 * `--until` of `memory add`/`edit` (and the HTTP and MCP `until` fields): an ISO date or a phrase
 * of {@link dayOf}; the memory lasts through the end of that day in `zone` (default
 * {@link userTimeZone}).
 * @throws SqlrecallError `usage` when it names no day; `invalid_date` when that day is already over
 *   in `zone` (nothing is stored: a memory that never holds is a mistake, not a wish)
 */
export function untilOf(value: string, now: Date = new Date(), zone: string = userTimeZone()): Until {
  const day = dayOf(value, now, zone);
  if (!day)
    throw new SqlrecallError(
      'usage',
      `--until takes a date (YYYY-MM-DD), a weekday, today, tomorrow, "this week" or "N days", not "${value.slice(0, 40)}".`,
    );
  const expiresAt = day.toISOString();
  const expiresOn = untilDay(expiresAt, zone);
  const over = dayOverProblem({ expiresAt, expiresOn }, now, zone);
  if (over) throw new SqlrecallError('invalid_date', over);
  return { expiresAt, expiresOn };
}

/**
 * The refusal sentence when an expiry's day is already over at `now` in `zone` (a memory that
 * would never hold is a mistake, not a wish: nothing is stored), else null. The same words for
 * `--until` and for a chat message's "until 2020-01-01".
 */
export function dayOverProblem(until: Until, now: Date, zone: string): string | null {
  if (Date.parse(until.expiresAt) > now.getTime()) return null;
  return `The day ${until.expiresOn} is already over in ${zone}; give today or a later day. Nothing was stored.`;
}

/**
 * The instant of {@link untilOf} alone, as an ISO timestamp.
 * @throws SqlrecallError `usage` (no day), `invalid_date` (the day is already over)
 */
export function parseUntil(value: string, now: Date = new Date(), zone: string = userTimeZone()): string {
  return untilOf(value, now, zone).expiresAt;
}

/**
 * The last day `memory` holds as the user typed it: the stored day when there is one, else (a
 * memory stored before the day was kept) derived from the instant in `zone`. Null: never expires.
 */
export function expiresOnOf(
  memory: { expiresAt: string | null; expiresOn?: string | null },
  zone: string,
): string | null {
  if (!memory.expiresAt) return null;
  return memory.expiresOn ?? untilDay(memory.expiresAt, zone);
}

/**
 * The last day an expiry covers, as `YYYY-MM-DD` in `zone` (default {@link userTimeZone}): the
 * local date of the instant just before `expiresAt`, so `--until 2099-12-31` shows as 2099-12-31.
 */
export function untilDay(expiresAt: string, zone: string = userTimeZone()): string {
  const instant = Date.parse(expiresAt);
  if (Number.isNaN(instant)) return expiresAt.slice(0, 10);
  const w = wallClock(instant - 1, zone);
  return `${String(w.year).padStart(4, '0')}-${String(w.month).padStart(2, '0')}-${String(w.day).padStart(2, '0')}`;
}

/** True when `memory` has an expiry at or before `now`. */
export function isExpired(memory: { expiresAt: string | null }, now: Date = new Date()): boolean {
  return memory.expiresAt !== null && Date.parse(memory.expiresAt) <= now.getTime();
}
