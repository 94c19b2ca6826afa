/**
 * Issue 4, "Defence in depth": with the AST guard out of the way, every corpus statement goes
 * straight to the connector's `execute` (the read-only recipe: READ ONLY transaction, cursor,
 * extended protocol, statement_timeout, ROLLBACK). The database must still refuse every write; the
 * statements that run anyway are listed explicitly: only the guard stops them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateAndRun } from '../src/agent/generate.js';
import { isSqlrecallError } from '../src/core/errors.js';
import type { ChatModel, DatabaseConnector } from '../src/core/ports.js';
import { openDatabase } from '../src/databases/open.js';
import { ATTACKS } from './support/attacks.js';
import { type Fixture, pgliteShop, serverShop } from './support/fixtures.js';
import { TEST_DATABASE_URL } from './support/server-db.js';

/** Writes: the database itself must stop every one of them (READ ONLY, cursor rules, one statement per round trip). */
const WRITES = ATTACKS.filter(
  (a) =>
    [
      'data-modifying',
      'merge',
      'select-into',
      'locking-clause',
      'ddl',
      'dcl',
      'sequences',
      'multiple-statements',
    ].includes(a.rule) && !/^explain (?!analy)/i.test(a.sql),
)
  .map((a) => a.id)
  .concat([
    'explain-analyze-delete',
    'explain-analyze-cte-update',
    'copy-from-file',
    'do-block',
    'do-language',
    'execute',
    'lo-unlink',
    'lowrite',
    'lo-put-qualified',
    'query-to-xml',
  ]);

/**
 * What runs without the guard on both engines (PostgreSQL 15 server, PGlite 18): only the guard
 * stops these. Harmless here only because every execution is rolled back — session state (SET,
 * PREPARE, LISTEN, advisory locks), server files, credentials and transaction control are not.
 */
const GUARD_ONLY = [
  // plain EXPLAIN of a write does not run it, but is no read either
  'explain-delete',
  'explain-insert',
  'explain-create-table-as',
  'explain-pg-sleep',
  // EXPLAIN ANALYZE of a read runs the read
  'explain-analyze-select',
  'explain-paren-analyze',
  'explain-analyse-british',
  'explain-analyze-false',
  // transaction control ends or nests sqlrecall's own read-only transaction
  'begin',
  'commit',
  'rollback',
  'start-transaction-rw',
  'savepoint',
  'end',
  'set-constraints',
  // SET / RESET change the session: even READ WRITE and the timeout
  'set-read-write',
  'set-session-rw',
  'set-default-rw',
  'set-timeout-zero',
  'set-local-role',
  'set-search-path',
  'reset-all',
  'reset-timeout',
  'set-config',
  'set-config-quoted',
  // session-level state that survives the rollback
  'prepare',
  'prepare-select',
  'deallocate',
  'declare-cursor',
  'listen',
  'notify',
  'unlisten',
  'pg-notify',
  'advisory-lock',
  'advisory-xact-lock',
  'try-advisory-lock-upper',
  'advisory-unlock-all',
  // locks and maintenance allowed in a read-only transaction
  'lock-table',
  'lock-lowercase',
  'analyze',
  'cluster',
  'reindex',
  // transaction ids, WAL
  'txid-current',
  'pg-current-xact-id',
  'logical-emit',
  // server files and SQL given as text
  'ls-dir',
  'query-to-xml-and-schema',
  'table-to-xml',
  'schema-to-xml',
  'ts-stat',
  // credential catalogs (the connected role is a superuser in tests)
  'pg-authid',
  'pg-shadow',
  'pg-shadow-upper-qualified',
  'pg-user-mappings',
  'information-schema-user-mapping-options',
  'information-schema-foreign-server-options',
  'pg-authid-in-subquery',
  'pg-authid-in-union',
  'pg-shadow-quoted',
  'show',
];

/** Engine-specific extras: the server reads its own files and PostgreSQL 15 allows lo_* in READ ONLY. */
const GUARD_ONLY_SERVER = [
  'set-config-in-from',
  'lo-import',
  'lo-create',
  'lo-from-bytea',
  'read-file',
  'read-binary-file',
  'read-file-upper-qualified',
];
/** PGlite's virtual file system has no /etc/passwd but does have the data directory. */
const GUARD_ONLY_PGLITE = ['stat-file'];

type Outcome = 'ran' | 'timeout' | `error ${string}`;

