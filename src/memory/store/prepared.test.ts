import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inMemoryPgliteOptions } from '../../../test/support/pglite-template.js';
import { MAX_PREPARED_PER_INSTANCE, queryPrepared } from './prepared.js';

/** The statements this session holds prepared, by name. */
async function preparedNames(db: PGlite): Promise<string[]> {
  return (await db.query<{ name: string }>('SELECT name FROM pg_prepared_statements ORDER BY name')).rows.map(
    (r) => r.name,
  );
}

describe('queryPrepared: named statements on the owner PGlite', () => {
  let db: PGlite;

  beforeAll(async () => {
    db = new PGlite(inMemoryPgliteOptions({ extensions: { vector } }));
    await db.exec(`
      CREATE EXTENSION IF NOT EXISTS vector;
      CREATE TABLE t (id int PRIMARY KEY, name text, meta jsonb, at timestamptz, tags text[], v vector(3), n numeric, big bigint);
      INSERT INTO t VALUES
        (1, 'ann', '{"a": 1}', '2026-01-02T03:04:05Z', '{x,y}', '[1,0,0]', 1.5, 9007199254740993),
        (2, NULL, NULL, NULL, NULL, '[0,1,0]', NULL, NULL);
    `);
  });

  afterAll(async () => {
    await db?.close();
  });

  it('returns exactly what db.query returns, for every type, with null and JSON parameters', async () => {
    const cases: [string, unknown[]][] = [
      ['SELECT * FROM t WHERE id = $1', [1]],
      ['SELECT * FROM t WHERE id = $1', [2]],
      ['SELECT id, v <=> $1 AS distance FROM t ORDER BY v <=> $1, id', ['[1,0,0]']],
      ['SELECT $1::text IS NULL AS missing, coalesce($2::int, 7) AS fallback', [null, undefined]],
      ['SELECT meta @> $1 AS has FROM t WHERE id = $2', [{ a: 1 }, 1]],
      ['SELECT id FROM t WHERE tags && $1 ORDER BY id', [['y', 'z']]],
      ['WITH x AS (SELECT id FROM t WHERE id >= $1) SELECT count(*)::int AS n FROM x', [1]],
      ['SELECT at > $1 AS later FROM t WHERE id = 1', [new Date('2026-01-01T00:00:00Z')]],
    ];
    for (const [text, params] of cases) {
      const expected = (await db.query(text, params)).rows;
      // The second call runs the statement prepared by the first.
      expect(await queryPrepared(db, text, params), text).toEqual(expected);
      expect(await queryPrepared(db, text, params), text).toEqual(expected);
    }
    expect((await preparedNames(db)).filter((n) => n.startsWith('sqlrecall_'))).toHaveLength(7);
  });

  it('writes with RETURNING, and a statement error keeps its SQLSTATE', async () => {
    const insert = 'INSERT INTO t (id, name) VALUES ($1, $2) RETURNING id, name';
    expect(await queryPrepared(db, insert, [10, 'bo'])).toEqual([{ id: 10, name: 'bo' }]);
    expect(await queryPrepared(db, insert, [11, 'cy'])).toEqual([{ id: 11, name: 'cy' }]);
    await expect(queryPrepared(db, insert, [10, 'again'])).rejects.toMatchObject({ code: '23505' });
    // The session is usable after the error (the exchange ended with Sync).
    expect(await queryPrepared(db, 'SELECT name FROM t WHERE id = $1', [11])).toEqual([{ name: 'cy' }]);
    await queryPrepared(db, 'DELETE FROM t WHERE id >= $1', [10]);
  });

  it('a statement dropped from the session, or whose result type changed, runs again unprepared', async () => {
    const text = 'SELECT * FROM t WHERE id = $1';
    await queryPrepared(db, text, [1]);
    const [name] = (await preparedNames(db)).filter((n) => n.startsWith('sqlrecall_'));
    await db.exec('DEALLOCATE ALL'); // e.g. another process's client in the shared session
    expect(await queryPrepared(db, text, [1])).toEqual((await db.query(text, [1])).rows);
    expect(name).toBeDefined();

    const wide = 'SELECT * FROM t WHERE id = $1 AND $2::int = 0';
    await queryPrepared(db, wide, [1, 0]);
    await db.exec('ALTER TABLE t ADD COLUMN extra int DEFAULT 5');
    const rows = await queryPrepared<{ extra: number }>(db, wide, [1, 0]);
    expect(rows[0]?.extra).toBe(5);
    await db.exec('ALTER TABLE t DROP COLUMN extra');
  });

  it('after the session was reset for another client, the next call prepares its statement again at once', async () => {
    const text = 'SELECT name FROM t WHERE id = $1';
    expect(await queryPrepared(db, text, [1], 0)).toEqual([{ name: 'ann' }]);
    await db.exec('DISCARD ALL'); // what a shared session's switch to another client does
    expect(await preparedNames(db)).toEqual([]);
    expect(await queryPrepared(db, text, [1], 1)).toEqual([{ name: 'ann' }]);
    expect((await preparedNames(db)).filter((n) => n.startsWith('sqlrecall_'))).toHaveLength(1);
  });

  it('a parameter whose type cannot be inferred, unparameterized text and two statements run as before', async () => {
    // One call at a time: the caller holds the instance's gate, as the owner session does.
    const untyped = (await db.query('SELECT $1 AS x', ['a'])).rows;
    expect(await queryPrepared(db, 'SELECT $1 AS x', ['a'])).toEqual(untyped);
    await expect(db.query('SELECT $1 IS NULL AS missing', [1])).rejects.toMatchObject({ code: '42P18' });
    await expect(queryPrepared(db, 'SELECT $1 IS NULL AS missing', [1])).rejects.toMatchObject({
      code: '42P18',
    });
    expect(await queryPrepared(db, 'SELECT count(*)::int AS n FROM t', [])).toEqual([{ n: 2 }]);
    const before = await preparedNames(db);
    await queryPrepared(db, 'SELECT 1 AS one WHERE $1::int = 1; SELECT 2', [1]).catch(() => undefined);
    expect(await preparedNames(db)).toEqual(before);
  });

  it(`prepares at most ${MAX_PREPARED_PER_INSTANCE} statements per instance; more still answer`, async () => {
    for (let i = 0; i < MAX_PREPARED_PER_INSTANCE + 5; i += 1)
      expect(await queryPrepared(db, `SELECT $1::int + ${i} AS n`, [1])).toEqual([{ n: 1 + i }]);
    const ours = (await preparedNames(db)).filter((n) => n.startsWith('sqlrecall_'));
    expect(ours.length).toBeLessThanOrEqual(MAX_PREPARED_PER_INSTANCE);
  });
});
