/**
 * Conversation routes: list the caller's conversations, read one (to resume it, ask with its
 * `conversationId`), rename and delete one. Ids are looked up in the caller's scope only: another
 * user's id is `404 not_found`, exactly like an id that does not exist.
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  deleteConversation,
  listConversations,
  renameConversation,
  showConversation,
} from '../../app/conversations.js';
import { MAX_CONVERSATION_TITLE_LENGTH } from '../../memory/store/types.js';
import type { AppEnv } from '../context.js';
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

/** Registers the conversation routes. */
export function registerConversations(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  app.openapi(list, async (c) => {
    const scope = { user: c.get('principal').user };
    const conversations = await listConversations(await deps.memory(), scope, c.req.valid('query'));
    return c.json({ conversations }, 200);
  });

  app.openapi(one, async (c) => {
    const scope = { user: c.get('principal').user };
    const { id } = c.req.valid('param');
    const shown = await showConversation(await deps.memory(), scope, id, c.req.valid('query'));
    return c.json(shown, 200);
  });

  app.openapi(rename, async (c) => {
    const scope = { user: c.get('principal').user };
    const { id } = c.req.valid('param');
    const conversation = await renameConversation(await deps.memory(), scope, id, c.req.valid('json').title);
    return c.json({ conversation }, 200);
  });

  app.openapi(remove, async (c) => {
    const scope = { user: c.get('principal').user };
    await deleteConversation(await deps.memory(), scope, c.req.valid('param').id);
    return c.json({ deleted: true as const }, 200);
  });
}
