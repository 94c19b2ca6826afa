/**
 * The one migration runner (src/databases/postgres/migrate.ts) and the four series it runs: the
 * memory store's, the user directory's, the schema index's and the audit trail's. On embedded PGlite always, and on
 * the server PostgreSQL of TEST_DATABASE_URL (a temporary database) when it offers pgvector:
 * - from every earlier version of each series (a database migrated to 1..k with rows written at
 *   that version), the runner applies exactly the missing steps, the schema equals a fresh one and
 *   the rows are still there;
 * - a database written by the code before the runner was shared (the ledger without a component,
 *   the user and schema-index tables made by their own DDL) is adopted by the real openers, with its
 *   rows and the dates of its recorded steps;
 * - concurrent runners apply each step once (also on the shared embedded store's socket);
 * - a failing step leaves nothing behind; malformed series are refused.
 */
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashToken, newToken, USERS_SERIES, UserDirectory } from '../src/app/users.js';
import { AUDIT_SERIES, AuditStore } from '../src/audit/store.js';
import {
  checkSeries,
  LEGACY_COMPONENT,
  type MigrationSeries,
  runMigrations,
} from '../src/databases/postgres/migrate.js';
import { PgSchemaIndexStore, SCHEMA_INDEX_SERIES } from '../src/linking/pg-store.js';
import { createMemoryStore } from '../src/memory/store/index.js';
import { MEMORY_SERIES, migrate } from '../src/memory/store/migrations.js';
import { scopeRef } from '../src/memory/store/scope.js';
import { createPgliteClient } from '../src/memory/store/shared-pglite.js';
import { createPostgresClient, type SqlClient, type SqlSession } from '../src/memory/store/sql-client.js';
import { createStoreHarness, SERVER_STORE_SKIP, type StoreHarness } from './support/memory-store.js';
import { tempDir } from './support/temp-dir.js';

const SERIES = [MEMORY_SERIES, USERS_SERIES, SCHEMA_INDEX_SERIES, AUDIT_SERIES] as const;

