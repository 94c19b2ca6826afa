/**
 * The audit log of one process: turns the one SQL path's statement events into audit records,
 * writes each to the local journal at once (crash-safe, see `journal.ts`) and moves them to the
 * audit table in the background once a table is attached. Recording never throws and never waits
 * for the database: an audit problem is counted and reported (`status()`), never an answer's error.
 */
import { randomUUID } from 'node:crypto';
import type { AuditRecord, FrontEnd, StatementEvent, StatementListener } from '../core/audit.js';
import { loadSqlParser } from '../sql/parse-tree.js';
import { AuditJournal } from './journal.js';
import { maskAuditRecord } from './mask.js';
import type { AuditStore } from './store.js';

/** Who a statement ran for: fixed per question or request by the front end. */
export interface AuditContext {
  user: string;
  frontEnd: FrontEnd;
  /** The question asked, absent for a statement a person wrote. */
  question?: string;
}

/** Options of {@link AuditLog}. */
export interface AuditLogOptions {
  /** The journal folder (the home folder's `audit`). */
  dir: string;
  /** Records older than this many days are deleted when a table is attached. */
  retentionDays: number;
  /** Delay in ms between a record and its move to the table (batches a burst); default 200. */
  drainDelayMs?: number;
}

/** What {@link AuditLog.status} reports. */
export interface AuditStatus {
  /** Records written to the journal by this process. */
  recorded: number;
  /** Records moved to the table by this process (its own and those taken over). */
  stored: number;
  /** Failed journal writes or table writes (the records of a failed table write stay in the journal). */
  errors: number;
  /** The last error's message, if any. */
  lastError?: string;
}

/** The longest SQL or question kept in a record, in characters (longer text is cut). */
const MAX_TEXT = 100_000;

/** The audit trail of one process. */
export class AuditLog {
  private readonly journal: AuditJournal;
  private store: AuditStore | undefined;
  private attaching: Promise<void> | undefined;
  private draining: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly state: AuditStatus = { recorded: 0, stored: 0, errors: 0 };
  /** Ids of statements started and not finished: their records stay in the journal meanwhile. */
  private readonly running = new Set<string>();

  constructor(private readonly options: AuditLogOptions) {
    this.journal = new AuditJournal(options.dir);
    // Secrets are masked on the parse tree once the parser is loaded (on the tokens until then).
    loadSqlParser().catch(() => {});
  }

  /**
   * A listener recording every event for `context` (hand it to the one SQL path). A `started`
   * event is written at once; the statement's outcome is written under the same id, replacing it.
   * Until then the started record is held in the journal (not moved to the table), so a process
   * killed mid-statement leaves it there, and the process that takes the journal over stores it as
   * `interrupted`.
   */
  listener(context: AuditContext): StatementListener {
    let started: { id: string; sql: string } | undefined;
    return (event) => {
      if (event.outcome === 'started') {
        if (started) this.running.delete(started.id);
        started = { id: randomUUID(), sql: event.sql };
        this.running.add(started.id);
        this.record(context, event, started.id);
        return;
      }
      const same = started !== undefined && started.sql === event.sql ? started : undefined;
      this.record(context, event, same?.id);
      // Written first, released second: a drain in between never sees the start without its end.
      if (same) {
        this.running.delete(same.id);
        started = undefined;
      }
    };
  }

  /**
   * Records one statement: one synchronous journal write; never throws. `id` is the id of the
   * statement's `started` record, which this one completes; default a new id. Secrets in the
   * statement, the question and the reason are masked before anything is written (`mask.ts`).
   */
  record(context: AuditContext, event: StatementEvent, id: string = randomUUID()): void {
    const record: AuditRecord = maskAuditRecord({
      id,
      at: new Date().toISOString(),
      user: context.user,
      frontEnd: context.frontEnd,
      question: context.question === undefined ? null : context.question.slice(0, MAX_TEXT),
      sql: event.sql.slice(0, MAX_TEXT),
      outcome: event.outcome,
      origin: event.origin,
      rowCount: event.rowCount ?? null,
      reason: event.reason ?? null,
      code: event.code ?? null,
      policies: [...(event.policies ?? [])],
    });
    try {
      this.journal.append(record);
      this.state.recorded += 1;
    } catch (error) {
      this.failed(error);
      return;
    }
    this.schedule();
  }

  /**
   * Attaches the audit table: prunes records past the retention, takes over the journals of
   * processes that are gone, then stores this process's records. Once per log; resolves when done
   * (errors are counted, not thrown).
   */
  attach(store: AuditStore): Promise<void> {
    if (this.attaching) return this.attaching;
    this.store = store;
    this.attaching = this.serial(async () => {
      await store.init();
      await store.prune(this.options.retentionDays);
      this.state.stored += await this.journal.drainOrphans((records) => store.insert(records));
      this.state.stored += await this.journal.drainOwn((records) => store.insert(records), this.running);
    });
    return this.attaching;
  }

  /** Moves every record written so far to the table (when one is attached); never throws. */
  async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.attaching;
    const store = this.store;
    if (!store) return;
    await this.serial(async () => {
      this.state.stored += await this.journal.drainOwn((records) => store.insert(records), this.running);
    });
  }

  /** Flushes, then closes the journal (a file with records not stored stays for the next process). */
  async close(): Promise<void> {
    await this.flush();
    try {
      this.journal.close();
    } catch (error) {
      this.failed(error);
    }
  }

  /** Counters of this process's audit writes. */
  status(): AuditStatus {
    return { ...this.state };
  }

  private schedule(): void {
    if (!this.store || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.flush();
    }, this.options.drainDelayMs ?? 200);
    this.timer.unref?.();
  }

  /** Runs `step` after the drains before it; its error is counted. */
  private serial(step: () => Promise<void>): Promise<void> {
    const next = this.draining.then(step).catch((error: unknown) => this.failed(error));
    this.draining = next;
    return next;
  }

  private failed(error: unknown): void {
    this.state.errors += 1;
    this.state.lastError = error instanceof Error ? error.message : String(error);
  }
}
