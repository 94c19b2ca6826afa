/**
 * The engines of the conformance suite (test/conformance.test.ts), in the order it runs them. A
 * new engine is one module beside these exporting a {@link ConformanceEngine} (see `engine.ts`)
 * and one entry here.
 */
import { duckdbEngine } from './duckdb.js';
import type { ConformanceEngine } from './engine.js';
import { mariadbEngine } from './mariadb.js';
import { pgliteEngine } from './pglite.js';
import { postgresEngine } from './postgres.js';
import { sqliteEngine } from './sqlite.js';

/** Every engine the suite covers. */
export const CONFORMANCE_ENGINES: readonly ConformanceEngine[] = [
  postgresEngine,
  pgliteEngine,
  mariadbEngine,
  duckdbEngine,
  sqliteEngine,
];
