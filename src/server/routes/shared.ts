/** Helpers shared by the route modules. */
import type { Schema } from '../../core/schema.js';
import { isTimeZone } from '../../memory/expiry.js';
import type { ServerDeps } from '../deps.js';

/** The catalog when the database is reachable; undefined otherwise (SQL is then parser-checked only). */
export async function optionalSchema(deps: ServerDeps): Promise<Schema | undefined> {
  try {
    return (await (await deps.assistant()).schema()).schema;
  } catch {
    return undefined;
  }
}

/**
 * Request header with the browser's IANA time zone (`Intl.DateTimeFormat().resolvedOptions().timeZone`,
 * sent by the web app): days the user names ("until Friday", `until: 2026-12-31`) are days in it.
 */
export const TIME_ZONE_HEADER = 'x-sqlrecall-time-zone';

/** `{ timeZone }` when `value` names a known zone; `{}` otherwise (the server's zone then applies). */
export function timeZoneOf(value: string | undefined): { timeZone?: string } {
  const zone = value?.trim();
  return zone && isTimeZone(zone) ? { timeZone: zone } : {};
}
