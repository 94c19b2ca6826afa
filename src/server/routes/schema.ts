/**
 * Schema routes: the catalog, and the schema context chosen for a question (the `readSchema` and
 * `schemaContext` use cases, the same documents as `sqlrecall schema --json`, `sqlrecall schema
 * context --json` and the MCP `schema_context` tool).
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { readSchema } from '../../app/schema.js';
import { schemaContext } from '../../app/schema-context.js';
import type { AppEnv } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { errorResponses } from '../schemas.js';

const tags = ['schema'];

const catalog = createRoute({
  method: 'get',
  path: '/api/schema',
  tags,
  summary: 'The catalog: tables with columns, types, comments, row estimates and foreign keys',
  request: {
    query: z.object({
      /** `true` reads the catalog again (a table created since the server started appears). */
      refresh: z.enum(['true', 'false']).optional(),
    }),
  },
  responses: {
    200: { description: 'ok', content: { 'application/json': { schema: z.object({}).passthrough() } } },
    ...errorResponses,
  },
});

const context = createRoute({
  method: 'post',
  path: '/api/schema/context',
  tags,
  summary: 'The tables and schema text the model would see for a question',
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: z.object({ question: z.string().trim().max(4000) }) } },
    },
  },
  responses: {
    200: {
      description: 'ok',
      content: {
        'application/json': {
          schema: z
            .object({
              question: z.string(),
              mode: z.enum(['whole', 'linked']),
              estimatedTokens: z.number(),
              wholeSchemaTokens: z.number(),
              budget: z.object({
                contextTokens: z.number(),
                availableTokens: z.number(),
                schemaTokens: z.number(),
              }),
              tables: z.array(
                z
                  .object({
                    table: z.string(),
                    kind: z.string(),
                    reasons: z.array(z.string()),
                    columns: z.array(z.string()),
                    omittedColumns: z.number(),
                    valueHints: z.array(z.string()),
                  })
                  .passthrough(),
              ),
              catalogTables: z.number(),
              degradations: z.array(z.string()),
              index: z.object({
                indexed: z.number(),
                reembedded: z.number(),
                removed: z.number(),
                unchanged: z.number(),
                durationMs: z.number(),
              }),
              warnings: z.array(z.string()),
              schemaText: z.string(),
            })
            .passthrough(),
        },
      },
    },
    ...errorResponses,
  },
});

/** Registers the schema routes. */
export function registerSchema(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(catalog, async (c) => {
    const refresh = c.req.valid('query').refresh === 'true';
    const policy = await deps.policyFor?.(c.get('principal'));
    return c.json(await readSchema(deps.schema, { refresh, ...(policy ? { policy } : {}) }), 200);
  });

  app.openapi(context, async (c) => {
    const policy = await deps.policyFor?.(c.get('principal'));
    return c.json(
      await schemaContext(deps.schema, c.req.valid('json').question, {}, policy ? { policy } : {}),
      200,
    );
  });
}
