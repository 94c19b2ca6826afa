/**
 * `GET /api/policy`: where the data policy stands, for administrators only: the policy file in
 * force, whether the file on disk is valid (and its problems when not), when the version in force
 * was loaded, and with `?user=NAME` what that user may read (the document `policy explain` prints).
 * Anyone else gets 403; the public `/api/health` says only whether the file is valid.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { requireAdmin } from '../../app/audit.js';
import { type AppEnv, apiError } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { errorResponses } from '../schemas.js';

const ExplanationSchema = z
  .object({
    file: z.string().nullable(),
    user: z.string(),
    sources: z.array(z.string()).readonly(),
    tables: z.array(z.string()).nullable(),
    deniedColumns: z.array(z.object({ table: z.string(), column: z.string(), policy: z.string() })),
    rowFilters: z.array(
      z.object({
        table: z.string(),
        expression: z.string(),
        params: z.array(z.string()).readonly(),
        policy: z.string(),
      }),
    ),
    unreadable: z.array(z.object({ table: z.string(), reason: z.string() })),
    rowsToModel: z.boolean(),
  })
  .openapi('PolicyExplanation');

const PolicyStatusSchema = z
  .object({
    file: z.string().nullable().openapi({ description: 'The policy file, or null when none is configured' }),
    state: z.enum(['none', 'unloaded', 'valid', 'invalid-kept', 'invalid']).openapi({
      description:
        'valid: the file on disk is in force; invalid-kept: it is invalid and the last valid version stays in force; invalid: never valid, every statement is refused; none: no policy file',
    }),
    valid: z.boolean(),
    loadedAt: z
      .string()
      .nullable()
      .openapi({ description: 'When the version in force was loaded (ISO 8601)' }),
    failedAt: z.string().nullable().openapi({ description: 'When the file on disk was found invalid' }),
    problems: z.array(z.object({ path: z.string(), message: z.string() })),
    users: z.number().nullable(),
    teams: z.number().nullable(),
    effective: ExplanationSchema.nullable().optional().openapi({
      description: "With ?user: that user's effective policy (null while no policy is in force)",
    }),
  })
  .openapi('PolicyStatus');

const route = createRoute({
  method: 'get',
  path: '/api/policy',
  tags: ['system'],
  summary: "The data policy's status and one user's effective policy (administrators only)",
  request: {
    query: z.object({
      user: z.string().min(1).max(100).optional().openapi({ description: 'A user name' }),
    }),
  },
  responses: {
    200: { description: 'ok', content: { 'application/json': { schema: PolicyStatusSchema } } },
    ...errorResponses,
  },
});

/** Registers `GET /api/policy`. */
export function registerPolicy(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(route, async (c) => {
    requireAdmin(c.get('principal'), 'the data policy status');
    if (!deps.policyStatus) throw apiError('not_found', 'This server reports no policy status.');
    const { user } = c.req.valid('query');
    const doc: z.infer<typeof PolicyStatusSchema> = await deps.policyStatus(user);
    return c.json(doc, 200);
  });
}
