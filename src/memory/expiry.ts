/**
 * Memories that expire (issue 12, point 5): "only delivered orders for this week", "until Friday",
 * `memory add --until 2026-12-31`. An expired memory is no longer recalled but stays in the list
 * (`--all`) and the history. Dates are whole days in UTC: a memory "until Friday" expires at the
 * end of that Friday (00:00 UTC the next day).
 */
import { SqlrecallError } from '../core/errors.js';

const WEEKDAYS = ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'];
const DAY_MS = 86_400_000;

/** 00:00 UTC of the day after `date`'s day plus `days`. */
function endOfDay(date: Date, days = 0): Date {
  const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate());
  return new Date(start + (days + 1) * DAY_MS);
}

/**
 * The end of the day a phrase names, or null: `today`, `tomorrow`, a weekday (its next occurrence,
 * today included), `this week` (through Sunday), `N days`/`N weeks`, or an ISO date `YYYY-MM-DD`.
 */
export function dayOf(phrase: string, now: Date): Date | null {
  const p = phrase.trim().toLowerCase();
  const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(p);
  if (iso) {
    const d = new Date(Date.UTC(Number(iso[1]), Number(iso[2]) - 1, Number(iso[3])));
    if (Number.isNaN(d.getTime()) || d.getUTCDate() !== Number(iso[3])) return null;
    return endOfDay(d);
  }
  if (p === 'today' || p === 'the day' || p === 'now') return endOfDay(now);
  if (p === 'tomorrow') return endOfDay(now, 1);
  if (/^(?:this|the)\s+week$/.test(p)) return endOfDay(now, (7 - now.getUTCDay()) % 7);
  const span = /^(?:the\s+next\s+)?(\d{1,3})\s+(day|week)s?$/.exec(p);
  if (span) return endOfDay(now, Number(span[1]) * (span[2] === 'week' ? 7 : 1) - 1);
  const day = WEEKDAYS.indexOf(p.replace(/^(?:next\s+|this\s+)/, ''));
  if (day >= 0) return endOfDay(now, (day - now.getUTCDay() + 7) % 7);
  return null;
}

/** Phrases in a message that limit how long it holds: "for this week", "until Friday", "for 3 days". */
const EXPIRY_PHRASE =
  /\s*,?\s*\b(?:for\s+(this\s+week|today|the\s+next\s+\d{1,3}\s+(?:days?|weeks?)|\d{1,3}\s+(?:days?|weeks?))|until\s+(\d{4}-\d{2}-\d{2}|today|tomorrow|(?:next\s+|this\s+)?(?:sunday|monday|tuesday|wednesday|thursday|friday|saturday)))\b/i;

/**
 * The expiry a message states, if any: `{ expiresAt, phrase }` with `expiresAt` an ISO timestamp
 * (end of the named day, UTC) and `phrase` the words that said it. Null when none.
 */
export function expiryOf(
  message: string,
  now: Date = new Date(),
): { expiresAt: string; phrase: string } | null {
  const match = EXPIRY_PHRASE.exec(message);
  if (!match) return null;
  const day = dayOf(match[1] ?? match[2] ?? '', now);
  return day ? { expiresAt: day.toISOString(), phrase: match[0].trim() } : null;
}

/**
 * `--until` of `memory add`: an ISO date or a phrase of {@link dayOf}.
 * @throws SqlrecallError `usage` when it names no day
 */
export function parseUntil(value: string, now: Date = new Date()): string {
  const day = dayOf(value, now);
  if (!day)
    throw new SqlrecallError(
      'usage',
      `--until takes a date (YYYY-MM-DD), a weekday, today, tomorrow, "this week" or "N days", not "${value.slice(0, 40)}".`,
    );
  return day.toISOString();
}

/** True when `memory` has an expiry at or before `now`. */
export function isExpired(memory: { expiresAt: string | null }, now: Date = new Date()): boolean {
  return memory.expiresAt !== null && Date.parse(memory.expiresAt) <= now.getTime();
}
