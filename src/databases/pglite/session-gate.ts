/**
 * One PGlite instance is ONE PostgreSQL session, which every user of a shared data directory takes
 * turns on: the owning process itself and each connection to its socket (`wire-mux.ts`). The
 * {@link Gate} gives the session to one party at a time, in arrival order, and when the party
 * changes it makes the session look, to the party that gets it, like a fresh connection of its own:
 *
 * 1. it remembers what the leaving party had SET (every setting whose source is `session`, plus
 *    `SET ROLE` and `SET SESSION AUTHORIZATION`), so that party gets it back on its next turn;
 * 2. it rolls back a transaction left open, then `DISCARD ALL`: settings back to their defaults,
 *    role and session authorization reset, prepared statements, cursors (also WITH HOLD),
 *    temporary tables and other temporary objects dropped, `LISTEN` channels left, session advisory
 *    locks released, cached plans and sequence values forgotten;
 * 3. PGlite's `DISCARD ALL` does not restore the session user (it has no authenticated-user reset
 *    value), so the original session user is set back explicitly;
 * 4. the arriving party's own settings are applied: its connection options (`-c name=value` in the
 *    startup message's `options`, how a client states what it relies on) or what it had SET before.
 *
 * Only the settings come back on a party's next turn: its prepared statements, cursors, temporary
 * tables, `LISTEN`s and session advisory locks do not outlive another party's turn, exactly as if
 * its connection had been reset in between. Work that needs them runs in one transaction, which
 * keeps the session until it ends (`pg_dump` does). All of this runs only when the party changes:
 * a party that runs statement after statement pays nothing.
 */
import type { PGlite } from '@electric-sql/pglite';
import type { DiskGuard } from './disk-guard.js';
import { streamProtocol } from './raw-stream.js';

/** A setting as `[name, value]`, applied with `set_config(name, value, false)`. */
export type Setting = readonly [name: string, value: string];

/** One user of the session: the owning process, or one socket connection. */
export interface Party {
  /** Settings applied whenever this party gets the session (after the reset). */
  settings: Setting[];
  /**
   * False for a party whose settings are fixed (the owning process states its own and never SETs
   * a session setting): nothing is saved when it leaves. Default true.
   */
  keepsSettings?: boolean;
}

/** How a {@link Gate} saves, resets and restores the session when the party changes. */
export interface SessionSwitch {
  /** The settings the session holds now that the leaving party SET (see the module comment). */
  save(): Promise<Setting[]>;
  /** Ends any transaction, discards all session state, then applies `settings`. */
  reset(settings: readonly Setting[]): Promise<void>;
}

/**
 * A FIFO mutex over the session: `acquire(party)` resolves with a release function once every
 * earlier holder released, and once the session was switched to `party` (when it changed).
 */
export class Gate {
  /** The in-process owner's party (the default of {@link acquire} and {@link run}). */
  readonly owner: Party;
  private tail: Promise<void> = Promise.resolve();
  private last: Party | undefined;
  private switches = 0;
  private queued = 0;

  /**
   * @param session how to switch the session between parties; without it (a private instance
   *   nobody else reaches) there is a single party and nothing is ever reset
   * @param ownerSettings what the in-process owner relies on (e.g. its `search_path`)
   */
  constructor(
    private readonly session?: SessionSwitch,
    ownerSettings: Setting[] = [],
  ) {
    this.owner = { settings: ownerSettings, keepsSettings: false };
  }

  /** How many times the session was reset for another party: state made before a change is gone. */
  get resets(): number {
    return this.switches;
  }

  /** Acquisitions waiting for the gate now. */
  get waiting(): number {
    return this.queued;
  }

  /**
   * Waits for the gate and gives the session to `party` (default: the owner); call the returned
   * function exactly once to pass it on.
   * @throws the switch's error (then the gate is passed on already)
   */
  async acquire(party: Party = this.owner): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((resolve) => {
      release = resolve;
    });
    const ready = this.tail;
    this.tail = this.tail.then(() => next);
    this.queued += 1;
    try {
      await ready;
    } finally {
      this.queued -= 1;
    }
    if (this.session && this.last !== party) {
      try {
        const leaving = this.last;
        this.last = undefined; // until the reset is done, the session is nobody's
        if (leaving && leaving.keepsSettings !== false) {
          // A session the leaving party left unreadable (e.g. an aborted transaction) is reset all
          // the same: it only loses its own settings, never blocks the others.
          leaving.settings = await this.session.save().catch(() => leaving.settings);
        }
        this.switches += 1;
        await this.session.reset(party.settings);
        this.last = party;
      } catch (error) {
        release();
        throw error;
      }
    }
    return release;
  }

  /** Runs `fn` while holding the gate for `party` (default: the owner). */
  async run<T>(fn: () => Promise<T>, party?: Party): Promise<T> {
    const release = await this.acquire(party);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** A party left for good (its connection closed): its state is not saved for a next turn. */
  forget(party: Party): void {
    if (this.last === party) this.last = undefined;
  }
}

/** Name PGlite gives its single user; the session user every reset returns to. */
const SESSION_USER = 'postgres';

