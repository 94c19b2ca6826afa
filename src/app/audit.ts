/**
 * The audit use cases: who may read the trail, the `--since` forms, and one rendering of records as
 * text. The records themselves come from the audit table (`audit/store.ts`), fed by every front
 * end's statements through the one SQL path.
 */
import type { AuditRecord } from '../core/audit.js';
import { SqlrecallError } from '../core/errors.js';

/**
 * Refuses anyone but an administrator (`users add --admin`; the local user of a loopback server).
 * @throws SqlrecallError `forbidden` (HTTP 403)
 */
export function requireAdmin(principal: { user: string; admin?: boolean }, what = 'the audit trail'): void {
  if (principal.admin !== true)
    throw new SqlrecallError('forbidden', `Only administrators can read ${what}.`, {
      details: { hint: 'An administrator is added with `sqlrecall users add NAME --admin`.' },
    });
}

const UNITS: Record<string, number> = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * The instant a `--since` value names: an ISO 8601 date or time (`2026-12-01`,
 * `2026-12-01T08:00:00Z`), or a duration back from `now` (`30m`, `24h`, `7d`, `2w`).
 * @throws SqlrecallError `usage` for anything else
 */
export function parseSince(text: string, now: Date = new Date()): Date {
  const value = text.trim();
  const duration = /^(\d{1,6})\s*([mhdw])$/i.exec(value);
  if (duration) return new Date(now.getTime() - Number(duration[1]) * UNITS[duration[2]!.toLowerCase()]!);
  if (/^\d{4}-\d{2}-\d{2}([T ][\d:.]+(Z|[+-]\d{2}:?\d{2})?)?$/.test(value)) {
    const at = new Date(value);
    if (!Number.isNaN(at.getTime())) return at;
  }
  throw new SqlrecallError(
    'usage',
    `--since takes an ISO date or time (2026-12-01, 2026-12-01T08:00:00Z) or a duration (30m, 24h, 7d, 2w), not "${value.slice(0, 40)}".`,
  );
}

/** One line per record, then its SQL indented: time, user, front end, outcome, rows or reason. */
export function auditText(records: readonly AuditRecord[]): string {
  if (records.length === 0) return 'No audit records match.\n';
  return records
    .map((r) => {
      const what =
        r.outcome === 'ran' ? `ran, ${r.rowCount ?? 0} row(s)` : `${r.outcome}: ${r.reason ?? r.code ?? ''}`;
      const policies = r.policies.length > 0 ? `  policies: ${r.policies.join(', ')}` : '';
      const question = r.question !== null ? `\n  question: ${oneLine(r.question)}` : '';
      // A question refused before any statement was written has no SQL to show.
      const sql = r.sql.trim() === '' ? '(no statement was written)' : oneLine(r.sql);
      return `${r.at}  ${r.user}  ${r.frontEnd}/${r.origin}  ${what}${policies}${question}\n  ${sql}`;
    })
    .join('\n')
    .concat('\n');
}

/** Text on one line, cut at 500 characters (the full text is in `--json`). */
function oneLine(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > 500 ? `${flat.slice(0, 497)}...` : flat;
}
