/**
 * The audit trail's table in the memory store's database (`sqlrecall_audit`, migration series
 * `audit`): one row per statement run or refused for a user. Rows arrive from the local journal
 * (see `journal.ts`) keyed by the id fixed when they were recorded, so writing a batch twice
 * (a crash between the insert and the journal's truncation) keeps one row each.
 */
import type { AuditRecord, FrontEnd, StatementOrigin, StatementOutcome } from '../core/audit.js';
import { SqlrecallError } from '../core/errors.js';
import { type MigrationSeries, runMigrations } from '../databases/postgres/migrate.js';
import type { SqlClient } from '../memory/store/index.js';
import { loadSqlParser } from '../sql/parse-tree.js';
import { maskAuditRecord } from './mask.js';

/** The audit's series: the table and its two read paths (by time, by user and time). */
export const AUDIT_SERIES: MigrationSeries = {
  component: 'audit',
  migrations: [
    {
      version: 1,
      description: 'audit trail of statements run or refused per user',
      statements: [
        `CREATE TABLE IF NOT EXISTS sqlrecall_audit (
     id uuid PRIMARY KEY,
     at timestamptz NOT NULL,
     user_name text NOT NULL,
     front_end text NOT NULL,
     question text,
     sql text NOT NULL,
     outcome text NOT NULL CHECK (outcome IN ('ran', 'refused', 'failed')),
     origin text NOT NULL,
     row_count bigint,
     reason text,
     code text,
     policies text[] NOT NULL DEFAULT '{}'
   )`,
        'CREATE INDEX IF NOT EXISTS sqlrecall_audit_at ON sqlrecall_audit (at)',
        'CREATE INDEX IF NOT EXISTS sqlrecall_audit_user_at ON sqlrecall_audit (user_name, at)',
      ],
    },
    {
      version: 2,
      description: 'statements interrupted by the end of their process',
      statements: [
        'ALTER TABLE sqlrecall_audit DROP CONSTRAINT IF EXISTS sqlrecall_audit_outcome_check',
        `ALTER TABLE sqlrecall_audit ADD CONSTRAINT sqlrecall_audit_outcome_check
     CHECK (outcome IN ('ran', 'refused', 'failed', 'interrupted'))`,
      ],
    },
  ],
};

/** Default retention of audit records, in days. */
export const DEFAULT_AUDIT_RETENTION_DAYS = 90;

/** Most records one listing returns. */
export const MAX_AUDIT_LIST = 1000;

/** Filters of {@link AuditStore.list}. */
export interface AuditQuery {
  /** Only this user's records (exact stored name). */
  user?: string;
  /** Only records at or after this instant. */
  since?: Date;
  /** Most records, newest first; default 100, at most {@link MAX_AUDIT_LIST}. */
  limit?: number;
}

/** The audit table over a client of the memory store's database. */
export class AuditStore {
  private ready: Promise<void> | undefined;

  constructor(private readonly client: SqlClient) {}

  /**
   * Runs the series once per instance; a failure is retried on the next call.
   * @throws the driver's error when the migration fails
   */
  init(): Promise<void> {
    this.ready ??= runMigrations(this.client, AUDIT_SERIES)
      .then(() => undefined)
      .catch((error: unknown) => {
        this.ready = undefined;
        throw error;
      });
    return this.ready;
  }

  /**
   * Writes records (one statement for the batch); a record whose id is stored already is skipped.
   * @returns how many were new
   */
  async insert(records: readonly AuditRecord[]): Promise<number> {
    if (records.length === 0) return 0;
    await this.init();
    const rows = await this.client.query<{ n: number | string }>(
      `WITH given AS (
         SELECT * FROM jsonb_to_recordset($1::jsonb) AS r(
           id uuid, at timestamptz, "user" text, "frontEnd" text, question text, sql text,
           outcome text, origin text, "rowCount" bigint, reason text, code text, policies jsonb)
       ), added AS (
         INSERT INTO sqlrecall_audit
           (id, at, user_name, front_end, question, sql, outcome, origin, row_count, reason, code, policies)
         SELECT id, at, "user", "frontEnd", question, sql, outcome, origin, "rowCount", reason, code,
                ARRAY(SELECT jsonb_array_elements_text(coalesce(policies, '[]'::jsonb)))
           FROM given
         ON CONFLICT (id) DO NOTHING
         RETURNING 1)
       SELECT count(*) AS n FROM added`,
      [JSON.stringify(records)],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Records newest first, filtered by user and time; secrets masked (`mask.ts`), so a record kept
   * before masking existed shows none either.
   */
  async list(query: AuditQuery = {}): Promise<AuditRecord[]> {
    const limit = Math.min(Math.max(1, Math.trunc(query.limit ?? 100)), MAX_AUDIT_LIST);
    await this.init();
    // Masked on the parse tree; without the parser (it failed to load) on the tokens.
    await loadSqlParser().catch(() => {});
    const rows = await this.client.query<{
      id: string;
      at: Date | string;
      user_name: string;
      front_end: string;
      question: string | null;
      sql: string;
      outcome: string;
      origin: string;
      row_count: number | string | null;
      reason: string | null;
      code: string | null;
      policies: string[] | null;
    }>(
      `SELECT id::text AS id, at, user_name, front_end, question, sql, outcome, origin, row_count,
              reason, code, policies
         FROM sqlrecall_audit
        WHERE ($1::text IS NULL OR user_name = $4 OR lower(normalize(user_name, NFKC)) = $1)
          AND ($2::timestamptz IS NULL OR at >= $2)
        ORDER BY at DESC, id DESC
        LIMIT $3`,
      // A user's records under every spelling of the name (`SAM`, `ſam` are sam, as for policies
      // and `users`): the same identity key, NFKC then lower case; the database's lower() folds
      // what its locale knows (every ASCII letter), the name as given matches exactly too.
      [
        query.user === undefined ? null : query.user.normalize('NFKC').toLowerCase().normalize('NFKC'),
        query.since?.toISOString() ?? null,
        limit,
        query.user ?? null,
      ],
    );
    return rows.map((r) =>
      maskAuditRecord({
        id: r.id,
        at: new Date(r.at).toISOString(),
        user: r.user_name,
        frontEnd: r.front_end as FrontEnd,
        question: r.question,
        sql: r.sql,
        outcome: r.outcome as StatementOutcome,
        origin: r.origin as StatementOrigin,
        rowCount: r.row_count === null ? null : Number(r.row_count),
        reason: r.reason,
        code: r.code,
        policies: r.policies ?? [],
      }),
    );
  }

  /**
   * Deletes records older than `days` days.
   * @returns how many were deleted
   * @throws SqlrecallError `usage` for a retention below one day
   */
  async prune(days: number): Promise<number> {
    if (!Number.isInteger(days) || days < 1)
      throw new SqlrecallError('usage', 'The audit retention is a whole number of days, at least 1.');
    await this.init();
    const rows = await this.client.query<{ n: number | string }>(
      `WITH gone AS (
         DELETE FROM sqlrecall_audit WHERE at < clock_timestamp() - make_interval(days => $1) RETURNING 1)
       SELECT count(*) AS n FROM gone`,
      [days],
    );
    return Number(rows[0]?.n ?? 0);
  }
}
