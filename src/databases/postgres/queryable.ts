/**
 * The smallest interface every PostgreSQL driver satisfies, so introspection and type look-ups run
 * the very same SQL on pg and on PGlite (declared engine-neutral in `../engine.ts`).
 */
export type { Queryable } from '../engine.js';
