/**
 * Every way PostgreSQL invokes a function, judged by what the server will execute
 * (`test/corpus/call-paths/call-paths.jsonl`, schema in `test/corpus/call-paths/schema.ts`): column
 * notation on scalars and rows, operators in ANY/ALL, IN, BETWEEN, CASE … WHEN, IS DISTINCT FROM,
 * NULLIF, ORDER BY, DISTINCT, GROUP BY and joins, explicit and implicit casts, domain CHECKs,
 * row-level-security policies, functions with SET clauses and other sessions' statement text. Each
 * hostile statement (it reaches a writing or file-reading function) is refused; each harmless twin
 * runs and returns its rows. Connections: PGlite (superuser), and on the server PostgreSQL (with
 * dblink, so the leak would outlive the read-only rollback) a superuser, the read-only role
 * `doctor` recommends, and that role without TEMP, where the server's analysis is unavailable and
 * the conservative name-based check must still refuse every hostile statement. Afterwards the
 * audit table is empty and the data unchanged.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatabaseConnector } from '../src/core/ports.js';
import { createPostgresConnector } from '../src/databases/postgres/connector.js';
import { withFunctionPolicy } from '../src/sql/function-policy.js';
import { guardSql } from '../src/sql/guard.js';
import { CALL_PATHS, type CallPath, callPathSchema } from './corpus/call-paths/corpus.js';
import { createTestDatabase, type TestDatabase } from './support/engines.js';
import { runCliInProcess } from './support/in-process-cli.js';
import { TEST_DATABASE_URL, withDatabase } from './support/server-db.js';

const RUN = { maxRows: 100, timeoutMs: 10_000 };

type Outcome = { refused: string; reason: string } | { rows: unknown[][] } | { error: string };

/** The production path: the guard, then the policy-wrapped connector. */
async function run(guarded: DatabaseConnector, sql: string): Promise<Outcome> {
  const verdict = await guardSql(sql);
  if (!verdict.ok) return { refused: verdict.rule, reason: verdict.reason };
  try {
    return { rows: (await guarded.execute(verdict.sql, RUN)).rows };
  } catch (error) {
    const e = error as { code?: string; details?: { rule?: string }; message: string };
    if (e.code !== 'guard_refused') return { error: e.message };
    return { refused: e.details?.rule ?? '', reason: e.message };
  }
}

interface Connection {
  name: string;
  /** The policy-wrapped connector of this connection. */
  guarded: DatabaseConnector;
  superuser: boolean;
  seesSessions: boolean;
  /** The server cannot analyse statements here (no TEMP): the conservative check answers. */
  fallback: boolean;
  /** Audit rows and item count, read with full rights. */
  state(): Promise<{ audit: number; items: number }>;
  close(): Promise<void>;
}

function expectOutcome(connection: Connection, record: CallPath, outcome: Outcome): void {
  const live =
    record.only === undefined ||
    (record.only === 'rls-active' && !connection.superuser) ||
    (record.only === 'sees-sessions' && connection.seesSessions);
  const label = `${connection.name}: ${record.id}: ${record.sql}`;
  if (record.verdict === 'refused' && live) {
    expect(outcome, label).toHaveProperty('refused');
    const refused = outcome as { refused: string; reason: string };
    expect(refused.reason, label).not.toMatch(/\n\s+at /);
    if (!connection.fallback && record.rule) expect(refused.refused, label).toBe(record.rule);
    return;
  }
  if (connection.fallback) {
    // The conservative check matches operators by name: the harmless `text = text` is refused
    // while a refused `public.=` exists (this also shows the connection really is in that mode).
    if (record.id === 'operator-text-equals-text') expect(outcome, label).toHaveProperty('refused');
    // It may refuse a harmless statement; it must never fail differently.
    if ('refused' in outcome) return;
  }
  if (record.verdict === 'accepted') {
    expect(outcome, label).toEqual({ rows: record.rows });
  } else {
    expect(outcome, label).not.toHaveProperty('refused');
  }
}

