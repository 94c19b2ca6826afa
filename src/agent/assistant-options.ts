/**
 * What an `Assistant` is built from (its ports and limits) and what one message to it
 * carries. Kept apart from the class so the pipeline's parts can name them without importing it.
 */

import type { StatementListener } from '../core/audit.js';
import type { ChatModel, DatabaseConnector, EmbeddingModel } from '../core/ports.js';
import type { Schema } from '../core/schema.js';
import type { EffectivePolicy } from '../policy/types.js';
import type { ContextPlanner } from './context.js';
import type { ValueHintSource } from './empty-check.js';
import type { ExampleReuseOptions } from './example-reuse.js';
import type { ExampleMatchOptions } from './example-similarity.js';
import type { ExampleSource } from './fallback.js';
import type { PreferenceSource } from './fallback-preferences.js';
import type { MemoryHook } from './memory-hook.js';

/** Dependencies and limits of an `Assistant` (`assistant.ts`). */
export interface AssistantOptions {
  chat: ChatModel;
  /**
   * How to start the configured model server, for "this question needs the model" errors; default
   * Ollama's (`ollama serve`). The runtime passes the OpenAI-compatible server's address instead.
   */
  modelStartHint?: string;
  db: DatabaseConnector;
  /**
   * The database as one user may read it (under that user's data policy): every statement of that
   * user's questions runs on it, whoever wrote it. Default: `db` for every user.
   */
  databaseFor?: (user: string, options: { team?: string }) => Promise<DatabaseConnector>;
  /** Catalog provider; called once and cached for the assistant's lifetime. */
  loadSchema: () => Promise<Schema>;
  /** Row cap per statement (default 1000). */
  maxRows?: number;
  /** Statement timeout in ms (default 30000). */
  statementTimeoutMs?: number;
  /** Byte budget per result (default: the connector's, 64 MiB). */
  maxResultBytes?: number;
  /** Repairs after a database error (default 2). */
  maxRepairs?: number;
  /** Most tokens for the SQL reply (default 1024) and for the answer (default 400). */
  sqlMaxTokens?: number;
  answerMaxTokens?: number;
  /**
   * Fallback clock for "today" in prompts, used only when the database cannot say its own
   * `current_date` (read once per session with its `TimeZone`); default `new Date()`.
   */
  now?: () => Date;
  /**
   * Sampled value hints per table for the empty-result check; default a bounded sampler over `db`
   * (`createValueSampler`: first 2,000 rows or TABLESAMPLE, never a full scan), cached per table.
   */
  valueHints?: ValueHintSource;
  /** Chooses the schema part of the prompt; default `wholeSchemaPlanner`. */
  planContext?: ContextPlanner;
  /** Allowlist mode (`--allow-tables`): the only relations a query may read. */
  allowTables?: readonly string[];
  /** Long-term memory and conversation context; without it every message is a plain question. */
  memory?: MemoryHook;
  /**
   * Saved examples for answers without the model; usually the memory store. Without it
   * only the rules answer when the model is down.
   */
  examples?: ExampleSource;
  /** Thresholds of example reuse (see `example-reuse.ts`). */
  reuse?: ExampleReuseOptions;
  /**
   * Standing preferences (usually the memory store): an example or rule answer that does not
   * already apply one that covers its tables is refused (see `fallback-preferences.ts`).
   */
  preferences?: PreferenceSource;
  /**
   * Embeds the question to find similar examples with the memory store's `search` (few-shot);
   * without it, or when it fails, examples are found by word similarity.
   */
  exampleEmbedder?: EmbeddingModel;
  /** Similarity floors of examples (see `example-similarity.ts`). */
  exampleMatch?: ExampleMatchOptions;
  /**
   * Few-shot: most examples in the SQL prompt (default 3; 0 turns it off) and
   * most tokens of their block (default 600, estimated; reserved from the schema's budget).
   */
  fewShotMax?: number;
  fewShotMaxTokens?: number;
  /** Answer from examples and rules when the model is unreachable (default true). */
  fallback?: boolean;
}

/** One question. */
export interface AskInput {
  /** User id (memory scope from the memory issue on). */
  user: string;
  message: string;
  signal?: AbortSignal;
  /** Skip the answer model call (e.g. `--no-answer`); the outcome's answer is then null. */
  skipAnswer?: boolean;
  /** The user's team, whose shared memories also apply. */
  team?: string;
  /** Conversation to continue (follow-ups see its recent turns); default a fresh one. */
  conversationId?: string;
  /** Memory ids (or id prefixes) not to apply to this message. */
  without?: string[];
  /** A plain-language "forget …" in the message may delete (`ask --yes`); default false: it asks first. */
  confirmDeletes?: boolean;
  /** Answer only from saved examples and rules, never calling the model (`ask --no-model`). */
  noModel?: boolean;
  /**
   * The user's IANA time zone, for days a message names ("until Friday"); default
   * `SQLRECALL_TZ`, else the process's zone (see `memory/expiry.ts`).
   */
  timeZone?: string;
  /**
   * The user's data policy: the prompt, schema linking, value hints and name suggestions see only
   * the relations and columns it lets the user read, value hints come from the rows the user may
   * see, and with `rowsToModel: false` (privacy mode) no value read from the database reaches the
   * model. Enforcing it on the statements that run is the database connector's job. Default:
   * nothing restricted.
   */
  policy?: EffectivePolicy;
  /** Told of every statement run or refused for this message (the audit trail). */
  onStatement?: StatementListener;
}
