/**
 * {@link DatabaseConnector} for a PostgreSQL server: the PostgreSQL dialect over the `pg` driver
 * (`pg-driver.ts`), built by the one connector of `../connector.ts`.
 */
import type { DatabaseConnector } from '../../core/ports.js';
import { createConnector } from '../connector.js';
import { postgresDialect } from './dialect.js';
import { createPgDriver, type PgDriverOptions } from './pg-driver.js';

export { POOL_QUEUE_MAX, PoolSlots } from './pg-driver.js';

/** Options of {@link createPostgresConnector}: the driver's, plus the schemas to introspect. */
export interface PostgresConnectorOptions extends PgDriverOptions {
  /** Schemas to introspect by default; default: every non-system schema. */
  schemas?: string[];
}

/**
 * Creates a connector; connects lazily (the first call opens the pool's first connection).
 * @throws SqlrecallError `config` when `url` is not a postgres:// URL
 */
export function createPostgresConnector(options: PostgresConnectorOptions): DatabaseConnector {
  const driver = createPgDriver(options, postgresDialect.cancellation?.sql);
  return createConnector(postgresDialect, driver, { schemas: options.schemas });
}