async function pgliteConnection(): Promise<{ connection: Connection; db: TestDatabase }> {
  const db = await createTestDatabase('pglite', 'guard_paths');
  await db.exec(callPathSchema('insert'));
  const guarded = withFunctionPolicy(db.connector);
  const state = async () => {
    const result = await db.connector.execute(
      'SELECT (SELECT count(*) FROM audit) AS audit, (SELECT count(*) FROM items) AS items',
      RUN,
    );
    return { audit: Number(result.rows[0]?.[0]), items: Number(result.rows[0]?.[1]) };
  };
  return {
    db,
    connection: {
      name: 'pglite superuser',
      guarded,
      superuser: true,
      seesSessions: true,
      fallback: false,
      state,
      close: () => db.dispose(),
    },
  };
}

describe('call paths on PGlite (superuser)', () => {
  let connection: Connection;
  beforeAll(async () => {
    connection = (await pgliteConnection()).connection;
  }, 60_000);
  afterAll(async () => {
    await connection?.close();
  });

  it('refuses every hostile call path and runs every harmless twin; nothing is written', async () => {
    const before = await connection.state();
    expect(before).toEqual({ audit: 0, items: 3 });
    for (const record of CALL_PATHS)
      expectOutcome(connection, record, await run(connection.guarded, record.sql));
    expect(await connection.state()).toEqual(before);
  }, 120_000);
});

