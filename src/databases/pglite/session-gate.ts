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

/** A setting as `[name, value]`, applied with `set_config(name, value, false)`. */
export type Setting = readonly [name: string, value: string];

/** One user of the session: the owning process, or one socket connection. */
export interface Party {
  /** Settings applied whenever this party gets the session (after the reset). */
  settings: Setting[];
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
    this.owner = { settings: ownerSettings };
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
        if (this.last) this.last.settings = await this.session.save();
        this.last = undefined; // until the reset is done, the session is nobody's
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

/** Applies one setting (positional parameters: name, value). */
const SET_SQL = 'SELECT pg_catalog.set_config($1, $2, false)';

/**
 * The {@link SessionSwitch} of a PGlite instance (see the module comment for what it resets).
 * @throws from `save`/`reset` the database's error (e.g. a client's connection option that names
 *   no setting, or a value it refuses)
 */
export function pgliteSessionSwitch(db: PGlite): SessionSwitch {
  return {
    async save(): Promise<Setting[]> {
      const rows = (await db.query<{ name: string; setting: string }>(SAVE_SQL)).rows;
      const saved: Setting[] = [];
      let user = SESSION_USER;
      let role = 'none';
      for (const { name, setting } of rows) {
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
      if (db.isInTransaction()) await db.exec('ROLLBACK');
      await db.exec('DISCARD ALL');
      await db.query(SET_SQL, ['session_authorization', SESSION_USER]);
      for (const [name, value] of settings) await db.query(SET_SQL, [name, value]);
    },
  };
}
