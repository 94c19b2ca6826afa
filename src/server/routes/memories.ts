/**
 * Memory routes: list, search, add, edit, delete, restore, history, export, import, on/off, and
 * the queued facts (list, show, withdraw).
 * The scope always comes from the caller's token (`?scope=team` selects their team's memories:
 * readable by members, changeable by team admins); an id of another scope is "not found".
 */
import { createRoute, type OpenAPIHono, z } from '@hono/zod-openapi';
import {
  addMemory,
  auditMemories,
  deleteMemory,
  editMemory,
  exportMemories,
  findPendingMemory,
  forgetPendingMemory,
  getMemory,
  importMemories,
  listMemories,
  memoryEnabled,
  memoryHistory,
  pendingMemories,
  pendingNotFound,
  restoreMemory,
  searchMemories,
  setMemoryEnabled,
  showMemory,
} from '../../app/memory.js';
import type { MemoryKind, MemoryScope } from '../../core/memory.js';
import { untilOf, userTimeZone } from '../../memory/expiry.js';
import { type AppEnv, apiError, scopeFor } from '../context.js';
import type { ServerDeps } from '../deps.js';
import {
  AddMemorySchema,
  ChangeSchema,
  EditMemorySchema,
  errorResponses,
  HistorySchema,
  IdSchema,
  KindSchema,
  MemorySchema,
  ProvenanceSchema,
  ScopeQuery,
} from '../schemas.js';
import { optionalSchema, TIME_ZONE_HEADER, timeZoneOf } from './shared.js';

const json = <T extends z.ZodType>(schema: T, description = 'ok') => ({
  200: { description, content: { 'application/json': { schema } } },
  ...errorResponses,
});
const jsonBody = <T extends z.ZodType>(schema: T) => ({
  body: { required: true, content: { 'application/json': { schema } } },
});

const AuditEntrySchema = z.object({
  memoryId: z.string(),
  historyId: z.string().optional(),
  kind: z.string().optional(),
  status: z.string().optional(),
  found: z.array(z.object({ label: z.string(), masked: z.string() })),
});
const ScopeOut = z.object({ user: z.string().optional(), team: z.string().optional() });
const MemoryOut = z.object({ scope: ScopeOut, memory: MemorySchema });
const tags = ['memories'];
/** A fact taught while the model server was down, waiting in the queue (not yet a memory). */
const PendingMemorySchema = z
  .object({
    /** The queue entry's id (not a memory id): for show and withdraw. */
    pendingId: z.string(),
    kind: z.string(),
    text: z.string(),
    sql: z.string().nullable(),
    expiresAt: z.string().nullable(),
    expiresOn: z.string().nullable(),
    pinned: z.boolean(),
    /** `failed`: it will not be retried (`error` says why). */
    status: z.enum(['pending', 'running', 'failed']),
    attempts: z.number(),
    error: z.string().nullable(),
    createdAt: z.string(),
  })
  .openapi('PendingMemory');
/** A queue id in full or its first characters (at least 4), as listed. */
const PendingIdSchema = z
  .string()
  .regex(/^[0-9a-fA-F-]{4,36}$/, { error: 'expected a queue id (a UUID) or its first 4 or more characters' })
  .openapi({ param: { name: 'id', in: 'path' }, example: '3f2a9c1b' });
const AddedOut = z.object({
  scope: ScopeOut,
  changes: z.array(ChangeSchema),
  problems: z.array(z.string()),
  /** When the memory stops being recalled (an instant), from `until`; null: never. */
  expiresAt: z.string().nullable(),
  /** The last day it holds, as typed (`YYYY-MM-DD` in the user's time zone); null: never. */
  expiresOn: z.string().nullable(),
});

