/**
 * `sqlrecall mcp`: the Model Context Protocol server. One process serves exactly
 * one user (from `--user` / SQLRECALL_USER / the OS user), never a user named in tool arguments;
 * every tool runs through the same Runtime as the CLI: `ask` through the Assistant pipeline
 * (guard, read-only execution, repairs, memory), `sql` through the guard, `schema` and
 * `schema_context` through introspection and schema linking, `remember`/`recall`/`forget` on that
 * one user's memories. Results are bounded (row cap, byte cap); failures are MCP tool errors
 * (`isError: true`) whose text is `{"error":{"code","message","hint"?}}` with the product's codes.
 *
 * stdout carries only the protocol; every log line goes to `log` (stderr in the CLI).
 */
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { askToEnd } from '../app/ask.js';
import { errorDocument } from '../app/error-document.js';
import {
  addMemory,
  auditMemories,
  findPendingMemory,
  forgetPendingMemory,
  listMemories,
  type MemoryView,
  memoryEnabled,
  memoryView,
  resolveMemoryId,
  searchMemories,
  showMemory,
} from '../app/memory.js';
import { runSql, sqlDocument, sqlFailureDocument, sqlRuntimeOf } from '../app/run-sql.js';
import { readSchema, schemaText } from '../app/schema.js';
import { schemaContext } from '../app/schema-context.js';
import { NO_STATEMENT, policyOrRecordedRefusal } from '../audit/policy-refusal.js';
import type { Config } from '../config/config.js';
import { SqlrecallError, toSqlrecallError } from '../core/errors.js';
import { MAX_QUESTION_CHARS } from '../core/limits.js';
import { DEFAULT_MEMORY_TOP_K, MEMORY_KINDS, type MemoryScope } from '../core/memory.js';
import { redactSecrets } from '../core/redact.js';
import { untilOf, userTimeZone } from '../memory/expiry.js';
import { MAX_MEMORY_TEXT_CHARS, MEMORY_TEXT_INPUT_BOUND } from '../memory/limits.js';
import type { Runtime } from '../runtime/runtime.js';
import { boundedJson, boundedText } from './bounds.js';
import type { RuntimeLease } from './lease.js';

export { MCP_TOOLS } from './tools.js';

/** Longest statement accepted by the `sql` tool: 10,000 characters (a pasted query, not a dump). */
export const MCP_MAX_INPUT_CHARS = 10_000;

/** Options of {@link createMcpServer}. */
export interface McpServerOptions {
  /** The configuration (its `user` is the one user served; `team` whose shared memories apply). */
  config: Config;
  /** Lends the live objects (database, models, memory) to each call; see {@link RuntimeLease}. */
  runtime: RuntimeLease;
  /** Byte cap of each tool result's text (UTF-8); see `DEFAULT_MCP_MAX_BYTES`. */
  maxBytes: number;
  /** One-line logs (the CLI writes them to stderr; never stdout). */
  log: (message: string) => void;
  /** Server version reported to clients. */
  version: string;
}

/** The error text of a failed tool call: `{"error":{"code","message","hint"?}}`, never a stack. */
export function toolError(error: unknown): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text: JSON.stringify({ error: errorDocument(error) }) }],
  };
}

function textResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }] };
}

// Empty input is refused by the use case (`checkQuestion`, `runSql`), worded as on every surface.
const question = z
  .string()
  .trim()
  .max(
    MAX_QUESTION_CHARS,
    `A question is at most ${MAX_QUESTION_CHARS.toLocaleString('en')} characters (the limit of every surface).`,
  );

/**
 * Input schemas of the tools. Strict objects: an unknown field (notably `user`) is refused, so a
 * client can never pick whose memories are read or written.
 */
