/**
 * The interfaces between layers. `core` has no runtime dependencies; adapters (models, databases,
 * memory storage) implement these, services receive them.
 */
import type { Schema } from './schema.js';

// ---------------------------------------------------------------------------------------------
// Models

/** One chat message. */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** A request to a chat model. */
export interface ChatRequest {
  messages: ChatMessage[];
  /** Most tokens the model may produce (Ollama `num_predict`). Default chosen by the adapter. */
  maxTokens?: number;
  /** Structured output: a JSON schema object (Ollama `format`), or `'json'` for any JSON. */
  format?: 'json' | Record<string, unknown>;
  /** Short label of the pipeline step ("sql", "answer", …) for logs and scripted tests. */
  purpose?: string;
}

/** Per-call options of {@link ChatModel.stream}. */
export interface ChatStreamOptions {
  /** Aborting cancels the request; the iteration then throws the signal's reason. */
  signal?: AbortSignal;
}

/** Options of `generateText` (`core/chat.ts`): the stream's, plus callbacks for its pieces. */
export interface ChatOptions extends ChatStreamOptions {
  /** Called with each piece of text as it streams in. */
  onToken?: (text: string) => void;
  /**
   * Called with each piece of a thinking model's reasoning as it streams in (OpenAI-compatible
   * `reasoning_content`/`reasoning` deltas, Ollama `message.thinking`). Reasoning is never part of
   * `ChatResult.text`.
   */
  onThinking?: (text: string) => void;
}

/** A structured tool call of a reply (OpenAI `tool_calls`, Ollama `message.tool_calls`). */
export interface ChatToolCall {
  /** Function name as the model wrote it. */
  name: string;
  /** Its arguments as the model wrote them: JSON text, possibly invalid. */
  arguments: string;
}

/** Why generation stopped: `length` means the answer was cut by `maxTokens` or the context. */
export type FinishReason = 'stop' | 'length' | 'other';

/** The model's reply. */
export interface ChatResult {
  text: string;
  finishReason: FinishReason;
  usage: { promptTokens: number; completionTokens: number };
  /** Wall-clock time of the call in milliseconds. */
  durationMs: number;
  /** A thinking model's reasoning, kept apart from `text`: never parsed as SQL or shown as the answer. */
  thinking?: string;
  /** Structured tool calls of the reply, in order (absent when there were none). */
  toolCalls?: ChatToolCall[];
}

/**
 * One part of a streamed reply, in order: pieces of the answer text, of a thinking model's
 * reasoning (never part of the answer), of structured tool calls (`index` tells calls apart; `name`
 * and `arguments` are pieces to append), then exactly one `finish`, last, once the server said the
 * reply is complete.
 */
export type ChatPart =
  | { type: 'text-delta'; text: string }
  | { type: 'reasoning-delta'; text: string }
  | { type: 'tool-call-delta'; index: number; name: string; arguments: string }
  | {
      type: 'finish';
      finishReason: FinishReason;
      usage: { promptTokens: number; completionTokens: number };
    };

/** A chat model (Ollama, an OpenAI-compatible server, or the scripted server in tests). */
export interface ChatModel {
  /** Model name as the server knows it, e.g. `qwen2.5-coder:7b`. */
  readonly id: string;
  /**
   * Streams one reply as {@link ChatPart}s; exactly one remote call per reply (an adapter may repeat
   * a request the server refused for a field it does not take). The last part is `finish`; a reply
   * the server did not complete throws from the iteration instead, and stopping the iteration early
   * cancels the request. `generateText` (`core/chat.ts`) collects a stream into a {@link ChatResult}.
   * @throws SqlrecallError `model_unreachable`, `model_missing`, `model_output`
   */
  stream(request: ChatRequest, options?: ChatStreamOptions): AsyncIterable<ChatPart>;
}

/** An embedding model. */
export interface EmbeddingModel {
  readonly id: string;
  /** Vector length; probed from the server, never hard-coded. */
  dimensions(): Promise<number>;
  /** Embeds texts in one batch; one vector per text, in order. */
  embed(texts: string[], options?: { signal?: AbortSignal }): Promise<number[][]>;
}

// ---------------------------------------------------------------------------------------------
// Databases

