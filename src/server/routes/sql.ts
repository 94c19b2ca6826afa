/**
 * `POST /api/sql`: run SQL the person edited (the web UI's "Edit SQL"), through the same guard,
 * allowlist, row cap and statement timeout as a question's SQL. Signed-in users only, like every
 * route; closing the request cancels the statement. Nothing is stored: saving the SQL as an example
 * is `POST /api/feedback` (thumbs up), which is scoped to the caller.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { MAX_SQL_CHARS } from '../../agent/run-sql.js';
import { runSql, type SqlFailureDocument, sqlDocument } from '../../app/run-sql.js';
import { policyOrRecordedRefusal } from '../../audit/policy-refusal.js';
import type { EffectivePolicy } from '../../policy/types.js';
import { type AppEnv, errorBody } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { ChartSchema, ErrorSchema, errorResponses } from '../schemas.js';

/** Body of `POST /api/sql`. */
export const SqlBodySchema = z
  // An empty statement is refused by the use case, worded as on every other surface.
  .object({ sql: z.string().trim().max(MAX_SQL_CHARS).openapi({ example: 'SELECT 1' }) })
  .openapi('SqlRequest');

/**
 * The result of `POST /api/sql`: the one SQL document, the same as `sqlrecall sql --json` and the
 * MCP `sql` tool print (`app/run-sql.ts`; rows follow the value contract: exact decimal strings,
 * JSON text).
 */
export const SqlResponseSchema = z
  .object({
    sql: z.string(),
    /** Column names, in order (their types are `columnTypes`). */
    columns: z.array(z.string()),
    /** Type name of each column, in the order of `columns`. */
    columnTypes: z.array(z.string()),
    rows: z.array(z.array(z.unknown())),
    rowCount: z.number(),
    truncated: z.boolean(),
    truncatedReason: z.enum(['max_rows', 'max_bytes']).optional(),
    chart: ChartSchema.nullable(),
  })
  .openapi('SqlResponse');

/** A statement that was refused or failed: the statement as received, with the error. */
export const SqlErrorSchema = ErrorSchema.extend({ sql: z.string() }).openapi('SqlError');

const route = createRoute({
  method: 'post',
  path: '/api/sql',
  tags: ['sql'],
  summary: 'Run SQL you edited (same guard and limits as a question)',
  request: { body: { required: true, content: { 'application/json': { schema: SqlBodySchema } } } },
  responses: {
    200: { description: 'ok', content: { 'application/json': { schema: SqlResponseSchema } } },
    ...errorResponses,
    422: {
      description: 'refused by the SQL guard or a database error: the statement (`sql`) with the error',
      content: { 'application/json': { schema: SqlErrorSchema } },
    },
    503: {
      description: 'database unavailable: the statement (`sql`) with the error',
      content: { 'application/json': { schema: SqlErrorSchema } },
    },
  },
});

/** Registers `POST /api/sql`. */
export function registerSql(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(route, async (c) => {
    // Signed in (the auth middleware already refused anyone else); the statement runs under the
    // principal's data policy.
    const principal = c.get('principal');
    const { sql } = c.req.valid('json');
    const controller = new AbortController();
    c.req.raw.signal?.addEventListener('abort', () => controller.abort());
    const onStatement = deps.audit?.listener({ user: principal.user, frontEnd: 'http' });
    let run: Awaited<ReturnType<typeof runSql>>;
    try {
      // No policy decided for this user (an invalid file): refused, and recorded as such.
      const policyFor = deps.policyFor;
      const policy: EffectivePolicy | undefined = policyFor
        ? await policyOrRecordedRefusal(() => policyFor(principal), onStatement, { sql, origin: 'person' })
        : undefined;
      run = await runSql(
        {
          sql,
          signal: controller.signal,
          user: principal.user,
          ...(principal.team !== undefined ? { team: principal.team } : {}),
          ...(policy ? { policy } : {}),
          ...(onStatement ? { onStatement } : {}),
        },
        deps.sql,
      );
    } catch (error) {
      // The failure document of every front end: the statement refused or failed, with the error
      // body (an unexpected error still says nothing of the server's insides).
      const { body, status } = errorBody(error);
      c.set('errorCode', body.error.code);
      const failed: SqlFailureDocument = { sql, error: body.error };
      return c.json(failed, status as 422);
    }
    // The published schema describes exactly the SQL document (checked here at compile time).
    const doc: z.infer<typeof SqlResponseSchema> = sqlDocument(run);
    return c.json(doc, 200);
  });
}