export const MCP_INPUTS = {
  ask: z.strictObject({
    question: question.describe('the question, in plain language'),
    answer: z.boolean().optional().describe('write a short answer from the rows (default true)'),
    conversation_id: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('continue this conversation (from an earlier result): follow-ups see its SQL'),
    without: z
      .array(z.string().trim().min(4).max(64))
      .max(50)
      .optional()
      .describe('memory ids (or 8-character prefixes) not to apply to this question'),
  }),
  sql: z.strictObject({
    sql: z
      .string()
      .trim()
      .max(MCP_MAX_INPUT_CHARS, `At most ${MCP_MAX_INPUT_CHARS} characters.`)
      .describe('one read-only statement (SELECT/WITH/VALUES/TABLE/EXPLAIN)'),
  }),
  schema: z.strictObject({
    table: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .describe('one table as schema.name or name; default every table'),
  }),
  schema_context: z.strictObject({ question: question.describe('the question, in plain language') }),
  remember: z.strictObject({
    text: z
      .string()
      .trim()
      .min(1, 'Give the fact to remember.')
      // Bounded far above the memory text limit, whose own refusal quotes what arrived.
      .max(MEMORY_TEXT_INPUT_BOUND, `At most ${MAX_MEMORY_TEXT_CHARS} characters.`)
      .describe('the fact, e.g. "Only count delivered orders as revenue"'),
    kind: z
      .enum(MEMORY_KINDS)
      .optional()
      .describe('preference (default), term, metric, entity, example or context'),
    sql: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .optional()
      .describe('its SQL form, e.g. "orders.status = \'delivered\'" (checked against the schema)'),
    until: z
      .string()
      .trim()
      .min(1)
      .max(40)
      .optional()
      .describe('the last day it holds: YYYY-MM-DD, a weekday, "this week" or "3 days" (SQLRECALL_TZ)'),
  }),
  recall: z.strictObject({
    query: z
      .string()
      .trim()
      .min(1)
      .max(2000)
      .optional()
      .describe('text to search memories by meaning; omit to list every active memory'),
    top_k: z
      .number()
      .int()
      .min(1)
      .max(100)
      .optional()
      .describe(`most results of a search (default ${DEFAULT_MEMORY_TOP_K})`),
  }),
  audit_memory: z.strictObject({
    delete: z
      .boolean()
      .optional()
      .describe('true: remove for good what was found (not restorable); default false: only report it'),
  }),
  show_memory: z.strictObject({
    id: z
      .string()
      .trim()
      .min(4, 'Give the memory id (as returned by ask or recall) or its first 8 characters.')
      .max(64)
      .describe('a memory id or its 8-character prefix (as listed by ask and recall), or a queue id'),
  }),
  forget: z.strictObject({
    target: z
      .string()
      .trim()
      .min(1, 'Give the id (as returned by recall) or the words of the memory to forget.')
      .max(2000)
      .describe('a memory id, an 8-character prefix, or words that designate exactly one memory'),
  }),
} as const;

/** Most memories listed by `recall` without a query (the byte cap applies too). */
const RECALL_LIST_LIMIT = 200;

/**
 * Builds the MCP server with its tools and schema resources (not yet connected to a transport).
 */
