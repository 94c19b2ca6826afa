/**
 * {@link DatabaseConnector} for embedded PostgreSQL (PGlite: PostgreSQL 18 compiled to WASM). The
 * catalog queries, the read-only recipe and the value conversion are the server connector's
 * (`../postgres/`), so both engines answer alike.
 *
 * Differences from a server, by PGlite's design: one connection (statements run one after
 * another), and `statement_timeout` is NOT enforced — a runaway query runs until it ends.
 * `SET TRANSACTION READ ONLY` is enforced, so writes are still refused (SQLSTATE 25006).
 */
import { PGlite, types as pgliteTypes } from '@electric-sql/pglite';
import type { DatabaseConnector, ExecuteOptions, IntrospectOptions, QueryResult } from '../../core/ports.js';
import type { Schema } from '../../core/schema.js';
import { queryError, unreachableError } from '../postgres/errors.js';
import { executeReadOnly, type RawResult, type ReadOnlySession } from '../postgres/execute.js';
import { introspectCatalog } from '../postgres/introspect.js';
import { TypeNameCache } from '../postgres/type-names.js';
import { pgliteStartParams } from './start-params.js';

/** Options of {@link createPgliteConnector}. */
export interface PgliteConnectorOptions {
  /** Data directory; default (undefined): a fresh in-memory database. Ignored when `pglite` is given. */
  dataDir?: string;
  /** An instance owned by the caller; {@link DatabaseConnector.close} then leaves it open. */
  pglite?: PGlite;
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
}

type ParserMap = Record<number, (value: string) => string>;

/**
 * Parsers that keep every value as the server's text. PGlite merges query parsers over its own
 * with an object spread, so each known type oid needs an explicit entry; oids it does not know
 * (user enums, their arrays) come back as text anyway.
 */
function rawParsers(db: PGlite): ParserMap {
  const identity = (value: string): string => value;
  const parsers: ParserMap = {};
  for (const key of [...Object.keys(db.parsers), ...Object.keys(pgliteTypes.parsers)]) {
    const oid = Number(key);
    if (Number.isInteger(oid)) parsers[oid] = identity;
  }
  return parsers;
}

/**
 * Creates a connector on an embedded database. The instance starts lazily on first use
 * (≈1–3 s) with a 16MB buffer pool (`start-params.ts`); a data directory can be opened by one
 * process at a time.
 */
export function createPgliteConnector(options: PgliteConnectorOptions = {}): DatabaseConnector {
  const owned = options.pglite === undefined;
  const displayName = options.pglite
    ? `pglite:${options.pglite.dataDir ?? 'memory:'}`
    : `pglite:${options.dataDir ?? 'memory:'}`;
  const types = new TypeNameCache();
  let started: Promise<PGlite> | undefined;

  const db = (): Promise<PGlite> => {
    started ??= (async () => {
      // Object form: PGlite ignores the options argument when the data dir argument is undefined.
      const instance =
        options.pglite ??
        new PGlite({ dataDir: options.dataDir, startParams: pgliteStartParams(PGlite.defaultStartParams) });
      await instance.waitReady;
      return instance;
    })();
    return started.catch((error: unknown) => {
      started = undefined;
      throw unreachableError(displayName, error);
    });
  };

  return {
    dialect: 'postgres',
    displayName,

    async ping(): Promise<void> {
      const instance = await db();
      try {
        await instance.query('SELECT 1');
      } catch (error) {
        throw unreachableError(displayName, error);
      }
    },

    async introspect(introspectOptions: IntrospectOptions = {}): Promise<Schema> {
      const instance = await db();
      try {
        return await instance.transaction(async (tx) => {
          await tx.exec('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY');
          const schema = await introspectCatalog(tx, {
            schemas: introspectOptions.schemas ?? options.schemas,
          });
          await tx.rollback();
          return schema;
        });
      } catch (error) {
        throw queryError(error, { displayName });
      }
    },

    /**
     * Runs one guarded statement read-only. `timeoutMs` is NOT enforced (PGlite ignores
     * `statement_timeout`), and `signal` cannot stop a running statement.
     * TODO: honour `signal` between statements once PGlite offers a way to interrupt one.
     */
    async execute(sql: string, executeOptions: ExecuteOptions): Promise<QueryResult> {
      if (executeOptions.signal?.aborted) throw queryError({ code: '57014' }, { displayName, aborted: true });
      const instance = await db();
      const parsers = rawParsers(instance);
      try {
        return await instance.transaction((tx) => {
          const session: ReadOnlySession = {
            query: (text, params) => tx.query(text, params),
            begin: async (settings) => {
              await tx.exec(['SET TRANSACTION READ ONLY', ...settings].join('; '));
            },
            queryRaw: async (text): Promise<RawResult> => {
              const result = await tx.query<(string | null)[]>(text, [], { rowMode: 'array', parsers });
              return {
                fields: result.fields.map((field) => ({ name: field.name, typeOid: field.dataTypeID })),
                rows: result.rows,
              };
            },
            rollback: () => tx.rollback(),
          };
          return executeReadOnly(session, sql, executeOptions, types, false);
        });
      } catch (error) {
        throw queryError(error, { displayName, timeoutMs: executeOptions.timeoutMs });
      }
    },

    async close(): Promise<void> {
      if (!owned || !started) return;
      const instance = await started.catch(() => undefined);
      started = undefined;
      if (instance && !instance.closed) await instance.close();
    },
  };
}
