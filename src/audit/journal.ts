/**
 * The audit journal: a local append-only file per process in which every audit record is written,
 * synchronously, before anything else happens to it. A record is in the operating system's hands
 * once {@link AuditJournal.append} returns, so killing the process (even `kill -9`) right after a
 * statement loses nothing. Records then move to the audit table (`store.ts`) in batches, off the
 * answer's path: the owning process drains its own file while it runs, and any process that opens
 * the audit table takes over the files of processes that are gone (same host, process id no longer
 * alive), so a crashed or short-lived command's records arrive with the next one.
 *
 * Files: `<dir>/journal-<host>-<pid>-<random>.jsonl`, one JSON record per line, readable by the
 * owner only (they hold questions and SQL). A file being taken over is first renamed to
 * `…jsonl.taken-<pid>` (atomic: of two processes only one wins), so it is never drained twice at
 * once; a taker that dies leaves a `taken` file of a dead process, taken over in turn.
 */
import { randomBytes } from 'node:crypto';
import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { AuditRecord } from '../core/audit.js';

/** Writes a batch of records somewhere durable (the audit table); resolves once they are stored. */
export type AuditSink = (records: readonly AuditRecord[]) => Promise<unknown>;

/**
 * Journal files this process has open: a file of this process id that is not among them belongs
 * to an audit log already closed (a runtime of an earlier command in the same process), so it is
 * taken over like a dead process's.
 */
const OPEN_HERE = new Set<string>();

const FILE = /^journal-([A-Za-z0-9._]+)-(\d+)-[0-9a-f]+\.jsonl(?:\.taken-(\d+))?$/;

/** Host part of a file name: letters, digits, `.` and `_` (other characters become `_`). */
function hostPart(): string {
  return hostname().replace(/[^A-Za-z0-9._]/g, '_') || 'host';
}

/** True when a process with this id runs on this host (a permission error means it exists). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The records of journal text; a line cut by a crash mid-write, or not a record, is skipped. */
export function parseJournal(text: string): AuditRecord[] {
  const out: AuditRecord[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const record = JSON.parse(line) as AuditRecord;
      if (typeof record?.id === 'string' && typeof record.sql === 'string') out.push(record);
    } catch {
      // a torn last line: its statement's record was never complete
    }
  }
  return out;
}

/** The reason an interrupted statement's record gives. */
export const INTERRUPTED_REASON = 'the process ended during the statement (killed or crashed)';

/**
 * The records to store from journal records in the order written: a statement's outcome replaces
 * its `started` record (same id), and a `started` record left without one becomes `interrupted`.
 */
export function settleRecords(records: readonly AuditRecord[]): AuditRecord[] {
  const byId = new Map<string, AuditRecord>();
  for (const record of records) {
    byId.delete(record.id); // the later line wins, in the order of its statement's end
    byId.set(record.id, record);
  }
  return [...byId.values()].map((r) =>
    r.outcome === 'started' ? { ...r, outcome: 'interrupted', reason: INTERRUPTED_REASON } : r,
  );
}

/** One process's journal file, and the take-over of the files of processes that are gone. */
export class AuditJournal {
  private fd: number | undefined;
  private readonly path: string;
  /** Bytes of the own file already stored in the table. */
  private drained = 0;
  private readonly host = hostPart();

  /** @param dir the journal folder (created on the first record, owner-only) */
  constructor(private readonly dir: string) {
    this.path = join(dir, `journal-${this.host}-${process.pid}-${randomBytes(6).toString('hex')}.jsonl`);
  }

  /**
   * Appends one record with one synchronous write.
   * @throws the file system's error (the caller counts it; the answer goes on)
   */
  append(record: AuditRecord): void {
    if (this.fd === undefined) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.fd = openSync(this.path, 'a+', 0o600);
      OPEN_HERE.add(this.path);
    }
    writeSync(this.fd, `${JSON.stringify(record)}\n`);
  }

  /** True when records of this process wait to be stored. */
  pending(): boolean {
    return this.fd !== undefined && fstatSync(this.fd).size > this.drained;
  }

  /**
   * Stores this process's records not stored yet, then empties the file when nothing was
   * appended meanwhile (checked and done without yielding, so no record slips in between).
   * Stops before the `started` record of a statement still running (an id in `running`): it and
   * what follows wait for its outcome, so the table never holds a statement as interrupted that
   * then finishes.
   * @throws the sink's error (the records stay in the file for the next drain)
   */
  async drainOwn(sink: AuditSink, running: ReadonlySet<string> = new Set()): Promise<number> {
    if (this.fd === undefined) return 0;
    const size = fstatSync(this.fd).size;
    if (size <= this.drained) return 0;
    const buffer = Buffer.alloc(size - this.drained);
    readSync(this.fd, buffer, 0, buffer.length, this.drained);
    // Only whole lines: a record being written is taken next time.
    let end = buffer.lastIndexOf(0x0a) + 1;
    if (end === 0) return 0;
    if (running.size > 0) end = heldBackAt(buffer.subarray(0, end), running);
    if (end === 0) return 0;
    const records = settleRecords(parseJournal(buffer.subarray(0, end).toString('utf8')));
    await sink(records);
    this.drained += end;
    if (fstatSync(this.fd).size === this.drained) {
      ftruncateSync(this.fd, 0);
      this.drained = 0;
    }
    return records.length;
  }

  /**
   * Stores the records of journals whose process is gone (on this host), then deletes those files.
   * A file another process took first is left to it.
   * @returns records stored
   * @throws the sink's error (the taken file stays, and is taken over again later)
   */
  async drainOrphans(sink: AuditSink): Promise<number> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0; // no journal folder: nothing was ever recorded here
    }
    let stored = 0;
    for (const name of names) {
      const match = FILE.exec(name);
      if (!match || match[1] !== this.host) continue;
      const owner = Number(match[3] ?? match[2]);
      if (owner === process.pid) {
        // Ours: taken over only when no audit log of this process still writes it.
        if (match[3] !== undefined || OPEN_HERE.has(join(this.dir, name))) continue;
      } else if (processAlive(owner)) continue;
      const base = name.replace(/\.taken-\d+$/, '');
      const taken = join(this.dir, `${base}.taken-${process.pid}`);
      try {
        renameSync(join(this.dir, name), taken);
      } catch {
        continue; // another process took it first
      }
      const records = settleRecords(parseJournal(readFileSync(taken, 'utf8')));
      await sink(records);
      unlinkSync(taken);
      stored += records.length;
    }
    return stored;
  }

  /** Closes the own file, deleting it when every record in it was stored. */
  close(): void {
    if (this.fd === undefined) return;
    const empty = fstatSync(this.fd).size <= this.drained;
    closeSync(this.fd);
    this.fd = undefined;
    OPEN_HERE.delete(this.path);
    if (empty) {
      try {
        unlinkSync(this.path);
      } catch {
        // already gone
      }
    }
  }
}

/** The offset of the first line of `lines` that starts a statement in `running`, else its length. */
function heldBackAt(lines: Buffer, running: ReadonlySet<string>): number {
  let start = 0;
  while (start < lines.length) {
    const next = lines.indexOf(0x0a, start) + 1 || lines.length;
    const line = lines.subarray(start, next).toString('utf8');
    if (line.includes('"started"')) {
      const [record] = parseJournal(line);
      if (record?.outcome === 'started' && running.has(record.id)) return start;
    }
    start = next;
  }
  return lines.length;
}