function suite(engine: 'pglite' | 'server', make: () => Promise<Fixture>) {
  describe(engine, () => {
    let fixture: Fixture;
    let db: DatabaseConnector;
    let before: string;
    const outcomes = new Map<string, Outcome>();

    beforeAll(async () => {
      fixture = await make();
      before = await fixture.snapshot();
      db = await openDatabase(fixture.url);
      for (const attack of ATTACKS) {
        if (attack.direct) continue; // would act outside the database (files, other sessions, WAL)
        if (attack.slow && engine === 'pglite') continue; // PGlite ignores statement_timeout
        try {
          await db.execute(attack.sql, { maxRows: 5, timeoutMs: attack.slow ? 300 : 5000 });
          outcomes.set(attack.id, 'ran');
        } catch (error) {
          if (!isSqlrecallError(error)) throw error;
          outcomes.set(
            attack.id,
            error.code === 'db_timeout' ? 'timeout' : `error ${String(error.details.sqlState ?? error.code)}`,
          );
        }
      }
    }, 120_000);
    afterAll(async () => {
      await db?.close().catch(() => {});
      await fixture?.close();
    });

    it('refuses every write without the guard (READ ONLY, cursor rules, one statement per round trip)', () => {
      const ran = WRITES.filter((id) => outcomes.get(id) === 'ran');
      expect(ran).toEqual([]);
      for (const id of WRITES) expect(outcomes.has(id), id).toBe(true);
      const readOnly = WRITES.filter((id) => outcomes.get(id) === 'error 25006');
      expect(readOnly.length).toBeGreaterThan(60);
      // Several statements never share a round trip: the extended protocol refuses them.
      for (const attack of ATTACKS.filter((a) => a.rule === 'multiple-statements'))
        expect(outcomes.get(attack.id), attack.id).toMatch(/^error (42601|0A000|25006)$/);
      // A data-modifying CTE cannot even be declared as a cursor.
      expect(outcomes.get('cte-delete')).toBe('error 0A000');
    });

    it('documents exactly which statements only the guard stops', () => {
      const ran = [...outcomes].filter(([, o]) => o === 'ran').map(([id]) => id);
      const expected = [...GUARD_ONLY, ...(engine === 'server' ? GUARD_ONLY_SERVER : GUARD_ONLY_PGLITE)];
      expect(ran.sort()).toEqual(expected.sort());
    });

    it.skipIf(engine !== 'server')(
      'stops every sleep with the statement timeout (the guard stops them first)',
      () => {
        const sleeps = ATTACKS.filter((a) => a.slow && a.id !== 'pg-sleep-in-order-by');
        for (const attack of sleeps) expect(outcomes.get(attack.id), attack.id).toBe('timeout');
      },
    );

    it('the connector alone reaches the same READ ONLY refusal; the generate loop always guards', async () => {
      // No switch in product code turns the guard off (issue 10): defence in depth is proven on the
      // connector itself, and the generate loop is shown to refuse before the connector is reached.
      await expect(db.execute('DELETE FROM orders', { maxRows: 5, timeoutMs: 5000 })).rejects.toMatchObject({
        code: 'db_query',
        details: { sqlState: '25006' },
      });
      // Only the guard stops an advisory lock: without it, the lock is taken.
      expect(
        (await db.execute('SELECT pg_try_advisory_lock(99) AS locked', { maxRows: 5, timeoutMs: 5000 })).rows,
      ).toEqual([[true]]);
      const reply = (text: string): ChatModel => ({
        id: 'fixed',
        async *stream() {
          yield { type: 'text-delta', text };
          yield { type: 'finish', finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
        },
      });
      let executed = 0;
      const counting = new Proxy(db, {
        get(target, property) {
          if (property === 'execute') {
            return (...args: Parameters<DatabaseConnector['execute']>) => {
              executed += 1;
              return target.execute(...args);
            };
          }
          const value = Reflect.get(target, property, target) as unknown;
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
      const loop = generateAndRun({
        chat: reply('SELECT pg_try_advisory_lock(99) AS locked'),
        db: counting,
        messages: [],
        maxRows: 5,
        statementTimeoutMs: 5000,
        maxRepairs: 0,
        maxTokens: 100,
        // A leftover switch must not be honoured, whatever an untyped caller passes.
        ...({ __unsafeDisableGuardForTests: true } as object),
      });
      const drain = async () => {
        for (;;) if ((await loop.next()).done) return;
      };
      await expect(drain()).rejects.toMatchObject({ code: 'guard_refused' });
      expect(executed).toBe(0);
    });

    it('leaves the database unchanged', async () => {
      await db.close();
      expect(await fixture.snapshot()).toBe(before);
    });
  });
}

suite('pglite', pgliteShop);
describe.skipIf(!TEST_DATABASE_URL)('server', () => suite('server', serverShop));
