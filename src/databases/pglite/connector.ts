/**
 * {@link DatabaseConnector} for embedded PostgreSQL (PGlite): the PostgreSQL dialect over a PGlite
 * driver (`driver.ts`), built by the one connector of `../connector.ts`, so both engines answer
 * alike. A data directory is shared by every local process (`sharing.ts`): the first to use it
 * opens it and serves it on a Unix socket; others reach it through that socket.
 */
import { resolve } from 'node:path';
import type { PGlite } from '@electric-sql/pglite';
import type { DatabaseConnector } from '../../core/ports.js';
import { createConnector } from '../connector.js';
import { postgresDialect } from '../postgres/dialect.js';
import { unreachableError } from '../postgres/errors.js';
import { createPgliteDriver, createSharedPgliteDriver } from './driver.js';
import { openPglite } from './sharing.js';

/** Options of {@link createPgliteConnector}. */
export interface PgliteConnectorOptions {
  /**
   * Data directory, shared with other local processes (module comment); default (undefined): a
   * fresh in-memory database. Ignored when `pglite` is given.
   */
  dataDir?: string;
  /** An instance owned by the caller; {@link DatabaseConnector.close} then leaves it open. */
  pglite?: PGlite;
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
  /**
   * Longest wait for a data directory another process holds but does not serve (its socket does
   * not answer); default `SHARED_PGLITE_WAIT_MS` (30 s, `sharing.ts`).
   */
  waitMs?: number;
}

/**
 * Creates a connector on an embedded database. Nothing starts until the first call. With a
 * `dataDir`, the first call either opens it (≈1–3 s, a 16MB buffer pool, `start-params.ts`) and
 * serves it to other local processes, or — while another process holds it — connects to that
 * process's socket (`sharing.ts`); when that process exits, the next call takes over. Without
 * one, a private in-memory instance; with `pglite`, the caller's instance (left open by `close`).
 * `timeoutMs` is not enforced and a running statement cannot be cancelled (`driver.ts`).
 * @throws SqlrecallError `db_unreachable` from the first call when the database cannot be opened,
 *   or stays held by a process that does not answer on its socket for 30 s
 */
export function createPgliteConnector(options: PgliteConnectorOptions = {}): DatabaseConnector {
  const connectorOptions = { schemas: options.schemas };
  if (options.pglite === undefined && options.dataDir !== undefined) {
    const driver = createSharedPgliteDriver(resolve(options.dataDir), options.waitMs);
    return createConnector(postgresDialect, driver, connectorOptions);
  }
  const given = options.pglite;
  const displayName = given ? `pglite:${given.dataDir ?? 'memory:'}` : 'pglite:memory:';
  let started: Promise<PGlite> | undefined;
  const db = (): Promise<PGlite> => {
    started ??= given ? given.waitReady.then(() => given) : openPglite(undefined, false);
    return started.catch((error: unknown) => {
      started = undefined;
      throw unreachableError(displayName, error);
    });
  };
  const driver = createPgliteDriver(
    displayName,
    async (fn) => fn(await db()),
    async () => {
      if (given || !started) return;
      const instance = await started.catch(() => undefined);
      started = undefined;
      if (instance && !instance.closed) await instance.close();
    },
  );
  return createConnector(postgresDialect, driver, connectorOptions);
}
