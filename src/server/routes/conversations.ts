/**
 * Conversation routes: list the caller's conversations, read one (to resume it, ask with its
 * `conversationId`), rename and delete one. Ids are looked up in the caller's scope only: another
 * user's id is `404 not_found`, exactly like an id that does not exist.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import { MAX_CONVERSATION_TITLE_LENGTH } from '../../memory/store/types.js';
import { type AppEnv, apiError } from '../context.js';
import type { ServerDeps } from '../deps.js';
import { ConversationSchema, errorResponses, TurnSchema } from '../schemas.js';

const tags = ['conversations'];

const list = createRoute({
  method: 'get',
  path: '/api/conversations',
  tags,
  summary: 'Your conversations, most recent first',
  request: { query: z.object({ limit: z.coerce.number().int().min(1).max(200).optional() }) },
  responses: {
    200: {
      description: 'ok',
      content: { 'application/json': { schema: z.object({ conversations: z.array(ConversationSchema) }) } },
    },
    ...errorResponses,
  },
});

const one = createRoute({
  method: 'get',
  path: '/api/conversations/{id}',
  tags,
  summary: 'One conversation with its recent turns (resume it by asking with its id)',
  request: {
    params: z.object({
      id: z
        .string()
        .min(1)
        .max(200)
        .openapi({ param: { name: 'id', in: 'path' } }),
    }),
    query: z.object({ turns: z.coerce.number().int().min(1).max(200).optional() }),
  },
  responses: {
    200: {
      description: 'ok',
      content: {
        'application/json': {
          schema: z.object({ conversation: ConversationSchema, turns: z.array(TurnSchema) }),
        },
      },
    },
    ...errorResponses,
  },
});

const idParam = z.object({
  id: z
    .string()
    .min(1)
    .max(200)
    .openapi({ param: { name: 'id', in: 'path' } }),
});

const rename = createRoute({
  method: 'patch',
  path: '/api/conversations/{id}',
  tags,
  summary: 'Rename one of your conversations',
  request: {
    params: idParam,
    body: {
      required: true,
      content: {
        'application/json': {
          schema: z.object({ title: z.string().trim().min(1).max(MAX_CONVERSATION_TITLE_LENGTH) }),
        },
      },
    },
  },
  responses: {
    200: {
      description: 'ok',
      content: { 'application/json': { schema: z.object({ conversation: ConversationSchema }) } },
    },
    ...errorResponses,
  },
});

const remove = createRoute({
  method: 'delete',
  path: '/api/conversations/{id}',
  tags,
  summary: 'Delete one of your conversations and its turns',
  request: { params: idParam },
  responses: {
    200: {
      description: 'ok',
      content: { 'application/json': { schema: z.object({ deleted: z.literal(true) }) } },
    },
    ...errorResponses,
  },
});

const NOT_FOUND = 'No conversation with this id in your conversations.';

/** Registers the conversation routes. */
export function registerConversations(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(list, async (c) => {
    const scope = { user: c.get('principal').user };
    const { store } = await deps.memory();
    const conversations = await store.listConversations(scope, c.req.valid('query').limit ?? 20);
    return c.json({ conversations }, 200);
  });

  app.openapi(one, async (c) => {
    const scope = { user: c.get('principal').user };
    const { id } = c.req.valid('param');
    const { store } = await deps.memory();
    const conversation = await store.getConversation(scope, id);
    if (!conversation) throw apiError('not_found', 'No conversation with this id in your conversations.');
    const turns = await store.recentTurns(scope, id, c.req.valid('query').turns ?? 50);
    return c.json({ conversation, turns }, 200);
  });

  app.openapi(rename, async (c) => {
    const scope = { user: c.get('principal').user };
    const { id } = c.req.valid('param');
    const { store } = await deps.memory();
    if (!(await store.renameConversation(scope, id, c.req.valid('json').title)))
      throw apiError('not_found', NOT_FOUND);
    const conversation = await store.getConversation(scope, id);
    if (!conversation) throw apiError('not_found', NOT_FOUND);
    return c.json({ conversation }, 200);
  });

  app.openapi(remove, async (c) => {
    const scope = { user: c.get('principal').user };
    const { id } = c.req.valid('param');
    const { store } = await deps.memory();
    if (!(await store.deleteConversation(scope, id))) throw apiError('not_found', NOT_FOUND);
    return c.json({ deleted: true as const }, 200);
  });
}