/**
 * What a party SET: settings whose source is `session`, the role and the session user. Every name
 * is schema-qualified: the leaving party may have put its own `pg_settings` first on the search path.
 */
const SAVE_SQL = `SELECT name, setting FROM pg_catalog.pg_settings WHERE source = 'session'
UNION ALL SELECT '@session_user', pg_catalog.session_user()::text
UNION ALL SELECT '@role', pg_catalog.current_setting('role')`;

/** A simple-protocol Query message. */
function query(sql: string): Buffer {
  const body = Buffer.from(`${sql}\0`, 'utf8');
  const head = Buffer.alloc(5);
  head.write('Q', 0, 'latin1');
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

/**
 * A string literal whatever `standard_conforming_strings` says: `E'…'` with quotes and
 * backslashes doubled.
 */
function literal(value: string): string {
  return `E'${value.replace(/\\/g, '\\\\').replace(/'/g, "''")}'`;
}

/** The data rows (as text, null for NULL) and the first error message of a backend response. */
export function readResponse(response: Uint8Array): { rows: (string | null)[][]; error?: string } {
  const view = Buffer.from(response.buffer, response.byteOffset, response.byteLength);
  const rows: (string | null)[][] = [];
  let error: string | undefined;
  for (let at = 0; at + 5 <= view.length; ) {
    const type = view[at];
    const end = at + 1 + view.readInt32BE(at + 1);
    if (type === 0x44) {
      // DataRow: int16 column count, then per column an int32 length (-1: NULL) and the bytes
      const row: (string | null)[] = [];
      let p = at + 7;
      for (let column = view.readInt16BE(at + 5); column > 0; column -= 1) {
        const length = view.readInt32BE(p);
        p += 4;
        row.push(length < 0 ? null : view.toString('utf8', p, p + length));
        p += Math.max(length, 0);
      }
      rows.push(row);
    } else if (type === 0x45 && error === undefined) {
      // ErrorResponse: fields of a type byte and a NUL-ended string, ended by a NUL
      error = 'unknown error';
      for (let p = at + 5; p < end && view[p] !== 0; ) {
        const field = view[p];
        const stop = view.indexOf(0, p + 1);
        if (field === 0x4d) error = view.toString('utf8', p + 1, stop); // 'M': the message
        p = stop + 1;
      }
    }
    at = end;
  }
  return error === undefined ? { rows } : { rows, error };
}

/**
 * The {@link SessionSwitch} of a PGlite instance (see the module comment for what it resets). Each
 * step is ONE exchange of simple-protocol messages below PGlite's own query layer: a switch costs
 * about a millisecond or two (bench/session-switch.ts), not the ~2 ms per statement of `db.query`.
 * @param disk the instance's disk guard, checked before each exchange
 * @throws from `save`/`reset` the database's error (e.g. a client's connection option that names
 *   no setting, or a value it refuses); DiskFullError once `disk` stopped the instance
 */
export function pgliteSessionSwitch(db: PGlite, disk?: DiskGuard): SessionSwitch {
  const exchange = async (messages: Buffer[]) => {
    // A stopped instance is never entered again, not even to switch its session (disk-guard.ts).
    disk?.check(false);
    // Through streamProtocol like every raw exchange: PGlite keeps the last raw-stream callback
    // installed, so a plain execProtocolRaw would send this answer to the previous client's socket.
    const chunks: Buffer[] = [];
    await streamProtocol(db, new Uint8Array(Buffer.concat(messages)), (bytes) =>
      chunks.push(Buffer.from(bytes)),
    );
    const { rows, error } = readResponse(new Uint8Array(Buffer.concat(chunks)));
    if (error !== undefined) throw new Error(error);
    return rows;
  };
  return {
    async save(): Promise<Setting[]> {
      const saved: Setting[] = [];
      let user = SESSION_USER;
      let role = 'none';
      for (const [name, setting] of await exchange([query(SAVE_SQL)])) {
        if (typeof name !== 'string' || typeof setting !== 'string') continue;
        if (name === '@session_user') user = setting;
        else if (name === '@role') role = setting;
        else saved.push([name, setting]);
      }
      // Order matters: the session user decides which roles may be set, the role which settings.
      return [
        ...(user !== SESSION_USER ? [['session_authorization', user] as const] : []),
        ...(role !== 'none' ? [['role', role] as const] : []),
        ...saved,
      ];
    },
    async reset(settings: readonly Setting[]): Promise<void> {
      // DISCARD ALL refuses to run inside a transaction block, so each is a Query message of its own.
      await exchange([
        ...(db.isInTransaction() ? [query('ROLLBACK')] : []),
        query('DISCARD ALL'),
        query(`SET SESSION AUTHORIZATION ${SESSION_USER}`),
      ]);
      if (settings.length === 0) return;
      const calls = settings.map(
        ([name, value]) => `pg_catalog.set_config(${literal(name)}, ${literal(value)}, false)`,
      );
      await exchange([query(`SELECT ${calls.join(', ')}`)]);
    },
  };
}
