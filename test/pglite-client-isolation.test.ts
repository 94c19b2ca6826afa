/**
 * Every client of a shared embedded database gets a clean session (src/databases/pglite/
 * session-gate.ts, wire-mux.ts): what the real `psql` or `pg_dump` SETs, creates, prepares, listens
 * to, locks or leaves open on the owner's socket never reaches the owner's next statement (or
 * another client's), and sqlrecall's own queries stay right. The owner runs in this process (the
 * connector on a `pglite:` directory, as `chat` or `hold` runs it); the foreign clients are real
 * client processes.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createPgliteConnector } from '../src/databases/pglite/connector.js';
import { Gate, pgliteSessionSwitch } from '../src/databases/pglite/session-gate.js';
import {
  acquireSharedPglite,
  type OwnedPglite,
  openPglite,
  runDirOf,
} from '../src/databases/pglite/sharing.js';
import { startWireMux } from '../src/databases/pglite/wire-mux.js';
import { freshPgliteDataDir, inMemoryPgliteOptions } from './support/pglite-template.js';
import { hasPsql, pgDump, psql, psqlSession } from './support/psql.js';

const OPTIONS = { timeoutMs: 10_000, maxRows: 100 };

/** The owner's session as the owner sees it on its own turn. */
const STATE_SQL = `SELECT current_setting('search_path') AS search_path, current_setting('TimeZone') AS time_zone,
  current_user::text AS "user", session_user::text AS session_user,
  (SELECT count(*)::int FROM pg_prepared_statements) AS prepared,
  (SELECT count(*)::int FROM pg_cursors WHERE name <> '') AS cursors,
  (SELECT count(*)::int FROM pg_listening_channels()) AS listening,
  (SELECT count(*)::int FROM pg_locks WHERE locktype = 'advisory') AS advisory_locks,
  (SELECT count(*)::int FROM pg_class WHERE relpersistence = 't') AS temporary_relations,
  pg_current_xact_id_if_assigned() IS NULL AS no_transaction`;

const CLEAN = {
  search_path: 'public',
  time_zone: 'UTC',
  user: 'postgres',
  session_user: 'postgres',
  prepared: 0,
  cursors: 0,
  listening: 0,
  advisory_locks: 0,
  temporary_relations: 0,
  no_transaction: true,
};

/** Whether `promise` is still pending after `ms`. */
async function stillPending(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const pending = Symbol('pending');
  const winner = await Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise((resolve) => setTimeout(() => resolve(pending), ms)),
  ]);
  return winner === pending;
}

describe.runIf(hasPsql() || process.env.CI)('clients of a shared embedded database are isolated', () => {
  let dir: string;
  let socket: string;
  let connector: DatabaseConnector;
  let owned: OwnedPglite;
  const ownerState = () => owned.gate.run(async () => (await owned.db.query(STATE_SQL)).rows[0]);
  const count = async () => (await connector.execute('SELECT count(*) AS n FROM items', OPTIONS)).rows;

  beforeAll(async () => {
    dir = freshPgliteDataDir('sqlrecall-isolation-');
    const db = await openPglite(dir, false);
    await db.exec(
      "CREATE TABLE items (id int PRIMARY KEY, name text); INSERT INTO items VALUES (1, 'a'), (2, 'b'), (3, 'c'); CREATE ROLE intruder;",
    );
    await db.close();
    // This process owns the directory and serves it, as a running `chat` or `hold` does.
    connector = createPgliteConnector({ dataDir: dir });
    await connector.ping();
    const got = await acquireSharedPglite<never>(dir, {
      connect: () => Promise.reject(new Error('this process owns the directory')),
      unavailable: () => new Error('unavailable'),
    });
    if (got.kind !== 'owner') throw new Error('expected to own the directory');
    owned = got;
    socket = runDirOf(dir);
  }, 120_000);

  afterAll(async () => {
    await owned?.release();
    await connector?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('what a psql session SETs and creates never reaches the owner; the client gets its settings back on its next turn', async () => {
    const session = psqlSession(socket);
    try {
      await session.send(
        [
          'SET search_path = pg_catalog;',
          "SET TimeZone = 'Asia/Tokyo';",
          "SELECT set_config('DateStyle', 'German', false);",
          'CREATE TEMP TABLE items (id int);', // would shadow public.items for an unqualified name
          'PREPARE p AS SELECT 1;',
          'DECLARE c CURSOR WITH HOLD FOR SELECT 1;',
          'LISTEN somewhere;',
          'SELECT pg_advisory_lock(7);',
          'SET ROLE intruder;',
        ].join('\n'),
      );
      expect(await ownerState()).toEqual(CLEAN);
      // sqlrecall's own statements on the owner: the real table, read as before.
      expect(await count()).toEqual([['3']]);
      expect((await connector.introspect()).tables.map((t) => t.name)).toEqual(['items']);

      // The client's own settings (and role) come back on its turn; its temporary table, prepared
      // statement, cursor, LISTEN and lock did not outlive the owner's turn.
      const back = await session.send(
        "SELECT current_setting('search_path'), current_setting('TimeZone'), current_user, to_regclass('pg_temp.items') IS NULL, (SELECT count(*) FROM pg_prepared_statements), (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory');",
      );
      expect(back).toBe('pg_catalog|Asia/Tokyo|intruder|t|0|0');
    } finally {
      await session.quit();
    }
    expect(await ownerState()).toEqual(CLEAN);
  }, 60_000);

  it('SET SESSION AUTHORIZATION by a client is undone for the owner (PGlite does not reset the session user by itself)', async () => {
    const result = await psql(socket, 'SET SESSION AUTHORIZATION intruder; SELECT session_user');
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout.trim()).toBe('intruder');
    expect(await ownerState()).toEqual(CLEAN);
    expect(await count()).toEqual([['3']]);
  }, 60_000);

  it('pg_dump (which empties the search path first) leaves the owner as it was', async () => {
    const dump = await pgDump(socket);
    // pg_dump 15 refuses a newer server after setting its session up: either way nothing stays.
    expect(dump.code === 0 || /version mismatch/.test(dump.stderr), dump.stderr).toBe(true);
    expect(await ownerState()).toEqual(CLEAN);
    expect(await count()).toEqual([['3']]);
    expect((await connector.introspect()).tables.map((t) => t.name)).toEqual(['items']);
  }, 60_000);

  it('a client in an open transaction makes the owner wait (never run inside it); one that disconnects mid-transaction is rolled back', async () => {
    const session = psqlSession(socket);
    try {
      await session.send("BEGIN; INSERT INTO items VALUES (10, 'uncommitted');");
      const waiting = count();
      expect(await stillPending(waiting, 500)).toBe(true);
      await session.send('ROLLBACK;');
      // Had the owner's statement run inside the client's transaction, it would have counted 4.
      expect(await waiting).toEqual([['3']]);

      await session.send(
        "BEGIN; INSERT INTO items VALUES (11, 'uncommitted'); SELECT pg_advisory_xact_lock(9);",
      );
      const next = count();
      expect(await stillPending(next, 300)).toBe(true);
      await session.kill(); // no Terminate, no ROLLBACK: the connection just drops
      expect(await next).toEqual([['3']]);
    } finally {
      await session.kill();
    }
    expect(await ownerState()).toEqual(CLEAN);
    const other = await psql(socket, 'SELECT count(*) FROM items; SELECT pg_try_advisory_lock(9)');
    expect(other.stdout.trim().split('\n')).toEqual(['3', 't']);
  }, 60_000);

  it('startup options state a client session settings; options PostgreSQL would refuse are refused, nothing changed', async () => {
    const own = await psql(socket, "SHOW search_path; SHOW work_mem; SELECT current_setting('TimeZone')", {
      PGOPTIONS: '-c search_path=pg_catalog --work-mem=8MB -cTimeZone=Europe/Berlin',
    });
    expect(own.code, own.stderr).toBe(0);
    expect(own.stdout.trim().split('\n')).toEqual(['pg_catalog', '8MB', 'Europe/Berlin']);
    const refused = await psql(socket, 'SELECT 1', { PGOPTIONS: '-c no_such_setting_here=1' });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/no_such_setting_here/);
    expect(await ownerState()).toEqual(CLEAN);
  }, 60_000);
});