export function createMcpServer(options: McpServerOptions): McpServer {
  const { config, runtime: lease, maxBytes, log } = options;
  const scope: MemoryScope = { user: config.user };
  // One process, one user: their data policy decides what the tools and resources show.
  const policyOf = (runtime: Runtime) =>
    runtime.policyFor(config.user, config.team !== undefined ? { team: config.team } : {});
  const server = new McpServer(
    { name: 'sqlrecall', version: options.version },
    {
      instructions:
        `Ask questions about the user's PostgreSQL database in plain language with "ask" ` +
        `(it writes read-only SQL, runs it and answers; the user's memories apply). "sql" runs your own ` +
        `read-only statement through the same guard. "schema"/"schema_context" show the catalog. ` +
        `"remember", "recall", "forget", "show_memory" and "audit_memory" manage the memories of user ${config.user}.`,
    },
  );

  // The SDK answers invalid arguments (and unknown tools) with a tool error carrying a bare
  // message; give those the product's error shape too (code `usage`). Our tool bodies never throw
  // (see `guarded`), so only the SDK's own failures reach this method.
  // `createToolError` is private in the SDK's declaration, hence the one cast that stays here.
  const sdk = server as unknown as { createToolError: (message: string) => CallToolResult };
  sdk.createToolError = (message: string) =>
    toolError(
      new SqlrecallError('usage', message.replace(/^MCP error -?\d+: /, ''), {
        details: /\buser\b/.test(message)
          ? {
              hint: `This server serves one user (${config.user}), chosen when it starts with --user; tool arguments cannot name a user.`,
            }
          : {},
      }),
    );

  const bounded = (value: unknown) => textResult(boundedText(value, maxBytes));

  /**
   * Runs a tool body, turning every failure into an MCP tool error with the product's code. The body
   * gets the request's abort signal: a client's `notifications/cancelled` (the user pressed stop)
   * stops the model request and cancels the running statement on the server, as Ctrl-C does.
   */
  const guarded =
    <A>(name: string, body: (args: A, runtime: Runtime, signal: AbortSignal) => Promise<CallToolResult>) =>
    async (args: A, extra: { signal: AbortSignal }): Promise<CallToolResult> => {
      const started = Date.now();
      try {
        const result = await lease.use((runtime) => body(args, runtime, extra.signal));
        log(`mcp: ${name} ok in ${Date.now() - started} ms`);
        return result;
      } catch (error) {
        const err = toSqlrecallError(error);
        if (extra.signal.aborted) log(`mcp: ${name} cancelled after ${Date.now() - started} ms`);
        else log(`mcp: ${name} failed: ${err.code}: ${redactSecrets(err.message)}`);
        return toolError(err);
      }
    };

  server.registerTool(
    'ask',
    {
      title: 'Ask the database',
      description:
        'Answer a question about the database: returns the SQL written, the rows (capped), a short ' +
        'answer grounded in the rows, the memories applied (verified in the SQL) and those recalled ' +
        '(shown to the model, not verified). Instructions such as ' +
        '"always show amounts in EUR" are remembered for this user.',
      inputSchema: MCP_INPUTS.ask,
      annotations: { readOnlyHint: false, openWorldHint: false },
    },
    guarded('ask', async (args: z.infer<typeof MCP_INPUTS.ask>, runtime, signal) => {
      const onStatement = runtime.auditListener({
        user: config.user,
        frontEnd: 'mcp',
        question: args.question,
      });
      // A policy that cannot be decided (an invalid file) refuses the question: recorded too.
      const policy = await policyOrRecordedRefusal(() => policyOf(runtime), onStatement, {
        sql: NO_STATEMENT,
        origin: 'model',
      });
      const end = await askToEnd(() => runtime.assistant(), {
        user: config.user,
        ...(config.team !== undefined ? { team: config.team } : {}),
        policy,
        question: args.question,
        ...(args.answer === false ? { skipAnswer: true } : {}),
        ...(args.conversation_id !== undefined ? { conversationId: args.conversation_id } : {}),
        ...(args.without !== undefined ? { without: args.without } : {}),
        signal,
        onStatement,
      });
      if (end.ok) return textResult(boundedJson(end.doc, maxBytes));
      // A failed question: the same document as `ask --json` and the HTTP API give, as a tool error.
      log(`mcp: ask failed: ${end.error.code}: ${redactSecrets(end.error.message)}`);
      return { isError: true, content: [{ type: 'text', text: boundedJson(end.doc, maxBytes) }] };
    }),
  );

  server.registerTool(
    'sql',
    {
      title: 'Run read-only SQL',
      description:
        'Run one statement through the same read-only guard, row cap and timeout as "ask", without ' +
        'a model. Writes, DDL, session changes and dangerous functions are refused (code guard_refused).',
      inputSchema: MCP_INPUTS.sql,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('sql', async (args: z.infer<typeof MCP_INPUTS.sql>, runtime, signal) => {
      const onStatement = runtime.auditListener({ user: config.user, frontEnd: 'mcp' });
      let run: Awaited<ReturnType<typeof runSql>>;
      try {
        // A policy that cannot be decided (an invalid file) refuses the statement: recorded too.
        const policy = await policyOrRecordedRefusal(() => policyOf(runtime), onStatement, {
          sql: args.sql,
          origin: 'person',
        });
        run = await runSql(
          {
            sql: args.sql,
            signal,
            user: config.user,
            ...(config.team !== undefined ? { team: config.team } : {}),
            policy,
            onStatement,
          },
          sqlRuntimeOf(runtime),
        );
      } catch (error) {
        // The failure document of every front end (the statement with its error), as a tool error.
        if (signal.aborted) throw error;
        const err = toSqlrecallError(error);
        log(`mcp: sql failed: ${err.code}: ${redactSecrets(err.message)}`);
        return {
          isError: true,
          content: [{ type: 'text', text: JSON.stringify(sqlFailureDocument(args.sql, err)) }],
        };
      }
      return textResult(boundedJson(sqlDocument(run), maxBytes));
    }),
  );

  server.registerTool(
    'schema',
    {
      title: 'Database schema',
      description:
        'The catalog as the model sees it: tables, columns, types, keys and comments (one table with "table").',
      inputSchema: MCP_INPUTS.schema,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('schema', async (args: z.infer<typeof MCP_INPUTS.schema>, runtime) =>
      bounded(
        schemaText(
          await readSchema(runtime, {
            policy: await policyOf(runtime),
            ...(args.table !== undefined ? { table: args.table } : {}),
          }),
        ),
      ),
    ),
  );

  server.registerTool(
    'schema_context',
    {
      title: 'Tables for a question',
      description:
        'The tables and columns that would be shown to the model for a question, why each was chosen, ' +
        'and the estimated prompt tokens.',
      inputSchema: MCP_INPUTS.schema_context,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('schema_context', async (args: z.infer<typeof MCP_INPUTS.schema_context>, runtime) =>
      bounded(
        await schemaContext(
          runtime,
          args.question,
          { onWarning: (message) => log(`warning: ${message}`) },
          { policy: await policyOf(runtime) },
        ),
      ),
    ),
  );

  server.registerTool(
    'remember',
    {
      title: 'Remember a fact',
      description: `Store a fact, preference or definition for user ${config.user}; later questions apply it.`,
      inputSchema: MCP_INPUTS.remember,
      annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    },
    guarded('remember', async (args: z.infer<typeof MCP_INPUTS.remember>, runtime) => {
      const until = args.until === undefined ? null : untilOf(args.until, new Date(), userTimeZone());
      // Model server down: the fact is queued (`pending`) and applied when it answers.
      const memory = await runtime.memory({ queueWhenDown: true });
      const schema = config.databaseUrl ? await runtime.catalog() : undefined;
      const result = await addMemory(
        memory,
        scope,
        { kind: args.kind ?? 'preference', text: args.text, sql: args.sql },
        { schema, expiresAt: until?.expiresAt ?? null, expiresOn: until?.expiresOn ?? null },
      );
      return bounded({
        user: config.user,
        changes: result.changes,
        problems: result.problems,
        sqlSource: result.sqlSource,
        ...(result.pending ? { pending: result.pending } : {}),
        expiresAt: until?.expiresAt ?? null,
        expiresOn: until?.expiresOn ?? null,
      });
    }),
  );

  server.registerTool(
    'recall',
    {
      title: 'Recall memories',
      description: `Search user ${config.user}'s memories by meaning, or list them all (ids for "forget").`,
      inputSchema: MCP_INPUTS.recall,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('recall', async (args: z.infer<typeof MCP_INPUTS.recall>, runtime) => {
      // Listing opens even a fresh store with the model server down: its queue is all there is to show.
      const list = args.query === undefined;
      const memory = await runtime.memory({ allowWithoutEmbeddings: list, queueWhenDown: list });
      const zone = userTimeZone();
      if (args.query === undefined) {
        const { enabled, memories, pending } = await listMemories(memory, scope, {
          limit: RECALL_LIST_LIMIT,
          zone,
        });
        // Queued facts are listed apart: not memories yet (not recalled), withdrawn by `forget`.
        return bounded({ user: config.user, enabled, memories: memories.map(brief), pending });
      }
      const enabled = await memoryEnabled(memory, scope);
      const { results, notes } = await searchMemories(memory, scope, args.query, {
        topK: args.top_k ?? DEFAULT_MEMORY_TOP_K,
        zone,
      });
      return bounded({
        user: config.user,
        enabled,
        query: args.query,
        memories: results.map((m) => ({
          ...brief(m),
          ...(m.similarity !== undefined ? { similarity: Number(m.similarity.toFixed(4)) } : {}),
        })),
        ...(notes.length > 0 ? { notes } : {}),
      });
    }),
  );

  server.registerTool(
    'forget',
    {
      title: 'Forget a memory',
      description:
        `Delete one of user ${config.user}'s memories by id (or prefix) or by words that designate ` +
        'exactly one (ambiguous targets delete nothing and list the candidates), or withdraw a fact ' +
        'still queued for the model server by its queue id (listed by "recall" under pending).',
      inputSchema: MCP_INPUTS.forget,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    guarded('forget', async (args: z.infer<typeof MCP_INPUTS.forget>, runtime) => {
      // Opens with the model server down too, so that a queued fact can be withdrawn.
      const memory = await runtime.memory({ allowWithoutEmbeddings: true, queueWhenDown: true });
      const result = await memory.service.forget(scope, args.target);
      if (!result.deleted && result.candidates.length === 0) {
        // Not a memory: it may be the queue id of a fact still waiting for the model server.
        const queued = await findPendingMemory(memory, scope, args.target).catch(() => null);
        if (queued) {
          const withdrawn = await forgetPendingMemory(memory, scope, queued.pendingId);
          return bounded({ user: config.user, withdrawn });
        }
      }
      if (!result.deleted) {
        const message =
          result.candidates.length > 0
            ? `"${args.target.slice(0, 80)}" matches more than one memory; give one of the ids.`
            : `No active memory of user ${config.user} matches "${args.target.slice(0, 80)}".`;
        throw new SqlrecallError('not_found', message, {
          details: {
            hint: result.candidates.map((m) => `${m.id.slice(0, 8)} ${m.text}`).join('; ') || undefined,
          },
        });
      }
      return bounded({ user: config.user, deleted: brief(memoryView(result.deleted, userTimeZone())) });
    }),
  );

  server.registerTool(
    'show_memory',
    {
      title: 'Where a memory came from',
      description:
        `One of user ${config.user}'s memories with its provenance: taught in which conversation, when ` +
        'and in which words (or added by hand, imported, a confirmed answer), what it replaced or ' +
        'what replaced it, its history and when an answer last applied it.',
      inputSchema: MCP_INPUTS.show_memory,
      annotations: { readOnlyHint: true, openWorldHint: false },
    },
    guarded('show_memory', async (args: z.infer<typeof MCP_INPUTS.show_memory>, runtime) => {
      const memory = await runtime.memory({ allowWithoutEmbeddings: true, queueWhenDown: true });
      const given = args.id.toLowerCase();
      const notFound = () =>
        new SqlrecallError('not_found', `No memory of user ${config.user} has the id ${given.slice(0, 64)}.`);
      // A prefix is resolved among this user's memories only (another user's id is "not found").
      const id = await resolveMemoryId(memory, scope, given).catch((error: unknown) => {
        if (error instanceof SqlrecallError && error.code === 'not_found') return null;
        throw error;
      });
      if (id === null) {
        // Not a memory of this user: the queue id of one of their facts still waiting, else unknown.
        const queued = await findPendingMemory(memory, scope, given);
        if (!queued) throw notFound();
        return bounded({ user: config.user, pending: queued });
      }
      const provenance = await showMemory(memory, scope, id, userTimeZone());
      if (!provenance) throw notFound();
      return bounded({ user: config.user, ...provenance });
    }),
  );

  server.registerTool(
    'audit_memory',
    {
      title: 'Find credentials in memory',
      description:
        `Lists user ${config.user}'s stored memories (any status) and history entries that hold a ` +
        'credential (password, API key, token, private key), masked; with delete: true removes them for ' +
        "good. Only this user's memories are read.",
      inputSchema: MCP_INPUTS.audit_memory,
      annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    },
    guarded('audit_memory', async (args: z.infer<typeof MCP_INPUTS.audit_memory>, runtime) => {
      const memory = await runtime.memory({ allowWithoutEmbeddings: true });
      const audit = await auditMemories(memory, scope, { remove: args.delete === true });
      return bounded({ user: config.user, found: audit.found, removed: audit.removed });
    }),
  );

  // Resources: the whole catalog, and one per table.
  const readForResource = (table?: string) =>
    lease.use((runtime) =>
      resourceRead(
        async () =>
          readSchema(runtime, { policy: await policyOf(runtime), ...(table !== undefined ? { table } : {}) }),
        log,
      ),
    );
  server.registerResource(
    'schema',
    'schema://tables',
    { title: 'Database schema', description: 'Every table as the model sees it', mimeType: 'text/plain' },
    async (uri): Promise<ReadResourceResult> => ({
      contents: [
        {
          uri: uri.href,
          mimeType: 'text/plain',
          text: boundedText(schemaText(await readForResource()), maxBytes),
        },
      ],
    }),
  );
  server.registerResource(
    'table',
    new ResourceTemplate('schema://tables/{table}', {
      list: async () => {
        const schema = await readForResource();
        return {
          resources: schema.tables.map((t) => ({
            uri: `schema://tables/${encodeURIComponent(`${t.schema}.${t.name}`)}`,
            name: `${t.schema}.${t.name}`,
            description: t.comment ?? `${t.kind} ${t.schema}.${t.name}`,
            mimeType: 'text/plain',
          })),
        };
      },
    }),
    {
      title: 'One table',
      description: 'One table: columns, types, keys and comments',
      mimeType: 'text/plain',
    },
    async (uri, variables): Promise<ReadResourceResult> => {
      const name = decodeURIComponent(String(variables.table ?? ''));
      return {
        contents: [
          {
            uri: uri.href,
            mimeType: 'text/plain',
            text: boundedText(schemaText(await readForResource(name)), maxBytes),
          },
        ],
      };
    },
  );

  return server;
}

/** The fields of a memory a client needs. */
function brief(m: MemoryView) {
  return {
    id: m.id,
    kind: m.kind,
    text: m.text,
    sql: m.sql,
    status: m.status,
    expiresAt: m.expiresAt,
    expiresOn: m.expiresOn,
  };
}

/** Resource reads fail with an McpError whose message carries the product's code and message. */
async function resourceRead<T>(read: () => Promise<T>, log: (message: string) => void): Promise<T> {
  try {
    return await read();
  } catch (error) {
    const err = toSqlrecallError(error);
    log(`mcp: resource read failed: ${err.code}: ${redactSecrets(err.message)}`);
    throw new Error(`${err.code}: ${redactSecrets(err.message)}`);
  }
}