const routes = {
  list: createRoute({
    method: 'get',
    path: '/api/memories',
    tags,
    summary: 'List memories (active by default)',
    request: {
      query: ScopeQuery.extend({
        kind: KindSchema.optional(),
        status: z.enum(['active', 'all']).optional(),
      }),
    },
    responses: json(
      z.object({
        scope: ScopeOut,
        enabled: z.boolean(),
        memories: z.array(MemorySchema),
        /** Facts waiting in the queue for the model server (of `kind` when given). */
        pending: z.array(PendingMemorySchema),
      }),
    ),
  }),
  listPending: createRoute({
    method: 'get',
    path: '/api/memories/pending',
    tags,
    summary: 'Facts taught while the model server was down, waiting in the queue (not yet recalled)',
    request: { query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, pending: z.array(PendingMemorySchema) })),
  }),
  showPending: createRoute({
    method: 'get',
    path: '/api/memories/pending/{id}',
    tags,
    summary: "One queued fact by its queue id or a unique prefix (another scope's is not found)",
    request: { params: z.object({ id: PendingIdSchema }), query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, pending: PendingMemorySchema })),
  }),
  withdrawPending: createRoute({
    method: 'delete',
    path: '/api/memories/pending/{id}',
    tags,
    summary: 'Withdraw a queued fact for good: it is never applied',
    request: { params: z.object({ id: PendingIdSchema }), query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, withdrawn: PendingMemorySchema })),
  }),
  search: createRoute({
    method: 'get',
    path: '/api/memories/search',
    tags,
    summary: 'Search memories by similarity',
    request: {
      query: ScopeQuery.extend({
        q: z.string().trim().min(1).max(2000),
        topK: z.coerce.number().int().min(1).max(100).optional(),
      }),
    },
    responses: json(
      z.object({
        scope: ScopeOut,
        query: z.string(),
        results: z.array(MemorySchema),
        /** Said when the memories were found by their words (the embedding was degenerate). */
        notes: z.array(z.string()).optional(),
      }),
    ),
  }),
  add: createRoute({
    method: 'post',
    path: '/api/memories',
    tags,
    summary: 'Add a memory (exact and near duplicates become NOOP)',
    request: { query: ScopeQuery, ...jsonBody(AddMemorySchema) },
    responses: {
      ...json(AddedOut),
      202: {
        description:
          'the model server is unreachable: the fact is queued (`pending.id`) and taught when it answers again',
        content: {
          'application/json': {
            schema: AddedOut.extend({ pending: z.object({ id: z.string() }), message: z.string() }),
          },
        },
      },
    },
  }),
  edit: createRoute({
    method: 'patch',
    path: '/api/memories/{id}',
    tags,
    summary: 'Edit an active memory (history keeps the old text); `pinned` pins or unpins it',
    request: { params: z.object({ id: IdSchema }), query: ScopeQuery, ...jsonBody(EditMemorySchema) },
    responses: json(
      MemoryOut.extend({
        problems: z.array(z.string()),
        /** False when the body changed nothing (nothing was written). */
        changed: z.boolean(),
      }),
    ),
  }),
  remove: createRoute({
    method: 'delete',
    path: '/api/memories/{id}',
    tags,
    summary: 'Delete a memory (restorable)',
    request: { params: z.object({ id: IdSchema }), query: ScopeQuery },
    responses: json(MemoryOut),
  }),
  restore: createRoute({
    method: 'post',
    path: '/api/memories/{id}/restore',
    tags,
    summary: 'Restore a deleted memory',
    request: { params: z.object({ id: IdSchema }), query: ScopeQuery },
    responses: json(MemoryOut),
  }),
  history: createRoute({
    method: 'get',
    path: '/api/memories/{id}/history',
    tags,
    summary: 'History of one memory',
    request: { params: z.object({ id: IdSchema }), query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, history: z.array(HistorySchema) })),
  }),
  scopeHistory: createRoute({
    method: 'get',
    path: '/api/memories/history',
    tags,
    summary: 'History of every memory of the scope',
    request: { query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, history: z.array(HistorySchema) })),
  }),
  exportDoc: createRoute({
    method: 'get',
    path: '/api/memories/export',
    tags,
    summary: 'Export the scope (memories of every status and history, no embeddings)',
    request: { query: ScopeQuery },
    responses: json(z.object({}).passthrough()),
  }),
  importDoc: createRoute({
    method: 'post',
    path: '/api/memories/import',
    tags,
    summary:
      'Import an export document into the scope (re-embedded, duplicates skipped; a conflicting preference supersedes)',
    request: {
      query: ScopeQuery,
      ...jsonBody(z.object({ format: z.literal('sqlrecall-memory') }).passthrough()),
    },
    responses: json(
      z.object({
        scope: ScopeOut,
        imported: z.number(),
        duplicates: z.number(),
        /** Active preferences replaced by an imported one (same column, other value; restorable). */
        superseded: z.array(z.object({ id: z.string(), text: z.string(), by: z.string() })),
        /** Memories left out because they hold a credential (masked). */
        problems: z.array(z.string()),
      }),
    ),
  }),
  audit: createRoute({
    method: 'get',
    path: '/api/memories/audit',
    tags,
    summary:
      'Credentials already stored in the scope (memories of any status, history), masked; team scope: team admins only',
    request: { query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, found: z.array(AuditEntrySchema) })),
  }),
  auditDelete: createRoute({
    method: 'post',
    path: '/api/memories/audit/delete',
    tags,
    summary: 'Remove for good the memories and history entries that hold a credential (not restorable)',
    request: { query: ScopeQuery },
    responses: json(
      z.object({
        scope: ScopeOut,
        found: z.array(AuditEntrySchema),
        removed: z.object({ memories: z.number(), history: z.number() }),
      }),
    ),
  }),
  show: createRoute({
    method: 'get',
    path: '/api/memories/{id}',
    tags,
    summary:
      'One memory with where it came from (conversation, time, your words; or by hand, imported, confirmed answer), what it replaced and its history',
    request: { params: z.object({ id: IdSchema }), query: ScopeQuery },
    responses: json(ProvenanceSchema),
  }),
  getEnabled: createRoute({
    method: 'get',
    path: '/api/memories/enabled',
    tags,
    summary: 'Whether memory is on for the scope',
    request: { query: ScopeQuery },
    responses: json(z.object({ scope: ScopeOut, enabled: z.boolean() })),
  }),
  setEnabled: createRoute({
    method: 'put',
    path: '/api/memories/enabled',
    tags,
    summary: 'Turn memory on or off for the scope (memories are kept)',
    request: { query: ScopeQuery, ...jsonBody(z.object({ enabled: z.boolean() })) },
    responses: json(z.object({ scope: ScopeOut, enabled: z.boolean() })),
  }),
};