/** A JSON-safe cell value: bigint and numeric as strings, dates as ISO strings, bytea summarised. */
export type CellValue = string | number | boolean | null | CellValue[] | { [key: string]: CellValue };

/** Column of a result set. */
export interface ResultColumn {
  name: string;
  /** Type name as the server reports it (e.g. `int8`, `numeric`, `text`, `timestamptz`). */
  type: string;
}

/** Result of one read-only statement. */
export interface QueryResult {
  columns: ResultColumn[];
  rows: CellValue[][];
  /** Rows returned (never more than the cap). */
  rowCount: number;
  /** True when the statement had more rows than `maxRows`, or its rows exceeded `maxBytes`. */
  truncated: boolean;
  /** Why the rows stop early (set only when `truncated`): the row cap or the byte budget. */
  truncatedReason?: 'max_rows' | 'max_bytes';
  durationMs: number;
  /**
   * What a data policy enforced on the statement (`rows of public.orders (team sales)`), set by
   * the policy decorator when it changed the statement; absent otherwise.
   */
  policies?: readonly string[];
}

/** Options of {@link DatabaseConnector.execute}. */
export interface ExecuteOptions {
  /** Row cap; one more row is fetched to detect truncation. */
  maxRows: number;
  /** Server-side statement timeout in milliseconds (not enforced by PGlite). */
  timeoutMs: number;
  /**
   * Byte budget of the result: the sum of the UTF-8 lengths of every value's text form, counted
   * while rows stream from the cursor. Past it the result is truncated (`truncatedReason:
   * 'max_bytes'`), or refused with `result_too_large` when not even the first row fits.
   * Default {@link DEFAULT_MAX_RESULT_BYTES} (64 MiB).
   */
  maxBytes?: number;
  /** Aborting cancels the running statement on the server (pg_cancel_backend). */
  signal?: AbortSignal;
  /**
   * Bind values of `$1`, `$2`, … in the statement, as text (the data policy's attribute values;
   * see `databases/policed.ts`). Default none.
   */
  params?: readonly string[];
}

/** Default byte budget of one result (64 MiB, sized for a laptop). */
export const DEFAULT_MAX_RESULT_BYTES = 64 * 1024 * 1024;

/** Options of {@link DatabaseConnector.introspect}. */
export interface IntrospectOptions {
  /** Schemas to read; default: every non-system schema. */
  schemas?: string[];
}

/**
 * The SQL dialects sqlrecall has connectors for: PostgreSQL (server and PGlite), MySQL/MariaDB and
 * DuckDB and SQLite. A new engine adds its name here, so code that switches on the dialect is checked for it.
 */
export type DatabaseDialectName = 'postgres' | 'mysql' | 'sqlite' | 'duckdb';

/** A connection to the user's database. */
export interface DatabaseConnector {
  /** The engine's SQL dialect. */
  readonly dialect: DatabaseDialectName;
  /** The connection target with any password masked, safe to print. */
  readonly displayName: string;
  /** Checks that the database answers. @throws SqlrecallError `db_unreachable` */
  ping(): Promise<void>;
  /** Reads the catalog in a fixed number of queries. @throws SqlrecallError `db_unreachable`, `db_query` */
  introspect(options?: IntrospectOptions): Promise<Schema>;
  /**
   * Runs one statement that the guard accepted, in a READ ONLY transaction with a statement timeout
   * and a row cap. @throws SqlrecallError `db_query`, `db_timeout`, `db_unreachable`
   */
  execute(sql: string, options: ExecuteOptions): Promise<QueryResult>;
  /**
   * Runs our own fixed `statements` (the SQL guard's server-side analysis: `CREATE TEMP VIEW` of a
   * guarded statement, then catalog reads) one after another in ONE transaction that is always
   * rolled back, with the parsing settings of `execute` forced; returns the last statement's rows,
   * every value as text (null for SQL NULL). The transaction is READ WRITE (a temporary view
   * needs it) but nothing in it is executed beyond the statements given. Optional: a connector
   * without it, or one whose server refuses it (a hot standby, a role without TEMP), leaves the
   * guard to its conservative catalog check.
   * @throws SqlrecallError `db_query`, `db_timeout`, `db_unreachable`
   */
  probe?(
    statements: readonly string[],
    options: { timeoutMs: number },
  ): Promise<Record<string, string | null>[]>;
  close(): Promise<void>;
}