/** The user-table DDL of the first multi-user release (users and tokens, no archives), verbatim. */
const OLD_USERS_DDL_FIRST = [
  `CREATE TABLE IF NOT EXISTS sqlrecall_users (
     name text PRIMARY KEY,
     team text,
     team_role text NOT NULL DEFAULT 'member' CHECK (team_role IN ('member', 'admin')),
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
  `CREATE TABLE IF NOT EXISTS sqlrecall_tokens (
     token_hash text PRIMARY KEY,
     user_name text NOT NULL REFERENCES sqlrecall_users (name) ON DELETE CASCADE,
     created_at timestamptz NOT NULL DEFAULT now()
   )`,
];
/** The user-table DDL run at every start before the shared runner (with archives), verbatim. */
const OLD_USERS_DDL_LAST = [
  ...OLD_USERS_DDL_FIRST,
  `CREATE TABLE IF NOT EXISTS sqlrecall_user_archives (
     archive_scope text PRIMARY KEY,
     user_name text NOT NULL,
     user_key text NOT NULL,
     reason text NOT NULL CHECK (reason IN ('removed', 'leftover')),
     archived_at timestamptz NOT NULL DEFAULT clock_timestamp(),
     restored_at timestamptz
   )`,
];
/** The schema index's DDL run at every start before the shared runner, verbatim. */
const OLD_SCHEMA_INDEX_DDL = [
  'CREATE EXTENSION IF NOT EXISTS vector',
  `CREATE TABLE IF NOT EXISTS schema_index (
  fingerprint text NOT NULL,
  table_key text NOT NULL,
  catalog_hash text NOT NULL,
  document text NOT NULL,
  embedding vector,
  embedding_model text,
  value_hints jsonb NOT NULL DEFAULT '[]'::jsonb,
  layout_version integer NOT NULL DEFAULT 1,
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (fingerprint, table_key)
)`,
];
/** The memory store's ledger before it had a component, verbatim. */
const OLD_LEDGER_DDL = `CREATE TABLE IF NOT EXISTS sqlrecall_migrations (
        version integer PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT clock_timestamp())`;

/** Builds a database as the memory store's old runner left it at `version` (old ledger, memory steps 1..version). */
async function oldMemoryStore(client: SqlClient, version: number): Promise<void> {
  await client.transaction(async (tx) => {
    await tx.query(OLD_LEDGER_DDL);
    for (const migration of MEMORY_SERIES.migrations.slice(0, version)) {
      for (const statement of migration.statements) await tx.query(statement);
      await tx.query('INSERT INTO sqlrecall_migrations (version) VALUES ($1)', [migration.version]);
    }
  });
}

/** Empties the database (every object of ours lives in `public`, the vector extension too). */
async function reset(client: SqlClient): Promise<void> {
  await client.query('DROP SCHEMA public CASCADE');
  await client.query('CREATE SCHEMA public');
}

/** Columns, constraints, indexes (with options) and extensions of the current schema, sorted by name. */
async function snapshot(session: SqlSession): Promise<unknown> {
  const columns = await session.query(
    `SELECT c.relname AS table, a.attname AS column, format_type(a.atttypid, a.atttypmod) AS type,
            a.attnotnull AS not_null, a.attidentity AS identity, pg_get_expr(d.adbin, d.adrelid) AS default
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
       JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
       LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
      WHERE c.relkind = 'r' ORDER BY 1, 2`,
  );
  const constraints = await session.query(
    `SELECT t.relname AS table, k.conname AS name, pg_get_constraintdef(k.oid) AS definition
       FROM pg_constraint k JOIN pg_class t ON t.oid = k.conrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      ORDER BY 1, 2`,
  );
  const indexes = await session.query(
    `SELECT t.relname AS table, i.relname AS name, pg_get_indexdef(i.oid) AS definition,
            array_to_string(i.reloptions, ',') AS options
       FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
       JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = current_schema()
      ORDER BY 1, 2`,
  );
  const extensions = await session.query('SELECT extname FROM pg_extension ORDER BY 1');
  return { columns, constraints, indexes, extensions };
}

/** The ledger as (component, version) pairs, sorted. */
async function ledger(session: SqlSession): Promise<string[]> {
  const rows = await session.query<{ component: string; version: number }>(
    'SELECT component, version FROM sqlrecall_migrations ORDER BY component, version',
  );
  return rows.map((row) => `${row.component}:${row.version}`);
}

function versions(series: MigrationSeries, from = 1): number[] {
  return series.migrations.map((m) => m.version).filter((v) => v >= from);
}

/**
 * Representative rows of one series written at version `k` (using the columns that exist then),
 * and the check that they are all there after the upgrade, with the later columns at their
 * defaults (or as a later data step set them).
 */
interface Fixture {
  write(tx: SqlSession, k: number): Promise<void>;
  /** `opened`: the component's own opener ran after the runner (it may fill derived columns). */
  check(client: SqlClient, k: number, opened?: boolean): Promise<void>;
}

const ANN = scopeRef({ user: 'ann' });
const MEMORY_ID = randomUUID();
const PENDING_ID = randomUUID();

const memoryFixture: Fixture = {
  async write(tx, k) {
    if (k < 1) return;
    const scope = [ANN.key, ANN.id];
    await tx.query(
      "INSERT INTO sqlrecall_memory_meta (key, value) VALUES ('embedding_model', 'hash-3'), ('embedding_dimensions', '3')",
    );
    await tx.query(
      `INSERT INTO sqlrecall_memories (id, scope_key, scope_user, kind, text, sql, tables, columns, embedding,
         embedding_model, content_hash) VALUES ($1, $2, $3, 'term', 'revenue means net sales', 'net_sales > 0',
         '{public.orders}', '{public.orders.net_sales}', '[1,0,0]', 'hash-3', 'h1')`,
      [MEMORY_ID, ...scope],
    );
    // An expiring memory stored before the typed day was kept (step 8): only the instant.
    await tx.query("UPDATE sqlrecall_memories SET expires_at = '2100-01-01T08:00:00Z' WHERE id = $1", [
      MEMORY_ID,
    ]);
    if (k >= 2) await tx.query('UPDATE sqlrecall_memories SET pinned = true WHERE id = $1', [MEMORY_ID]);
    if (k >= 3)
      await tx.query("UPDATE sqlrecall_memories SET term_words = '{revenu}' WHERE id = $1", [MEMORY_ID]);
    if (k >= 7)
      await tx.query(
        "UPDATE sqlrecall_memories SET origin = 'taught', origin_words = 'revenue is net', last_applied_at = now() WHERE id = $1",
        [MEMORY_ID],
      );
    await tx.query(
      `INSERT INTO sqlrecall_memory_history (memory_id, scope_key, scope_user, action, new_text)
       VALUES ($1, $2, $3, 'ADD', 'revenue means net sales')`,
      [MEMORY_ID, ...scope],
    );
    if (k >= 4) await tx.query("UPDATE sqlrecall_memory_history SET new_sql = 'net_sales > 0'");
    await tx.query(
      "INSERT INTO sqlrecall_conversations (id, scope_key, scope_user, summary) VALUES ('c1', $1, $2, 'orders')",
      scope,
    );
    if (k >= 4) await tx.query("UPDATE sqlrecall_conversations SET title = 'Orders by month'");
    await tx.query(
      `INSERT INTO sqlrecall_conversation_turns (conversation_id, scope_key, scope_user, question, sql, row_count)
       VALUES ('c1', $1, $2, 'orders per month?', 'SELECT 1', 12)`,
      scope,
    );
    if (k >= 7)
      await tx.query(`UPDATE sqlrecall_conversation_turns SET applied_memories = '[{"id":"x"}]'::jsonb`);
    await tx.query(
      `INSERT INTO sqlrecall_pending_writes (id, scope_key, scope_user, payload) VALUES ($1, $2, $3, '{"text":"later"}')`,
      [PENDING_ID, ...scope],
    );
    await tx.query(
      'INSERT INTO sqlrecall_memory_settings (scope_key, scope_user, enabled) VALUES ($1, $2, false)',
      scope,
    );
  },
  async check(client, k, opened = false) {
    const memories = await client.query(
      `SELECT id, text, sql, tables, status, pinned, term_words, origin, embedding::text AS embedding
         FROM sqlrecall_memories`,
    );
    if (k < 1) {
      expect(memories).toEqual([]);
      return;
    }
    expect(memories).toEqual([
      {
        id: MEMORY_ID,
        text: 'revenue means net sales',
        sql: 'net_sales > 0',
        tables: ['public.orders'],
        status: 'active',
        pinned: k >= 2,
        // Step 6 clears the words stemmed before it; opening the store computes them again from
        // the text with the shared stemmer.
        term_words: k >= 6 ? ['revenu'] : opened ? ['revenue'] : null,
        origin: k >= 7 ? 'taught' : null,
        embedding: '[1,0,0]',
      },
    ]);
    // Step 8 adds the typed day beside the instant; a row from before has none (NULL): it is shown
    // as the day of the instant, and the instant is kept as it was.
    expect(
      await client.query('SELECT expires_at::text AS expires_at, expires_on FROM sqlrecall_memories'),
    ).toEqual([{ expires_at: expect.stringMatching(/^2100-01-01 08:00:00\+00/), expires_on: null }]);
    expect(
      await client.query('SELECT action, new_text, new_sql, pinned FROM sqlrecall_memory_history'),
    ).toEqual([
      {
        action: 'ADD',
        new_text: 'revenue means net sales',
        new_sql: k >= 4 ? 'net_sales > 0' : null,
        pinned: null,
      },
    ]);
    expect(await client.query('SELECT id, summary, title FROM sqlrecall_conversations')).toEqual([
      { id: 'c1', summary: 'orders', title: k >= 4 ? 'Orders by month' : null },
    ]);
    expect(
      await client.query(
        'SELECT question, row_count::int AS row_count, applied_memories FROM sqlrecall_conversation_turns',
      ),
    ).toEqual([
      { question: 'orders per month?', row_count: 12, applied_memories: k >= 7 ? [{ id: 'x' }] : null },
    ]);
    expect(await client.query('SELECT id, status, payload FROM sqlrecall_pending_writes')).toEqual([
      { id: PENDING_ID, status: 'pending', payload: { text: 'later' } },
    ]);
    expect(await client.query('SELECT scope_user, enabled FROM sqlrecall_memory_settings')).toEqual([
      { scope_user: 'ann', enabled: false },
    ]);
    expect(await client.query('SELECT key, value FROM sqlrecall_memory_meta ORDER BY key')).toEqual([
      { key: 'embedding_dimensions', value: '3' },
      { key: 'embedding_model', value: 'hash-3' },
    ]);
  },
};

const TOKEN = newToken();

const usersFixture: Fixture = {
  async write(tx, k) {
    if (k < 1) return;
    await tx.query("INSERT INTO sqlrecall_users (name, team, team_role) VALUES ('ann', 'sales', 'admin')");
    await tx.query("INSERT INTO sqlrecall_tokens (token_hash, user_name) VALUES ($1, 'ann')", [
      hashToken(TOKEN),
    ]);
    if (k >= 2)
      await tx.query(
        `INSERT INTO sqlrecall_user_archives (archive_scope, user_name, user_key, reason)
         VALUES ('archived:x:bob', 'bob', 'bob', 'removed')`,
      );
  },
  async check(client, k) {
    const users = new UserDirectory(client);
    if (k < 1) {
      expect(await users.list()).toEqual([]);
      expect(await users.authenticate(TOKEN)).toBeNull();
      return;
    }
    // The directory itself reads the upgraded tables: the old token still signs in.
    expect(await users.authenticate(TOKEN)).toEqual({ user: 'ann', team: 'sales', teamRole: 'admin' });
    expect((await users.list()).map((u) => [u.user, u.tokens])).toEqual([['ann', 1]]);
    expect(await client.query('SELECT archive_scope, reason FROM sqlrecall_user_archives')).toEqual(
      k >= 2 ? [{ archive_scope: 'archived:x:bob', reason: 'removed' }] : [],
    );
    // Users from before administrators existed are not administrators.
    expect(await client.query('SELECT name, is_admin FROM sqlrecall_users')).toEqual([
      { name: 'ann', is_admin: false },
    ]);
  },
};

const auditFixture: Fixture = {
  async write() {},
  async check(client) {
    const store = new AuditStore(client);
    expect(await store.list()).toEqual([]);
  },
};

const schemaIndexFixture: Fixture = {
  async write(tx, k) {
    if (k < 1) return;
    await tx.query(
      `INSERT INTO schema_index (fingerprint, table_key, catalog_hash, document, embedding, embedding_model)
       VALUES ('fp', 'public.orders', 'h', 'table orders', '[0.5,0.5,0]', 'hash-3')`,
    );
  },
  async check(client, k) {
    const entries = await new PgSchemaIndexStore(client).load('fp', { withEmbeddings: true });
    expect(entries).toEqual(
      k >= 1
        ? [
            {
              tableKey: 'public.orders',
              catalogHash: 'h',
              document: 'table orders',
              embedding: [0.5, 0.5, 0],
              embeddingModel: 'hash-3',
              valueHints: [],
            },
          ]
        : [],
    );
  },
};

const FIXTURES = new Map<string, Fixture>([
  [MEMORY_SERIES.component, memoryFixture],
  [USERS_SERIES.component, usersFixture],
  [SCHEMA_INDEX_SERIES.component, schemaIndexFixture],
  [AUDIT_SERIES.component, auditFixture],
]);

type Engine = 'pglite' | 'server';
const ENGINES: Engine[] = SERVER_STORE_SKIP ? ['pglite'] : ['pglite', 'server'];

describe.each(ENGINES)('migrations on %s', (engine) => {
  let harness: StoreHarness | undefined;
  let client: SqlClient;
  /** Schema of a fresh database per series (that series only), and with every series. */
  const fresh = new Map<string, unknown>();

  beforeAll(async () => {
    if (engine === 'server') {
      harness = await createStoreHarness('server');
      client = createPostgresClient(harness.url!);
    } else {
      client = createPgliteClient(undefined);
    }
    for (const series of SERIES) {
      await reset(client);
      expect(await runMigrations(client, series)).toEqual(versions(series));
      fresh.set(series.component, await snapshot(client));
    }
    await reset(client);
    for (const series of SERIES) await runMigrations(client, series);
    fresh.set('all', await snapshot(client));
  });
  afterAll(async () => {
    await client?.close();
    await harness?.dispose();
  });

  const cases = SERIES.flatMap((series) =>
    series.migrations.map((_, k) => ({ component: series.component, series, k })),
  );
  it.each(cases)(
    '$component from version $k: applies the rest, schema as new, rows kept',
    async ({ series, k }) => {
      const fixture = FIXTURES.get(series.component)!;
      await reset(client);
      const upTo: MigrationSeries = {
        component: series.component,
        migrations: series.migrations.slice(0, k),
      };
      expect(await runMigrations(client, upTo)).toEqual(versions(upTo));
      await client.transaction((tx) => fixture.write(tx, k));

      expect(await runMigrations(client, series)).toEqual(versions(series, k + 1));
      expect(await snapshot(client)).toEqual(fresh.get(series.component));
      expect(await ledger(client)).toEqual(versions(series).map((v) => `${series.component}:${v}`));
      await fixture.check(client, k);
      expect(await runMigrations(client, series)).toEqual([]);
    },
  );

  it.each([
    { memory: 7, users: OLD_USERS_DDL_LAST, label: 'last release' },
    { memory: 4, users: OLD_USERS_DDL_FIRST, label: 'memory at 4, users without archives' },
  ])(
    'a database written by the old code ($label) is adopted by the openers, rows and dates kept',
    async (old) => {
      await reset(client);
      await oldMemoryStore(client, old.memory);
      for (const statement of old.users) await client.query(statement);
      for (const statement of OLD_SCHEMA_INDEX_DDL) await client.query(statement);
      await client.transaction(async (tx) => {
        await memoryFixture.write(tx, old.memory);
        await usersFixture.write(tx, old.users === OLD_USERS_DDL_LAST ? 2 : 1);
        await schemaIndexFixture.write(tx, 1);
      });
      const before = await client.query<{ version: number; applied_at: string }>(
        'SELECT version, applied_at::text AS applied_at FROM sqlrecall_migrations ORDER BY version',
      );
      expect(before.map((row) => row.version)).toEqual(versions(MEMORY_SERIES).slice(0, old.memory));

      // Each component's own opener runs its series.
      const store = createMemoryStore({ client });
      await store.sql();
      await new UserDirectory(client).init();
      await new PgSchemaIndexStore(client).init();
      await new AuditStore(client).init();

      expect(await snapshot(client)).toEqual(fresh.get('all'));
      expect(await ledger(client)).toEqual(
        SERIES.flatMap((series) => versions(series).map((v) => `${series.component}:${v}`)).sort(),
      );
      // The old rows are the memory store's, with the dates they were applied.
      const after = await client.query<{ version: number; applied_at: string }>(
        `SELECT version, applied_at::text AS applied_at FROM sqlrecall_migrations
        WHERE component = $1 AND version <= $2 ORDER BY version`,
        [LEGACY_COMPONENT, old.memory],
      );
      expect(after).toEqual(before);
      await memoryFixture.check(client, old.memory, true);
      await usersFixture.check(client, old.users === OLD_USERS_DDL_LAST ? 2 : 1);
      await schemaIndexFixture.check(client, 1);
      // Opening again changes nothing.
      expect(await migrate(client)).toEqual([]);
      expect(await runMigrations(client, USERS_SERIES)).toEqual([]);
      expect(await runMigrations(client, SCHEMA_INDEX_SERIES)).toEqual([]);
    },
  );

  it('leaves versions it does not know (a newer sqlrecall) as they are', async () => {
    await reset(client);
    await runMigrations(client, USERS_SERIES);
    const next = USERS_SERIES.migrations.length + 1;
    await client.query(
      "INSERT INTO sqlrecall_migrations (component, version, description) VALUES ('users', $1, 'newer')",
      [next],
    );
    expect(await runMigrations(client, USERS_SERIES)).toEqual([]);
    expect(await ledger(client)).toEqual([...versions(USERS_SERIES), next].map((v) => `users:${v}`));
  });

  it('a failing step keeps nothing of the call; the fixed series then applies from the start', async () => {
    await reset(client);
    const broken: MigrationSeries = {
      component: 'probe',
      migrations: [
        { version: 1, description: 'a table', statements: ['CREATE TABLE probe_one (id int)'] },
        {
          version: 2,
          description: 'a typo',
          statements: ['ALTER TABLE probe_one ADD COLUMN x no_such_type'],
        },
      ],
    };
    await expect(runMigrations(client, broken)).rejects.toThrow(/no_such_type/);
    expect(await client.query("SELECT to_regclass('probe_one') AS t")).toEqual([{ t: null }]);
    expect(await client.query("SELECT to_regclass('sqlrecall_migrations') AS t")).toEqual([{ t: null }]);
    const fixed: MigrationSeries = {
      component: 'probe',
      migrations: [
        broken.migrations[0]!,
        { version: 2, description: 'a column', statements: ['ALTER TABLE probe_one ADD COLUMN x int'] },
      ],
    };
    expect(await runMigrations(client, fixed)).toEqual([1, 2]);
    expect(await ledger(client)).toEqual(['probe:1', 'probe:2']);
  });
});

describe.each(SERVER_STORE_SKIP ? ['pglite', 'server-style'] : ['pglite', 'server-style', 'server'])(
  'concurrent runners on %s',
  (engine) => {
    it.each(['an empty database', 'a database of the old code'])(
      'apply each step once, from %s',
      async (start) => {
        const harness =
          engine === 'pglite' ? undefined : await createStoreHarness(engine as 'server' | 'server-style');
        // PGlite in process: one client, its transactions take turns; otherwise separate pools.
        const shared = harness ? undefined : createPgliteClient(undefined);
        const clients = harness
          ? [createPostgresClient(harness.url!), createPostgresClient(harness.url!)]
          : [shared!, shared!];
        try {
          if (start !== 'an empty database') {
            await oldMemoryStore(clients[0]!, 3);
            for (const statement of OLD_USERS_DDL_FIRST) await clients[0]!.query(statement);
          }
          const runs = clients.flatMap((c) =>
            SERIES.map((series) => ({ series, applied: runMigrations(c, series) })),
          );
          const results = await Promise.all(
            runs.map(async (run) => ({ ...run, applied: await run.applied })),
          );
          for (const series of SERIES) {
            const applied = results.filter((r) => r.series === series).flatMap((r) => r.applied);
            // Every missing step once in all (the other runner found it done): none twice, none lost.
            const expected = versions(
              series,
              series === MEMORY_SERIES && start !== 'an empty database' ? 4 : 1,
            );
            expect(applied.sort((a, b) => a - b)).toEqual(expected);
          }
          expect(await ledger(clients[0]!)).toEqual(
            SERIES.flatMap((series) => versions(series).map((v) => `${series.component}:${v}`)).sort(),
          );
        } finally {
          await clients[0]!.close();
          if (harness) await clients[1]!.close();
          await harness?.dispose();
        }
      },
    );
  },
);

describe('a new embedded store', () => {
  it('starts from the template with every series applied: opening it applies nothing', async () => {
    const client = createPgliteClient(join(tempDir('sqlrecall-migrations-'), 'store'));
    try {
      for (const series of SERIES) expect(await runMigrations(client, series)).toEqual([]);
      expect(await ledger(client)).toEqual(
        SERIES.flatMap((series) => versions(series).map((v) => `${series.component}:${v}`)).sort(),
      );
    } finally {
      await client.close();
    }
  });
});

describe('series', () => {
  it('are well formed, each with its own name', () => {
    for (const series of SERIES) expect(() => checkSeries(series)).not.toThrow();
    expect(new Set(SERIES.map((s) => s.component)).size).toBe(SERIES.length);
  });

  it('refuse a gap, a duplicate, an empty step and an odd name', () => {
    const step = (version: number) => ({ version, description: 'x', statements: ['SELECT 1'] });
    expect(() => checkSeries({ component: 'x', migrations: [step(1), step(3)] })).toThrow(/numbered 3/);
    expect(() => checkSeries({ component: 'x', migrations: [step(1), step(1)] })).toThrow(/numbered 1/);
    expect(() =>
      checkSeries({ component: 'x', migrations: [{ version: 1, description: 'x', statements: [] }] }),
    ).toThrow(/no statement/);
    expect(() => checkSeries({ component: 'X y', migrations: [step(1)] })).toThrow(/lower-case/);
  });
});