type Out = never;

/** Registers the memory routes. */
export function registerMemories(app: OpenAPIHono<AppEnv>, deps: ServerDeps): void {
  const scope = (
    c: { get(key: 'principal'): AppEnv['Variables']['principal'] },
    which: 'user' | 'team' | undefined,
    write: boolean,
  ): MemoryScope => scopeFor(c.get('principal'), which, write);
  /**
   * The zone days are read and shown in: `given` (a body's `timeZone`), else the browser's (the
   * header), else the server's. A zone that is sent but unknown is refused (422 `invalid_date`)
   * rather than replaced by the server's: a day read in another zone than the user's is the very
   * mistake the typed day exists to prevent, and the caller can fix what it sent.
   */
  const zoneOf = (c: { req: { header(name: string): string | undefined } }, given?: string) => {
    const sent = given ?? c.req.header(TIME_ZONE_HEADER);
    if (sent === undefined || sent.trim() === '') return userTimeZone();
    const zone = timeZoneOf(sent).timeZone;
    if (!zone)
      throw apiError(
        'invalid_date',
        `${given === undefined ? `The ${TIME_ZONE_HEADER} header` : 'timeZone'} must be an IANA time zone such as Europe/Berlin, not "${sent.trim().slice(0, 64)}".`,
      );
    return zone;
  };

  /** The memory if it belongs to the scope; otherwise `not_found` (never another scope's). */
  const owned = async (s: MemoryScope, id: string) => {
    const memory = await getMemory(await deps.memory(), s, id);
    if (!memory) throw apiError('not_found', 'No memory with this id in your memories.');
    return memory;
  };

  app.openapi(routes.list, async (c) => {
    const q = c.req.valid('query');
    const s = scope(c, q.scope, false);
    const listed = await listMemories(await deps.memory(), s, {
      all: q.status === 'all',
      ...(q.kind ? { kind: q.kind as MemoryKind } : {}),
      zone: zoneOf(c),
    });
    return c.json({ scope: s, ...listed } as Out, 200);
  });

  app.openapi(routes.search, async (c) => {
    const q = c.req.valid('query');
    const s = scope(c, q.scope, false);
    const { results, notes } = await searchMemories(await deps.memory(), s, q.q, {
      ...(q.topK !== undefined ? { topK: q.topK } : {}),
      zone: zoneOf(c),
    });
    return c.json({ scope: s, query: q.q, results, ...(notes.length > 0 ? { notes } : {}) } as Out, 200);
  });

  app.openapi(routes.add, async (c) => {
    const s = scope(c, c.req.valid('query').scope, true);
    const body = c.req.valid('json');
    const zone = zoneOf(c, body.timeZone);
    const until = body.until === undefined ? null : untilOf(body.until, new Date(), zone);
    const expiresAt = until?.expiresAt ?? null;
    const expiresOn = until?.expiresOn ?? null;
    const result = await addMemory(
      await deps.memory(),
      s,
      { kind: body.kind as MemoryKind, text: body.text, sql: body.sql ?? null },
      { schema: await optionalSchema(deps), expiresAt, expiresOn, pinned: body.pinned === true },
    );
    if (result.pending)
      return c.json(
        // The teaching path's own sentence for a queued fact ("Saved; it will be applied …").
        { scope: s, ...result, message: result.problems.join(' '), expiresAt, expiresOn } as Out,
        202,
      );
    return c.json({ scope: s, ...result, expiresAt, expiresOn } as Out, 200);
  });

  app.openapi(routes.edit, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, true);
    const body = c.req.valid('json');
    const zone = zoneOf(c);
    const current = await owned(s, id);
    if (current.status !== 'active')
      throw apiError('not_found', 'This memory is not active; restore it first.');
    const edited = await editMemory(
      await deps.memory(),
      s,
      current.id,
      {
        kind: body.kind as MemoryKind | undefined,
        text: body.text,
        sql: body.sql,
        pinned: body.pinned,
        ...(body.until === undefined ? {} : { until: untilOf(body.until, new Date(), zone) }),
      },
      { schema: await optionalSchema(deps), zone },
    );
    return c.json(
      { scope: s, memory: edited.memory, problems: edited.problems, changed: edited.changed } as Out,
      200,
    );
  });

  app.openapi(routes.remove, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, true);
    const current = await owned(s, id);
    const memory = await deleteMemory(await deps.memory(), s, current.id, zoneOf(c));
    return c.json({ scope: s, memory } as Out, 200);
  });

  app.openapi(routes.restore, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, true);
    const current = await owned(s, id);
    const memory = await restoreMemory(await deps.memory(), s, current.id, zoneOf(c));
    return c.json({ scope: s, memory } as Out, 200);
  });

  app.openapi(routes.history, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, false);
    const current = await owned(s, id);
    const history = await memoryHistory(await deps.memory(), s, current.id);
    return c.json({ scope: s, history } as Out, 200);
  });

  app.openapi(routes.scopeHistory, async (c) => {
    const s = scope(c, c.req.valid('query').scope, false);
    const history = await memoryHistory(await deps.memory(), s);
    return c.json({ scope: s, history } as Out, 200);
  });

  app.openapi(routes.exportDoc, async (c) => {
    const s = scope(c, c.req.valid('query').scope, false);
    const doc = await exportMemories(await deps.memory(), s);
    c.header('Content-Disposition', 'attachment; filename="sqlrecall-memories.json"');
    return c.json(doc as Out, 200);
  });

  app.openapi(routes.importDoc, async (c) => {
    const s = scope(c, c.req.valid('query').scope, true);
    const doc = c.req.valid('json');
    const result = await importMemories(await deps.memory(), s, doc);
    return c.json(
      {
        scope: s,
        imported: result.imported,
        duplicates: result.duplicates,
        superseded: result.superseded,
        problems: result.problems,
      } as Out,
      200,
    );
  });

  app.openapi(routes.listPending, async (c) => {
    const s = scope(c, c.req.valid('query').scope, false);
    return c.json({ scope: s, pending: await pendingMemories(await deps.memory(), s) } as Out, 200);
  });

  app.openapi(routes.showPending, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, false);
    const pending = await findPendingMemory(await deps.memory(), s, id);
    if (!pending) throw pendingNotFound(id);
    return c.json({ scope: s, pending } as Out, 200);
  });

  app.openapi(routes.withdrawPending, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, true);
    const withdrawn = await forgetPendingMemory(await deps.memory(), s, id);
    return c.json({ scope: s, withdrawn } as Out, 200);
  });

  // An admin tool: on a team scope it needs the team-admin role even to read (write = true).
  app.openapi(routes.audit, async (c) => {
    const s = scope(c, c.req.valid('query').scope, true);
    const audit = await auditMemories(await deps.memory(), s);
    return c.json({ scope: s, found: audit.found } as Out, 200);
  });

  app.openapi(routes.auditDelete, async (c) => {
    const s = scope(c, c.req.valid('query').scope, true);
    const audit = await auditMemories(await deps.memory(), s, { remove: true });
    return c.json({ scope: s, found: audit.found, removed: audit.removed } as Out, 200);
  });

  app.openapi(routes.getEnabled, async (c) => {
    const s = scope(c, c.req.valid('query').scope, false);
    return c.json({ scope: s, enabled: await memoryEnabled(await deps.memory(), s) } as Out, 200);
  });

  app.openapi(routes.setEnabled, async (c) => {
    const s = scope(c, c.req.valid('query').scope, true);
    const { enabled } = c.req.valid('json');
    await setMemoryEnabled(await deps.memory(), s, enabled);
    return c.json({ scope: s, enabled } as Out, 200);
  });

  // Registered last: `/api/memories/search`, `/export`, `/enabled`, `/history` and `/pending` match first.
  app.openapi(routes.show, async (c) => {
    const { id } = c.req.valid('param');
    const s = scope(c, c.req.valid('query').scope, false);
    const provenance = await showMemory(await deps.memory(), s, id, zoneOf(c));
    if (!provenance) throw apiError('not_found', 'No memory with this id in your memories.');
    return c.json({ scope: s, ...provenance } as Out, 200);
  });
}
