/**
 * What the HTTP API needs from the rest of the system, as one small interface: built from a
 * {@link Runtime} by `serve` ({@link depsFromRuntime}), or from test doubles. The server keeps no
 * state that matters between requests: memories, conversations and
 * tokens live in the memory store's database.
 */
import type { Assistant } from '../agent/assistant.js';
import type { MemoryApp } from '../app/memory.js';
import type { PolicyExplanation } from '../app/policy.js';
import type { SqlRuntime } from '../app/run-sql.js';
import type { CatalogSource } from '../app/schema.js';
import type { SchemaContextRuntime } from '../app/schema-context.js';
import type { Principal, UserDirectory } from '../app/users.js';
import type { AuditContext, AuditStatus } from '../audit/log.js';
import type { AuditQuery } from '../audit/store.js';
import type { AuditRecord, StatementListener } from '../core/audit.js';
import type { EffectivePolicy } from '../policy/types.js';

/** The audit trail as the routes use it: record per request, list for administrators. */
export interface ServerAudit {
  /** The listener recording the statements of one request. */
  listener(context: AuditContext): StatementListener;
  /** Stored records, newest first (records still in a journal are moved first). */
  list(query: AuditQuery): Promise<AuditRecord[]>;
  /** This process's audit write counters. */
  status(): AuditStatus;
}

/** `GET /api/policy`: the policy file's status and, when asked, one user's effective policy. */
export interface PolicyStatusReport {
  /** Absolute path of the policy file, or null when none is configured. */
  file: string | null;
  /** See `PolicyStatus.state`; `none` without a policy file. */
  state: 'none' | 'unloaded' | 'valid' | 'invalid-kept' | 'invalid';
  /** True when the file on disk is the version in force (and when there is no file). */
  valid: boolean;
  /** When the version in force was loaded (ISO 8601), or null. */
  loadedAt: string | null;
  /** When the file on disk was last found invalid, while it is; else null. */
  failedAt: string | null;
  /** The problems of the file on disk, while it is invalid. */
  problems: { path: string; message: string }[];
  /** Users and teams of the version in force, or null. */
  users: number | null;
  teams: number | null;
  /** With a user asked about: what they may read (`policy explain`), null while no policy is in force. */
  effective?: PolicyExplanation | null;
}

/** The memory the routes hand to the use cases of `src/app` (the routes never read the store). */
export type ServerMemory = MemoryApp;

/**
 * The catalog and schema linking behind `GET /api/schema` and `POST /api/schema/context`: the
 * question pipeline's catalog (kept, renewed by `refresh`) and linking wired as the pipeline's.
 */
export type ServerSchema = CatalogSource & SchemaContextRuntime;

/** One component's health. */
export interface ComponentHealth {
  ok: boolean;
  /** One sentence when not ok (never a secret). */
  message?: string;
}

/** `GET /api/health`. */
export interface HealthReport {
  ok: boolean;
  model: ComponentHealth;
  database: ComponentHealth;
  memory: ComponentHealth;
  /**
   * The policy file, when one is configured: not ok while the file on disk is invalid (the last
   * valid version stays in force; the problems are in `doctor` and `policy check`, not here).
   */
  policy?: ComponentHealth;
}

/** `GET /api/settings`: what the UI shows (credentials masked). */
export interface ServerSettings {
  model: string;
  embedModel: string;
  /** The configured model backend: Ollama's own API or an OpenAI-compatible server. */
  provider: 'ollama' | 'openai';
  /** That backend's address, with any password in it masked (an API key is never shown). */
  providerUrl: string;
  /** The database, with its password masked (or null when none is configured). */
  database: string | null;
  /** The memory store, masked. */
  memoryStore: string;
  maxRows: number;
  memoryEnabled: boolean;
}

/** How requests are authenticated. */
export type AuthMode =
  /** Single-user local mode: every request is this user (no login); only loopback Host headers. */
  | { mode: 'local'; user: string; team?: string }
  /** Multi-user mode: `Authorization: Bearer <token>` from `sqlrecall users add NAME`. */
  | { mode: 'users'; users: UserDirectory };

/** One access-log entry (never headers, query strings or bodies: tokens stay out of logs). */
export interface AccessLogEntry {
  method: string;
  path: string;
  status: number;
  durationMs: number;
  user: string | null;
  /** Error code of a failed request. */
  code?: string;
}

/** Dependencies of {@link createApp}. */
export interface ServerDeps {
  auth: AuthMode;
  assistant(): Promise<Assistant>;
  /** The user's database, catalog and limits for `POST /api/sql` (see `app/run-sql.ts`). */
  sql: SqlRuntime;
  memory(): Promise<ServerMemory>;
  /** The catalog and schema linking (`GET /api/schema`, `POST /api/schema/context`). */
  schema: ServerSchema;
  health(): Promise<HealthReport>;
  settings(): ServerSettings;
  /**
   * The data policy of a request's principal (what they may see of the schema, privacy mode);
   * default nothing restricted.
   */
  policyFor?(principal: Principal): Promise<EffectivePolicy>;
  /**
   * The policy file's status, and `user`'s effective policy when given (`GET /api/policy`);
   * absent: that route answers 404.
   */
  policyStatus?(user?: string): Promise<PolicyStatusReport>;
  /** The audit trail; absent: nothing is recorded and `GET /api/audit` answers 404. */
  audit?: ServerAudit;
  /** Access log sink; default none. */
  log?: (entry: AccessLogEntry) => void;
  /** Folder of the built web UI (`dist/web`); absent or missing: API only. */
  webRoot?: string;
  /** Extra Host header names accepted in local mode (besides localhost, 127.0.0.1, [::1]). */
  allowedHosts?: string[];
  /**
   * Most `POST /api/sql` and `POST /api/ask` requests one user may have running at once (429
   * past it); default `DEFAULT_MAX_REQUESTS_PER_USER` (4, `concurrency.ts`).
   */
  maxRequestsPerUser?: number;
}
