/**
 * The wire multiplexer that shares one PGlite between processes (src/databases/pglite/wire-mux.ts):
 * whole transactions never interleave, a client that vanishes mid-transaction is rolled back and
 * does not block the others, and the socket is owner-only.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Gate, pgliteSessionSwitch, startWireMux, type WireMux } from '../src/databases/pglite/wire-mux.js';
import { poolSqlClient, storeError } from '../src/memory/store/sql-client.js';
import { inMemoryPgliteOptions } from './support/pglite-template.js';

describe('wire multiplexer over one PGlite', () => {
  let dir: string;
  let db: PGlite;
  let mux: WireMux;
  const connect = async () => {
    const client = new pg.Client({ host: join(dir, 'run'), user: 'postgres', database: 'postgres' });
    client.on('error', () => {});
    await client.connect();
    return client;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'sqlrecall-mux-'));
    db = new PGlite(inMemoryPgliteOptions());
    await db.waitReady;
    await db.query('CREATE TABLE t (v int)');
    mux = await startWireMux(db, new Gate(pgliteSessionSwitch(db)), join(dir, 'run'));
  }, 120_000);
  afterAll(async () => {
    await mux?.close();
    await db?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves on an owner-only Unix socket', () => {
    expect(statSync(join(dir, 'run')).mode & 0o777).toBe(0o700);
    expect(statSync(mux.socketPath).mode & 0o777).toBe(0o600);
    expect(statSync(mux.socketPath).isSocket()).toBe(true);
  });

  it('runs a whole transaction before another client, and rolls back a client that vanished', async () => {
    const a = await connect();
    const b = await connect();
    await a.query('BEGIN');
    await a.query('INSERT INTO t VALUES (1)');
    // b asks while a's transaction is open: it must wait for a's COMMIT, then see its row.
    const seen = b.query('SELECT count(*)::int AS n FROM t').then((r) => r.rows[0].n as number);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await a.query('INSERT INTO t VALUES (2)');
    await a.query('COMMIT');
    expect(await seen).toBe(2);

    // c leaves in the middle of a transaction holding an advisory lock: rolled back, lock released.
    const c = await connect();
    await c.query('BEGIN');
    await c.query('INSERT INTO t VALUES (3)');
    await c.query('SELECT pg_advisory_xact_lock(42)');
    const after = b.query('SELECT count(*)::int AS n FROM t').then((r) => r.rows[0].n as number);
    (c as unknown as { connection: { stream: { destroy(): void } } }).connection.stream.destroy();
    expect(await after).toBe(2);
    expect((await a.query('SELECT pg_try_advisory_lock(42) AS ok')).rows[0].ok).toBe(true);
    await a.query('SELECT pg_advisory_unlock(42)');
    await a.end();
    await b.end();
  }, 60_000);
});

describe('a socket client whose owner goes away', () => {
  it('a transaction whose owner closes between two statements fails with the connection error, never an unhandled error event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-mux-gone-'));
    const db = new PGlite(inMemoryPgliteOptions());
    try {
      await db.waitReady;
      const mux = await startWireMux(db, new Gate(pgliteSessionSwitch(db)), join(dir, 'run'));
      const pool = new pg.Pool({ host: join(dir, 'run'), user: 'postgres', database: 'postgres', max: 1 });
      const client = poolSqlClient(pool, 'pglite', 'pglite:test');
      const outcome = client.transaction(async (tx) => {
        await tx.query('SELECT 1');
        // The owner exits while this connection is checked out and idle (before the fix, pg
        // emitted 'error' on a client nobody listened to: the process crashed).
        await mux.close();
        await new Promise((resolve) => setTimeout(resolve, 300));
        return tx.query('SELECT 2');
      });
      await expect(outcome).rejects.toThrow(/Connection terminated|not queryable|ECONNRESET/);
      await pool.end().catch(() => undefined);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('the store failing mid-request because its owner went away is memory_unavailable (exit 6), not exit 1', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqlrecall-mux-gone-'));
    const db = new PGlite(inMemoryPgliteOptions());
    try {
      await db.waitReady;
      const mux = await startWireMux(db, new Gate(), join(dir, 'run'));
      const pool = new pg.Pool({ host: join(dir, 'run'), user: 'postgres', database: 'postgres', max: 1 });
      const client = poolSqlClient(pool, 'pglite', 'pglite:test');
      const failed = await client
        .transaction(async (tx) => {
          await tx.query('SELECT 1');
          await mux.close();
          await new Promise((resolve) => setTimeout(resolve, 300));
          return tx.query('SELECT 2');
        })
        .then(
          () => undefined,
          (error: unknown) => storeError(error, 'pglite:test'),
        );
      expect(failed?.code).toBe('memory_unavailable');
      expect(failed?.exitCode).toBe(6);
      expect(failed?.message).toMatch(/Cannot reach the memory store at pglite:test/);
      await pool.end().catch(() => undefined);
    } finally {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