describe('a session switch between parties (no client tools needed)', () => {
  it('a client idle in its transaction while the owner waits is disconnected and rolled back', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-idle-'));
    const db = new PGlite(inMemoryPgliteOptions());
    try {
      await db.waitReady;
      await db.exec('CREATE TABLE t (v int)');
      const gate = new Gate(pgliteSessionSwitch(db));
      const mux = await startWireMux(db, gate, join(dir, 'run'), { idleInTransactionMs: 400 });
      const client = new pg.Client({ host: join(dir, 'run'), user: 'postgres', database: 'postgres' });
      const lost = new Promise<Error>((resolve) => client.on('error', resolve));
      await client.connect();
      await client.query('BEGIN');
      await client.query('INSERT INTO t VALUES (1)');
      const started = Date.now();
      const seen = await gate.run(
        async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM t')).rows[0]?.n,
      );
      expect(seen).toBe(0);
      expect(Date.now() - started).toBeGreaterThanOrEqual(350);
      expect(Date.now() - started).toBeLessThan(5_000);
      expect((await lost).message).toMatch(/idle-in-transaction/);
      await client.end().catch(() => undefined);
      await mux.close();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the owner states its own settings on each turn, whatever the database default; a socket client through its connection options', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-owner-settings-'));
    // A data directory whose default search path is not the one the owner relies on.
    const db = new PGlite(
      inMemoryPgliteOptions({ startParams: [...PGlite.defaultStartParams, '-c', 'search_path=pg_catalog'] }),
    );
    try {
      await db.waitReady;
      const gate = new Gate(pgliteSessionSwitch(db), [['search_path', 'public']]);
      const path = () =>
        gate.run(
          async () =>
            (await db.query<{ p: string }>("SELECT current_setting('search_path') AS p")).rows[0]?.p,
        );
      expect(await path()).toBe('public');
      const mux = await startWireMux(db, gate, join(dir, 'run'));
      const plain = new pg.Client({ host: join(dir, 'run'), user: 'postgres', database: 'postgres' });
      const stated = new pg.Client({
        host: join(dir, 'run'),
        user: 'postgres',
        database: 'postgres',
        options: '-c search_path=public',
      });
      await plain.connect();
      await stated.connect();
      expect((await plain.query('SHOW search_path')).rows[0].search_path).toBe('pg_catalog');
      expect((await stated.query('SHOW search_path')).rows[0].search_path).toBe('public');
      await plain.query("SET search_path = 'elsewhere'");
      expect(await path()).toBe('public');
      expect((await stated.query('SHOW search_path')).rows[0].search_path).toBe('public');
      expect((await plain.query('SHOW search_path')).rows[0].search_path).toBe('elsewhere');
      await plain.end();
      await stated.end();
      await mux.close();
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
