/**
 * The zod schemas of the HTTP API: request bodies, query strings and responses. They validate
 * every request and generate `/openapi.json`.
 */
import { z } from '@hono/zod-openapi';
import { MAX_QUESTION_CHARS } from '../core/limits.js';
import { MEMORY_KINDS } from '../core/memory.js';
import { MEMORY_TEXT_INPUT_BOUND } from '../memory/limits.js';

/** `{error: {code, message}}`: the one error shape, with the status from `ERROR_TABLE`. */
export const ErrorSchema = z
  .object({
    error: z.object({
      code: z.string().openapi({ example: 'not_found' }),
      message: z.string(),
      hint: z.string().optional(),
    }),
  })
  .openapi('Error');

/** Standard error responses of a route, by status. */
export const errorResponses = {
  400: { description: 'invalid request', content: { 'application/json': { schema: ErrorSchema } } },
  401: {
    description: 'no or unknown access token',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  403: {
    description: 'not allowed (team memories need the team-admin role)',
    content: { 'application/json': { schema: ErrorSchema } },
  },
  404: { description: 'not found (or not yours)', content: { 'application/json': { schema: ErrorSchema } } },
  500: { description: 'server error', content: { 'application/json': { schema: ErrorSchema } } },
} as const;

/** Memory kinds as an enum. */
export const KindSchema = z.enum(MEMORY_KINDS).openapi('MemoryKind');

/** Memory statuses. */
export const StatusSchema = z.enum(['active', 'superseded', 'deleted']);

/** A memory id (UUID; matched only within the caller's scope). */
export const IdSchema = z
  .string()
  .regex(/^[0-9a-fA-F-]{36}$/, { error: 'expected a memory id (a UUID)' })
  .openapi({ param: { name: 'id', in: 'path' }, example: '3f2a9c1b-0000-4000-8000-000000000000' });

/** `scope=user` (default: your own memories) or `scope=team` (your team's shared memories). */
export const ScopeQuery = z.object({ scope: z.enum(['user', 'team']).optional() });

/** A stored memory, without its embedding. */
export const MemorySchema = z
  .object({
    id: z.string(),
    scope: z.object({ user: z.string().optional(), team: z.string().optional() }),
    kind: z.string(),
    text: z.string(),
    sql: z.string().nullable(),
    tables: z.array(z.string()),
    columns: z.array(z.string()),
    embeddingModel: z.string(),
    contentHash: z.string(),
    status: z.string(),
    supersedes: z.string().nullable(),
    sourceMessageId: z.string().nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    expiresAt: z.string().nullable(),
    /** The last day it holds, as the user typed it (`YYYY-MM-DD` in their time zone); null: never expires. */
    expiresOn: z.string().nullable().optional(),
    /** Pinned memories are always recalled. */
    pinned: z.boolean().default(false),
    /** Where it came from: how (chat, hand, import, confirmed), the conversation, the user's words; null when not recorded. */
    origin: z
      .object({
        how: z.enum(['chat', 'hand', 'import', 'confirmed']),
        conversationId: z.string().nullable().optional(),
        words: z.string().nullable().optional(),
      })
      .nullable()
      .optional(),
    /** When an answer last applied it (its condition verified in the SQL); null: never. */
    lastAppliedAt: z.string().nullable().optional(),
    similarity: z.number().optional(),
  })
  .openapi('Memory');

/** Where one memory came from, ready to show (see `memory/provenance.ts`). */
export const OriginSchema = z
  .object({
    how: z.enum(['chat', 'hand', 'import', 'confirmed', 'unknown']),
    summary: z.string(),
    at: z.string(),
    conversation: z.object({ id: z.string(), title: z.string().nullable(), exists: z.boolean() }).nullable(),
    words: z.string().nullable(),
  })
  .openapi('MemoryOrigin');

const MemoryWithOriginSchema = z.object({
  id: z.string(),
  kind: z.string(),
  text: z.string(),
  sql: z.string().nullable(),
  status: z.string(),
  origin: OriginSchema,
});

/** One history entry of a memory. */
export const HistorySchema = z
  .object({
    id: z.string(),
    memoryId: z.string(),
    action: z.string(),
    oldText: z.string().nullable(),
    newText: z.string().nullable(),
    reason: z.string().nullable(),
    /** The SQL condition before and after the change (ADD, UPDATE). */
    oldSql: z.string().nullable().optional(),
    newSql: z.string().nullable().optional(),
    /** The pinned state a pin/unpin entry set (null for other entries). */
    pinned: z.boolean().nullable().optional(),
    createdAt: z.string(),
  })
  .openapi('MemoryHistoryEntry');

/** A change a message or a call made to memories. */
export const ChangeSchema = z
  .object({
    action: z.string(),
    id: z.string().nullable(),
    kind: z.string(),
    text: z.string(),
    reason: z.string().optional(),
    /** For SUPERSEDE: the memory replaced (kept in the history; restorable). */
    replaced: z.object({ id: z.string(), text: z.string() }).optional(),
    /** True when the memory was stored pinned. */
    pinned: z.boolean().optional(),
  })
  .openapi('MemoryChange');

const text = (max: number) =>
  z
    .string()
    .trim()
    .min(1, { error: 'must not be empty' })
    .max(max, { error: `is longer than ${max.toLocaleString('en')} characters, the limit` });

/** Body of `POST /api/ask`. */
export const AskBodySchema = z
  .object({
    // An empty question is refused by the use case, worded as on every other surface.
    question: z
      .string()
      .trim()
      .max(MAX_QUESTION_CHARS, {
        error: `is longer than ${MAX_QUESTION_CHARS.toLocaleString('en')} characters, the limit`,
      })
      .openapi({ example: 'top 5 customers by revenue' }),
    conversationId: z.string().min(1).max(200).optional(),
    /** Memory ids not to apply to this question (the chips the user switched off). */
    without: z.array(z.string().min(4).max(64)).max(50).optional(),
    /** Skip the written answer (SQL and rows only). */
    skipAnswer: z.boolean().optional(),
  })
  .openapi('AskRequest');

/** The result table of an answer. */
export const ChartSchema = z
  .object({
    type: z.enum(['bar', 'line']),
    /** The category or date column (x axis). */
    x: z.string(),
    /** Numeric columns (one series each). */
    series: z.array(z.string()),
  })
  .openapi('ChartSpec');

/**
 * `POST /api/ask` with `Accept: application/json`: the ask document, the same as `ask --json` and
 * the MCP `ask` tool print (`app/ask.ts`).
 */
export const AskResponseSchema = z
  .object({
    question: z.string(),
    sql: z.string().nullable(),
    /** Column names, in order (their types are `columnTypes`). */
    columns: z.array(z.string()),
    /** Type name of each column (docs/operations.md, "How values reach you"). */
    columnTypes: z.array(z.string()),
    rows: z.array(z.array(z.unknown())),
    rowCount: z.number(),
    truncated: z.boolean(),
    truncatedReason: z.enum(['max_rows', 'max_bytes']).optional(),
    answer: z.string().nullable(),
    /** Memories whose predicate was verified in the SQL. */
    appliedMemories: z.array(z.object({ id: z.string(), kind: z.string(), text: z.string() })),
    /** Memories that reached the prompt but could not be verified in the SQL. */
    recalledMemories: z.array(z.object({ id: z.string(), kind: z.string(), text: z.string() })),
    /** Standing preferences set aside for this question (it asked for what they filter out), with why. */
    setAsideMemories: z
      .array(z.object({ id: z.string(), kind: z.string(), text: z.string(), reason: z.string() }))
      .optional(),
    attempts: z.array(z.object({ sql: z.string(), error: z.string().optional() })),
    chart: ChartSchema.nullable(),
    /** The message's kind; null when it was not classified (memory off, answered without the model). */
    kind: z.string().nullable(),
    remembered: z.array(ChangeSchema).optional(),
    memoryProblems: z.array(z.string()).optional(),
    /** The conversation of this turn; null when none is kept (memory off). */
    conversationId: z.string().nullable(),
    unanswerable: z.string().optional(),
    /** Which path answered: `example` (a reused saved example) or `rules`; absent: the model. */
    path: z.enum(['model', 'example', 'rules']).optional(),
    /** The saved example reused (path `example`). */
    exampleId: z.string().optional(),
    privacyMode: z.boolean().optional(),
  })
  .openapi('AskResponse');

/** Body of `POST /api/memories`. */
export const AddMemorySchema = z
  .object({
    kind: KindSchema.default('preference'),
    text: text(MEMORY_TEXT_INPUT_BOUND),
    sql: z.string().max(4000).nullable().optional(),
    /** Store it pinned (always recalled); default false. */
    pinned: z.boolean().optional(),
    /**
     * The last day it applies: `YYYY-MM-DD` or a phrase such as `friday`, `this week`, `3 days`; it
     * lasts through the end of that day in the caller's time zone (`timeZone`, else the
     * `X-Sqlrecall-Time-Zone` header, else the server's zone).
     */
    until: z.string().trim().min(1).max(40).optional(),
    /** IANA time zone for `until` (e.g. `America/Los_Angeles`). */
    timeZone: z.string().trim().min(1).max(64).optional(),
  })
  .openapi('NewMemory');

/** Body of `PATCH /api/memories/{id}`. */
export const EditMemorySchema = z
  .object({
    kind: KindSchema.optional(),
    text: text(MEMORY_TEXT_INPUT_BOUND).optional(),
    sql: z.string().max(4000).nullable().optional(),
    /** Pin (true) or unpin (false); alone, it changes nothing else (no re-embedding). */
    pinned: z.boolean().optional(),
    /** A new last day, as in `NewMemory.until` (the `X-Sqlrecall-Time-Zone` header's zone); absent: kept. */
    until: z.string().trim().min(1).max(40).optional(),
  })
  .openapi('MemoryEdit');

/** Body of `POST /api/feedback`. */
export const FeedbackSchema = z
  .object({
    rating: z.enum(['up', 'down']),
    question: text(4000),
    /** The SQL of the answer (thumbs up) — stored as an example. */
    sql: z.string().max(20_000).optional(),
    /** Thumbs down: the corrected SQL, stored as the example instead. */
    correctedSql: z.string().max(20_000).optional(),
  })
  .openapi('Feedback');

/** A conversation. */
export const ConversationSchema = z
  .object({
    id: z.string(),
    summary: z.string().nullable(),
    /** The name the user gave it (rename), null until set. */
    title: z.string().nullable().optional(),
    /** Its first question (a default name). */
    firstQuestion: z.string().nullable().optional(),
    turnCount: z.number(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .openapi('Conversation');

const TurnMemorySchema = z.object({ id: z.string(), kind: z.string(), text: z.string() });

/** A conversation turn: its question, SQL (rows are not stored), answer summary and memories. */
export const TurnSchema = z
  .object({
    id: z.string(),
    conversationId: z.string(),
    question: z.string(),
    sql: z.string().nullable(),
    rowCount: z.number().nullable(),
    summary: z.string().nullable(),
    /** Memories applied to the answer (verified in its SQL), as they were then. */
    appliedMemories: z.array(TurnMemorySchema),
    /** Memories shown to the model but not verified in the SQL, as they were then. */
    recalledMemories: z.array(TurnMemorySchema),
    createdAt: z.string(),
  })
  .openapi('ConversationTurn');

/** `GET /api/memories/{id}`: a memory with its provenance. */
export const ProvenanceSchema = z
  .object({
    scope: z.object({ user: z.string().optional(), team: z.string().optional() }),
    memory: MemorySchema,
    origin: OriginSchema,
    lastAppliedAt: z.string().nullable(),
    /** Its state to its owner: `expired` is an active memory whose last day is over. */
    status: z.enum(['active', 'expired', 'superseded', 'deleted']),
    /** The state in words: `expired on 2026-12-01`, `active, until 2026-12-31`, `superseded`. */
    statusText: z.string(),
    /** The memories it replaced, the most recent first. */
    replaced: z.array(MemoryWithOriginSchema),
    /** The memory that replaced it (when superseded). */
    replacedBy: MemoryWithOriginSchema.nullable(),
    history: z.array(HistorySchema),
  })
  .openapi('MemoryProvenance');
