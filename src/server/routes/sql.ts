/**
 * `POST /api/sql`: run SQL the person edited (the web UI's "Edit SQL"), through the same guard,
 * allowlist, row cap and statement timeout as a question's SQL. Signed-in users only, like every
 * route; closing the request cancels the statement. Nothing is stored: saving the SQL as an example
 * is `POST /api/feedback` (thumbs up), which is scoped to the caller.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { MAX_SQL_CHARS } from '../../agent/run-sql.js';
import { chartFor } from '../../app/chart.js';
import { runSql } from '../../app/run-sql.js';
import type { AppEnv } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { ChartSchema, errorResponses } from '../schemas.js';

/** Body of `POST /api/sql`. */
export const SqlBodySchema = z
  .object({ sql: z.string().trim().min(1).max(MAX_SQL_CHARS).openapi({ example: 'SELECT 1' }) })
  .openapi('SqlRequest');

/** The result of `POST /api/sql` (rows follow the value contract: exact decimal strings, JSON text). */
export const SqlResponseSchema = z
  .object({
    sql: z.string(),
    columns: z.array(z.object({ name: z.string(), type: z.string() })),
    rows: z.array(z.array(z.unknown())),
    rowCount: z.number(),
    truncated: z.boolean(),
    truncatedReason: z.enum(['max_rows', 'max_bytes']).optional(),
    chart: ChartSchema.nullable(),
  })
  .openapi('SqlResponse');

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
      description: 'refused by the SQL guard or a database error',
      content: errorResponses[400].content,
    },
    503: { description: 'database unavailable', content: errorResponses[400].content },
  },
});

/** Registers `POST /api/sql`. */
export function registerSql(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(route, async (c) => {
    const principal = c.get('principal'); // signed in (the auth middleware refused anyone else)
    const { sql } = c.req.valid('json');
    const controller = new AbortController();
    c.req.raw.signal?.addEventListener('abort', () => controller.abort());
    const onStatement = deps.audit?.listener({ user: principal.user, frontEnd: 'http' });
    const { sql: checked, result } = await runSql(
      { sql, signal: controller.signal, ...(onStatement ? { onStatement } : {}) },
      deps.sql,
    );
    return c.json(
      {
        sql: checked,
        columns: result.columns,
        rows: result.rows,
        rowCount: result.rowCount,
        truncated: result.truncated,
        ...(result.truncated ? { truncatedReason: result.truncatedReason ?? 'max_rows' } : {}),
        chart: chartFor(result),
      },
      200,
    );
  });
}
