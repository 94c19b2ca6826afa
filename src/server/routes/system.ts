/** Health, the signed-in user, settings and feedback. */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import type { AppEnv } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { applyFeedback } from '../feedback.js';
import { ChangeSchema, errorResponses, FeedbackSchema } from '../schemas.js';
import { optionalSchema } from './shared.js';

const Component = z.object({ ok: z.boolean(), message: z.string().optional() });

const health = createRoute({
  method: 'get',
  path: '/api/health',
  tags: ['system'],
  summary: 'Is the model server reachable, the database, the memory store (no sign-in needed)',
  responses: {
    200: {
      description: 'all reachable',
      content: {
        'application/json': {
          schema: z.object({
            ok: z.boolean(),
            model: Component,
            database: Component,
            memory: Component,
            policy: Component.optional(),
          }),
        },
      },
    },
    503: {
      description: 'something is unreachable',
      content: {
        'application/json': {
          schema: z.object({
            ok: z.boolean(),
            model: Component,
            database: Component,
            memory: Component,
            policy: Component.optional(),
          }),
        },
      },
    },
  },
});

const me = createRoute({
  method: 'get',
  path: '/api/me',
  tags: ['system'],
  summary: 'Who the token (or local mode) signs you in as',
  responses: {
    200: {
      description: 'ok',
      content: {
        'application/json': {
          schema: z.object({
            user: z.string(),
            team: z.string().optional(),
            teamRole: z.enum(['member', 'admin']).optional(),
            mode: z.enum(['local', 'users']),
          }),
        },
      },
    },
    ...errorResponses,
  },
});

const settings = createRoute({
  method: 'get',
  path: '/api/settings',
  tags: ['system'],
  summary: 'Models in use and the database (credentials masked)',
  responses: {
    200: {
      description: 'ok',
      content: {
        'application/json': {
          schema: z.object({
            model: z.string(),
            embedModel: z.string(),
            provider: z.enum(['ollama', 'openai']),
            providerUrl: z.string(),
            database: z.string().nullable(),
            memoryStore: z.string(),
            maxRows: z.number(),
            memoryEnabled: z.boolean(),
          }),
        },
      },
    },
    ...errorResponses,
  },
});

const feedback = createRoute({
  method: 'post',
  path: '/api/feedback',
  tags: ['system'],
  summary: 'Thumbs up (store question + SQL as an example) or down (store the corrected SQL)',
  request: { body: { required: true, content: { 'application/json': { schema: FeedbackSchema } } } },
  responses: {
    200: {
      description: 'ok',
      content: { 'application/json': { schema: z.object({ stored: ChangeSchema.nullable() }) } },
    },
    ...errorResponses,
    422: { description: 'the SQL is not a read-only statement', content: errorResponses[400].content },
  },
});

/** Registers the system routes. */
export function registerSystem(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(health, async (c) => {
    const report = await deps.health();
    return c.json(report, report.ok ? 200 : 503);
  });

  app.openapi(me, (c) => {
    const p = c.get('principal');
    return c.json(
      {
        user: p.user,
        ...(p.team !== undefined ? { team: p.team, teamRole: p.teamRole ?? 'member' } : {}),
        mode: deps.auth.mode,
      },
      200,
    );
  });

  app.openapi(settings, (c) => c.json(deps.settings(), 200));

  app.openapi(feedback, async (c) => {
    const body = c.req.valid('json');
    const scope = { user: c.get('principal').user };
    const stored = await applyFeedback(await deps.memory(), scope, body, await optionalSchema(deps));
    return c.json({ stored }, 200);
  });
}