describe.skipIf(!TEST_DATABASE_URL)('call paths on the server PostgreSQL (dblink)', () => {
  const suffix = Math.random().toString(16).slice(2, 10);
  const reader = `guard_reader_${suffix}`;
  const noTemp = `guard_notemp_${suffix}`;
  const database = `guard_paths_${suffix}`;
  let admin: pg.Client;
  const connections: Connection[] = [];

  const url = (role: string): string => {
    const parsed = new URL(withDatabase(TEST_DATABASE_URL!, database));
    parsed.username = role;
    parsed.password = '';
    return parsed.toString();
  };

  beforeAll(async () => {
    const root = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await root.connect();
    await root.query(`CREATE DATABASE ${database}`);
    await root.query(`DROP ROLE IF EXISTS ${reader}; DROP ROLE IF EXISTS ${noTemp}`);
    // The read-only role `doctor` recommends; the second one also lacks TEMP.
    for (const role of [reader, noTemp])
      await root.query(
        `CREATE ROLE ${role} LOGIN; ALTER ROLE ${role} SET default_transaction_read_only = on`,
      );
    await root.end();
    admin = new pg.Client({ connectionString: withDatabase(TEST_DATABASE_URL!, database) });
    await admin.connect();
    await admin.query('CREATE EXTENSION dblink');
    await admin.query(callPathSchema('dblink'));
    await admin.query(`REVOKE TEMP ON DATABASE ${database} FROM PUBLIC`);
    for (const role of [reader, noTemp])
      await admin.query(
        `GRANT CONNECT ON DATABASE ${database} TO ${role}; GRANT USAGE ON SCHEMA public TO ${role};
         GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};`,
      );
    await admin.query(`GRANT TEMP ON DATABASE ${database} TO ${reader}`);
    const state = async () => {
      const result = await admin.query(
        'SELECT (SELECT count(*) FROM audit)::int AS audit, (SELECT count(*) FROM items)::int AS items',
      );
      return result.rows[0] as { audit: number; items: number };
    };
    for (const [name, role, superuser, fallback] of [
      ['server superuser', new URL(TEST_DATABASE_URL!).username || 'postgres', true, false],
      ['server read-only role', reader, false, false],
      ['server read-only role without TEMP', noTemp, false, true],
    ] as const) {
      const connector = createPostgresConnector({ url: url(role) });
      connections.push({
        name,
        guarded: withFunctionPolicy(connector),
        superuser,
        seesSessions: superuser,
        fallback,
        state,
        close: () => connector.close(),
      });
    }
  }, 60_000);

  afterAll(async () => {
    for (const connection of connections) await connection.close().catch(() => {});
    await admin?.end().catch(() => {});
    const root = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await root.connect();
    await root.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => {});
    await root.query(`DROP ROLE IF EXISTS ${reader}; DROP ROLE IF EXISTS ${noTemp}`).catch(() => {});
    await root.end();
  });

  it('the leak is real: called directly it writes through dblink past the read-only transaction', async () => {
    const raw = createPostgresConnector({ url: url(new URL(TEST_DATABASE_URL!).username || 'postgres') });
    try {
      await raw.execute("SELECT leak('proof')", RUN);
    } finally {
      await raw.close();
    }
    expect((await admin.query('SELECT count(*)::int AS n FROM audit')).rows[0].n).toBe(1);
    await admin.query('DELETE FROM audit');
  });

  it.each([0, 1, 2])(
    'connection %i refuses every hostile call path and runs every harmless twin; nothing is written',
    async (index) => {
      const connection = connections[index]!;
      const before = await connection.state();
      expect(before).toEqual({ audit: 0, items: 3 });
      for (const record of CALL_PATHS)
        expectOutcome(connection, record, await run(connection.guarded, record.sql));
      // dblink itself by column notation
      const direct = await run(
        connection.guarded,
        "SELECT ('INSERT INTO audit VALUES (''x'')'::text).dblink_exec",
      );
      expect(direct, connection.name).toHaveProperty('refused');
      expect(await connection.state()).toEqual(before);
    },
    120_000,
  );

  it('with an enabled event trigger the analysis is not used (the trigger never fires) and the name check refuses', async () => {
    await admin.query(`CREATE FUNCTION on_ddl() RETURNS event_trigger LANGUAGE plpgsql AS $$
                         BEGIN PERFORM leak('event trigger'); END $$;
                       CREATE EVENT TRIGGER on_ddl ON ddl_command_end EXECUTE FUNCTION on_ddl()`);
    try {
      // As the superuser: dblink refuses password-less connections to other roles.
      const connector = createPostgresConnector({
        url: url(new URL(TEST_DATABASE_URL!).username || 'postgres'),
      });
      const guarded = withFunctionPolicy(connector);
      try {
        expect(await run(guarded, "SELECT ('/etc/hostname'::text).pg_read_file")).toHaveProperty('refused');
        expect(await run(guarded, 'SELECT c.item_leak FROM items c')).toHaveProperty('refused');
      } finally {
        await connector.close();
      }
      expect((await admin.query('SELECT count(*)::int AS n FROM audit')).rows[0].n).toBe(0);
    } finally {
      await admin.query('DROP EVENT TRIGGER on_ddl');
    }
  });

  it('`sqlrecall sql` refuses a file read by column notation (exit 3)', async () => {
    const cli = await runCliInProcess([
      'sql',
      "SELECT ('/etc/hostname'::text).pg_read_file",
      '--db',
      url(reader),
    ]);
    expect(cli.code, cli.stderr).toBe(3);
    expect(cli.stderr).toMatch(/pg_read_file/);
  });
});

describe('the server analysis is optional', () => {
  it('a connector without it still refuses column notation by name (PGlite, no probe)', async () => {
    const { connection, db } = await pgliteConnection();
    try {
      const { probe: _probe, ...withoutProbe } = db.connector;
      const guarded = withFunctionPolicy(withoutProbe as DatabaseConnector);
      for (const sql of [
        "SELECT ('/etc/hostname'::text).pg_read_file",
        'SELECT c.item_leak FROM items c',
        'SELECT 5::watched',
      ])
        expect(await run(guarded, sql), sql).toHaveProperty('refused');
      expect(await connection.state()).toEqual({ audit: 0, items: 3 });
    } finally {
      await connection.close();
    }
  }, 60_000);
});
