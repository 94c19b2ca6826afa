/** Schema routes: the catalog, and the schema context chosen for a question. */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { wholeSchemaPlanner } from '../../agent/context.js';
import { estimateTokens } from '../../core/tokens.js';
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
      content: { 'application/json': { schema: z.object({ question: z.string().trim().min(1).max(4000) }) } },
    },
  },
  responses: {
    200: {
      description: 'ok',
      content: {
        'application/json': {
          schema: z
            .object({ tables: z.array(z.string()), schemaText: z.string(), estimatedTokens: z.number() })
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
    const assistant = await deps.assistant();
    const { schema } =
      c.req.valid('query').refresh === 'true' ? await assistant.refreshSchema() : await assistant.schema();
    return c.json(schema, 200);
  });

  app.openapi(context, async (c) => {
    const { question } = c.req.valid('json');
    const { schema } = await (await deps.assistant()).schema();
    const planned = await (deps.planContext ?? wholeSchemaPlanner)(question, schema);
    return c.json(
      { ...planned, estimatedTokens: planned.estimatedTokens ?? estimateTokens(planned.schemaText) },
      200,
    );
  });
}
