/**
 * `GET /api/audit`: the audit trail (statements run or refused per user, newest first), for
 * administrators only (`users add --admin`; the local user of a loopback server). Anyone else
 * gets 403, whatever filter they ask for.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { parseSince, requireAdmin } from '../../app/audit.js';
import { MAX_AUDIT_LIST } from '../../audit/store.js';
import type { AppEnv } from '../context.js';
import { apiError } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { errorResponses } from '../schemas.js';

const AuditRecordSchema = z
  .object({
    id: z.string(),
    at: z.string(),
    user: z.string(),
    frontEnd: z.enum(['cli', 'http', 'mcp']),
    question: z.string().nullable(),
    sql: z.string(),
    outcome: z.enum(['ran', 'refused', 'failed', 'interrupted', 'started']).openapi({
      description: 'interrupted: the process ended during the statement; started is never stored',
    }),
    origin: z.enum(['model', 'repair', 'person', 'fallback']),
    rowCount: z.number().nullable(),
    reason: z.string().nullable(),
    code: z.string().nullable(),
    policies: z.array(z.string()),
  })
  .openapi('AuditRecord');

const route = createRoute({
  method: 'get',
  path: '/api/audit',
  tags: ['system'],
  summary: 'Statements run or refused per user, newest first (administrators only)',
  request: {
    query: z.object({
      user: z.string().max(100).optional(),
      since: z.string().max(40).optional().openapi({ description: 'ISO date or time, or 30m, 24h, 7d, 2w' }),
      limit: z.coerce.number().int().min(1).max(MAX_AUDIT_LIST).optional(),
    }),
  },
  responses: {
    200: {
      description: 'ok',
      content: { 'application/json': { schema: z.object({ records: z.array(AuditRecordSchema) }) } },
    },
    ...errorResponses,
  },
});

/** Registers `GET /api/audit`. */
export function registerAudit(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(route, async (c) => {
    requireAdmin(c.get('principal'));
    if (!deps.audit) throw apiError('not_found', 'This server keeps no audit trail.');
    const query = c.req.valid('query');
    const records = await deps.audit.list({
      ...(query.user !== undefined ? { user: query.user } : {}),
      ...(query.since !== undefined ? { since: parseSince(query.since) } : {}),
      ...(query.limit !== undefined ? { limit: query.limit } : {}),
    });
    return c.json({ records }, 200);
  });
}
